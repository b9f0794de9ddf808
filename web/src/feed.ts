// The WebSocket feed: frame messages in, commands out; reconnects when the server goes.
import { decodeMessage, encodeCommand, type Command, type FrameMessage } from "./protocol";

export interface FeedHandlers {
  onFrame: (m: FrameMessage) => void;
  onError: (message: string) => void;
  onConnection: (open: boolean) => void;
}

export class FeedClient {
  private ws: WebSocket | null = null;
  private closed = false;
  private retry = 0;

  constructor(
    readonly url: string,
    readonly handlers: FeedHandlers,
  ) {
    this.connect();
  }

  private connect(): void {
    const ws = new WebSocket(this.url);
    ws.binaryType = "arraybuffer";
    ws.onopen = () => this.handlers.onConnection(true);
    ws.onmessage = (e) => {
      if (!(e.data instanceof ArrayBuffer)) return;
      const m = decodeMessage(e.data);
      if ("error" in m) this.handlers.onError(m.error);
      else this.handlers.onFrame(m);
    };
    ws.onclose = () => {
      this.handlers.onConnection(false);
      if (!this.closed) this.retry = window.setTimeout(() => this.connect(), 1000);
    };
    this.ws = ws;
  }

  send(c: Command): void {
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(encodeCommand(c));
  }

  close(): void {
    this.closed = true;
    window.clearTimeout(this.retry);
    this.ws?.close();
  }
}

/** The feed's address beside the page's (ws: or wss:). */
export function feedUrl(location: Location): string {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${location.host}/feed`;
}
