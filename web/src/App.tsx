// The page: the feed, the Rendering component, the controls, the HUD and the camera panel.
import { useEffect, useMemo, useRef, useState } from "react";
import { FeedClient, feedUrl } from "./feed";
import type { CameraFrame, EgoSensor, FrameMessage, Info, LaneSensor, Sensors, Status } from "./protocol";
import { Rendering, type CameraMode, type HoverInfo, type Overlays } from "./Rendering";
import { WorldStore, type WorldSensor } from "./world";

interface View {
  frame: number;
  time: number;
  key: boolean;
  ego: EgoSensor | null;
  world: WorldSensor;
  lanes: LaneSensor | null;
  sensors: Sensors;
  status: Status;
  bytes: number;
}

const SPEEDS: (number | "max")[] = [0.25, 0.5, 1, 2, 4, 8, 16, "max"];
const EMPTY_WORLD: WorldSensor = { frame: -1, time: 0, objects: new Map(), scripts: [] };

type Hook = Record<string, unknown> & { frame?: number; time?: number };
const hook = (): Hook => {
  const w = window as unknown as { __roadsim?: Hook };
  return (w.__roadsim ??= {});
};

export function App() {
  const params = useMemo(() => new URLSearchParams(window.location.search), []);
  const seedMode = params.get("renderer") === "seed";
  const [view, setView] = useState<View | null>(null);
  const [info, setInfo] = useState<Info | null>(null);
  const [connected, setConnected] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [cameraMode, setCameraMode] = useState<CameraMode>((params.get("camera") as CameraMode) ?? "follow");
  const [overlays, setOverlays] = useState<Overlays>({ lidar: true, rays: true, paths: true, driver: true });
  const [showCameras, setShowCameras] = useState(true);
  const [hover, setHover] = useState<HoverInfo | null>(null);
  const [scrub, setScrub] = useState<number | null>(null);
  const client = useRef<FeedClient | null>(null);

  useEffect(() => {
    const store = new WorldStore();
    let lanes: LaneSensor | null = null;
    const onFrame = (m: FrameMessage) => {
      if (m.info) setInfo(m.info);
      store.apply(m.worldSensor, m.key);
      if (m.laneSensor) lanes = m.laneSensor;
      const h = hook();
      h.frame = m.frame;
      h.time = m.time;
      h.bytes = m.bytes;
      h.messages = ((h.messages as number) ?? 0) + 1;
      setView({
        frame: m.frame,
        time: m.time,
        key: m.key,
        ego: m.egoSensor,
        world: store.sensor(m.frame, m.time),
        lanes,
        sensors: m.sensors,
        status: m.status,
        bytes: m.bytes,
      });
    };
    const c = new FeedClient(feedUrl(window.location), {
      onFrame,
      onError: (e) => setError(e),
      onConnection: setConnected,
    });
    client.current = c;
    hook().send = (cmd: Parameters<FeedClient["send"]>[0]) => c.send(cmd);
    return () => c.close();
  }, []);

  const status = view?.status;
  const live = status?.mode === "live";
  const replay = status?.mode === "replay";
  const controllable = live || replay;
  const send = (c: Parameters<FeedClient["send"]>[0]) => client.current?.send(c);
  const ego = view?.ego;

  return (
    <div className="app">
      <Rendering
        egoSensor={view?.ego ?? null}
        worldSensor={view?.world ?? EMPTY_WORLD}
        laneSensor={view?.lanes ?? null}
        keyFrame={view?.key ?? false}
        sensors={view?.sensors}
        models={info?.models}
        kinds={info?.kinds}
        cameraMode={cameraMode}
        overlays={overlays}
        seedMode={seedMode}
        draw={(params.get("draw") as "instanced" | "batched" | null) ?? undefined}
        far={(params.get("far") as "roofs" | "points" | null) ?? undefined}
        antialias={params.get("aa") !== "0"}
        pixelRatio={params.has("pixelRatio") ? Number(params.get("pixelRatio")) : undefined}
        onHover={setHover}
      />
      <div className="hud" data-testid="hud">
        <div className="title">
          {info ? `${info.scenario || "scenario"} on ${info.map}` : "roadsim"}
          <span className={connected ? "dot on" : "dot"} title={connected ? "connected" : "not connected"} />
        </div>
        <div>
          t <b data-testid="sim-time">{view ? view.time.toFixed(2) : "-"}</b> s · frame {view?.frame ?? "-"}
        </div>
        <div>
          real-time factor <b data-testid="rtf">{status?.rtf !== undefined ? status.rtf.toFixed(2) : "-"}</b>
          {status?.playing === false ? " (paused)" : ""}
        </div>
        <div>
          ego <b data-testid="ego-speed">{ego ? `${(ego.speed * 3.6).toFixed(1)} km/h` : "-"}</b>
          {ego ? ` (${ego.speed.toFixed(1)} m/s)` : ""}
        </div>
        <div>
          objects {view?.world.objects.size ?? 0} · {view ? (view.bytes / 1024).toFixed(1) : "-"} kB/frame
        </div>
        {status?.error && <div className="error">{status.error}</div>}
        {error && (
          <div className="error" onClick={() => setError(null)}>
            {error}
          </div>
        )}
      </div>

      <div className="controls">
        <button disabled={!controllable} data-testid="play" onClick={() => send(status?.playing ? { cmd: "pause" } : { cmd: "play" })}>
          {status?.playing ? "❚❚ pause" : "▶ play"}
        </button>
        <button disabled={!controllable} data-testid="step" onClick={() => send({ cmd: "step" })}>
          step
        </button>
        <label>
          speed{" "}
          <select
            disabled={!controllable}
            value={String(status?.speed ?? 1)}
            onChange={(e) => send({ cmd: "speed", value: e.target.value === "max" ? "max" : Number(e.target.value) })}
          >
            {SPEEDS.map((s) => (
              <option key={String(s)} value={String(s)}>
                {s === "max" ? "max" : `${s}x`}
              </option>
            ))}
          </select>
        </label>
        <label>
          camera{" "}
          <select data-testid="camera" value={cameraMode} onChange={(e) => setCameraMode(e.target.value as CameraMode)}>
            <option value="follow">follow ego</option>
            <option value="orbit">orbit</option>
            <option value="top">top-down</option>
          </select>
        </label>
        {(Object.keys(overlays) as (keyof Overlays)[]).map((k) => (
          <label key={k}>
            <input type="checkbox" checked={overlays[k]} onChange={(e) => setOverlays({ ...overlays, [k]: e.target.checked })} />
            {{ lidar: "lidar", rays: "ray traces", paths: "paths & radii", driver: "front/rear" }[k]}
          </label>
        ))}
        <label>
          <input type="checkbox" checked={showCameras} onChange={(e) => setShowCameras(e.target.checked)} />
          cameras
        </label>
        {live &&
          Object.entries(status?.sensors ?? {}).map(([name, active]) => (
            <label key={name} title="switch the sensor on or off in the simulation">
              <input type="checkbox" checked={active} onChange={(e) => send({ cmd: "sensor", name, active: e.target.checked })} />
              sensor {name} on
            </label>
          ))}
      </div>

      {replay && status?.first !== undefined && status.last !== undefined && (
        <div className="timeline">
          <input
            type="range"
            data-testid="timeline"
            min={status.first}
            max={status.last}
            value={scrub ?? view?.frame ?? status.first}
            onChange={(e) => {
              setScrub(Number(e.target.value));
              send({ cmd: "seek", frame: Number(e.target.value) });
            }}
            onPointerUp={() => setScrub(null)}
            onKeyUp={() => setScrub(null)}
          />
          <span>
            {view?.frame ?? "-"} / {status.last}
          </span>
        </div>
      )}

      {hover && (
        <div className="tooltip" data-testid="tooltip" style={{ left: hover.x + 14, top: hover.y + 14 }}>
          id {hover.id} · {hover.kind} ({hover.model}) · {hover.speed.toFixed(1)} m/s
        </div>
      )}

      {showCameras && <CameraPanel cameras={view?.sensors.camera} />}
    </div>
  );
}

function CameraPanel({ cameras }: { cameras?: CameraFrame[] }) {
  const [urls, setUrls] = useState<Record<string, string>>({});
  useEffect(() => {
    if (!cameras?.length) return;
    const next: Record<string, string> = {};
    for (const c of cameras)
      for (const k of ["color", "depth", "segmentation"] as const)
        next[`${c.name}/${k}`] = URL.createObjectURL(new Blob([c[k] as BlobPart], { type: "image/jpeg" }));
    setUrls((old) => {
      for (const u of Object.values(old)) URL.revokeObjectURL(u);
      return next;
    });
  }, [cameras]);
  const names = [...new Set(Object.keys(urls).map((k) => k.split("/")[0]))];
  if (!names.length) return null;
  return (
    <div className="cameras" data-testid="cameras">
      {names.map((n) => (
        <div key={n} className="camera">
          <div>{n}</div>
          {(["color", "depth", "segmentation"] as const).map((k) => (
            <img key={k} src={urls[`${n}/${k}`]} alt={`${n} ${k}`} title={k} />
          ))}
        </div>
      ))}
    </div>
  );
}
