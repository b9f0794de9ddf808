"""The viewer's HTTP and WebSocket server (Starlette on Uvicorn), on its own thread.

Routes:

- ``/``: the page (``index.html`` of the bundle that ``npm run build`` writes into
  ``roadsim/viewer/static/``), ``/assets/...`` its scripts;
- ``/feed``: a WebSocket; the server sends binary frame messages (`roadsim.viewer.sink`),
  the page sends msgpack commands (`roadsim.viewer.session.parse_command`); a bad one is
  answered with ``{"error": message}`` and changes nothing;
- ``/status``: the session's status as JSON.

The server binds 127.0.0.1 unless told otherwise; port 0 picks a free port (`ViewerServer.url`
says which).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
from pathlib import Path
from typing import Any

import msgpack

from roadsim.errors import ArgumentError, RoadsimError
from roadsim.viewer.session import Session

__all__ = ["STATIC_DIR", "ViewerError", "ViewerServer", "static_dir"]

#: Where the built bundle lives (gitignored; written at install time).
STATIC_DIR = Path(__file__).parent / "static"


class ViewerError(RoadsimError):
    """The viewer cannot start (its bundle is not built, its port is taken)."""


def static_dir() -> Path:
    """The built web bundle.

    Raises:
        ViewerError: If it has not been built.
    """
    if not (STATIC_DIR / "index.html").is_file():
        raise ViewerError(
            f"the web viewer is not built ({STATIC_DIR / 'index.html'} is missing): run "
            "`make web` (npm ci and npm run build in web/; needs Node.js 20 and npm)"
        )
    return STATIC_DIR


def _app(session: Session, static: Path) -> Any:
    from starlette.applications import Starlette
    from starlette.responses import FileResponse, JSONResponse
    from starlette.routing import Mount, Route, WebSocketRoute
    from starlette.staticfiles import StaticFiles
    from starlette.websockets import WebSocket, WebSocketDisconnect

    async def index(request: Any) -> FileResponse:
        return FileResponse(static / "index.html", headers={"Cache-Control": "no-cache"})

    async def status(request: Any) -> JSONResponse:
        return JSONResponse(session.status())

    async def feed(ws: WebSocket) -> None:
        await ws.accept()
        loop = asyncio.get_running_loop()
        ready = asyncio.Event()

        def wake() -> None:  # called from the session's thread
            loop.call_soon_threadsafe(ready.set)

        sub = session.sink.subscribe(wake)

        async def send() -> None:
            while True:
                await ready.wait()
                ready.clear()
                for data in session.sink.take(sub):
                    await ws.send_bytes(data)

        async def receive() -> None:
            while True:
                data = await ws.receive_bytes()
                try:
                    session.command(msgpack.unpackb(data, raw=False))
                except (ArgumentError, ValueError, msgpack.UnpackException) as exc:
                    await ws.send_bytes(msgpack.packb({"error": str(exc)}))

        sender = asyncio.create_task(send())
        try:
            await receive()
        except (WebSocketDisconnect, KeyError, RuntimeError):
            pass  # the page went away, or sent text where bytes were expected
        finally:
            sender.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await sender
            session.sink.unsubscribe(sub)

    return Starlette(
        routes=[
            Route("/", index),
            Route("/status", status),
            WebSocketRoute("/feed", feed),
            Mount("/", StaticFiles(directory=static)),
        ]
    )


class ViewerServer:
    """Serves a session's viewer until `close`.

    Args:
        session: What feeds the viewer (`roadsim.viewer.session`).
        host: The address to bind (default 127.0.0.1: this machine only).
        port: The port (0: any free one).

    Raises:
        ViewerError: If the bundle is not built or the port cannot be bound.
    """

    def __init__(self, session: Session, *, host: str = "127.0.0.1", port: int = 8765) -> None:
        import uvicorn

        if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
            raise ArgumentError(f"port: expected a number from 0 to 65535, got {port!r}")
        self.session = session
        static = static_dir()
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self._socket = socket.socket(family, socket.SOCK_STREAM)
        try:
            self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self._socket.bind((host, port))
        except OSError as exc:
            self._socket.close()
            raise ViewerError(
                f"cannot serve the viewer on {host}:{port}: {exc.strerror or exc} "
                "(choose another with --port, or --port 0 for any free one)"
            ) from None
        self.host = host
        self.port = int(self._socket.getsockname()[1])
        config = uvicorn.Config(
            _app(session, static), log_level="warning", ws="websockets-sansio", lifespan="off"
        )
        self._server = uvicorn.Server(config)
        self._thread: threading.Thread | None = None
        #: What stopped the server, if it stopped on its own.
        self.error: Exception | None = None

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/"

    def start(self) -> ViewerServer:
        """Starts the session and serves on a thread; returns once the port accepts."""
        self.session.start()
        self._thread = threading.Thread(target=self._serve, daemon=True, name="roadsim-viewer-http")
        self._thread.start()
        while not self._server.started:
            if not self._thread.is_alive():
                raise ViewerError(f"the viewer's server on {self.url} stopped as it started")
            threading.Event().wait(0.01)
        return self

    def _serve(self) -> None:
        try:
            self._server.run(sockets=[self._socket])
        except Exception as exc:
            # Uvicorn's WebSocket shutdown can race a page that is closing its socket
            # (websockets' InvalidState): harmless once told to exit, kept otherwise.
            if not self._server.should_exit:
                self.error = exc

    def wait(self) -> None:
        """Blocks until the server stops (Ctrl-C in the main thread ends the wait)."""
        while self._thread is not None and self._thread.is_alive():
            self._thread.join(0.2)

    def close(self) -> None:
        """Stops serving and stops the session."""
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10.0)
        self._socket.close()
        self.session.stop()

    def __enter__(self) -> ViewerServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
