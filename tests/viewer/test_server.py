"""The server on a real socket on 127.0.0.1: the feed, commands, status, and its errors."""

from __future__ import annotations

import json
import socket
import subprocess
import urllib.request
from collections.abc import Iterator
from typing import Any

import msgpack
import pytest
from websockets.sync.client import connect

import roadsim
from roadsim.server import Client
from roadsim.viewer import LiveSession, ViewerError, ViewerServer, attach_viewer
from roadsim.viewer import server as server_module
from tests.server.processes import free_port_pair, interrupt, python_child
from tests.viewer.helpers import crossing


@pytest.fixture(scope="module")
def viewer() -> Iterator[ViewerServer]:
    session = LiveSession(roadsim.Simulation(crossing()), paused=True)
    with ViewerServer(session, port=0) as server:
        yield server


def frames(ws: Any, count: int) -> list[dict[str, Any]]:
    out = []
    while len(out) < count:
        msg = msgpack.unpackb(ws.recv(timeout=10))
        out.append(msg)
    return out


def test_a_client_gets_a_key_frame_then_steps(viewer: ViewerServer) -> None:
    with connect(viewer.url.replace("http", "ws") + "feed") as ws:
        (key,) = frames(ws, 1)
        assert key["key"] and key["status"]["mode"] == "live" and not key["status"]["playing"]
        ws.send(msgpack.packb({"cmd": "step", "count": 2}))
        a, b = frames(ws, 2)
        assert (a["frame"], b["frame"]) == (key["frame"] + 1, key["frame"] + 2)
        assert not a["key"] and a["laneSensor"] is None


def test_a_bad_command_is_answered_and_changes_nothing(viewer: ViewerServer) -> None:
    with connect(viewer.url.replace("http", "ws") + "feed") as ws:
        frames(ws, 1)
        ws.send(msgpack.packb({"cmd": "speed", "value": "fast"}))
        (answer,) = frames(ws, 1)
        assert "speed" in answer["error"]
        ws.send(b"\xc1 not msgpack")
        assert "error" in frames(ws, 1)[0]
        ws.send("text, not bytes")  # the server ends this connection, nothing else
    status = json.loads(urllib.request.urlopen(viewer.url + "status", timeout=5).read())
    assert status["mode"] == "live" and status["speed"] == 1.0


def test_the_page_and_its_assets_are_served(viewer: ViewerServer) -> None:
    page = urllib.request.urlopen(viewer.url, timeout=5).read().decode()
    assert '<div id="root">' in page
    script = page.split('src="./', 1)[1].split('"', 1)[0]
    assert urllib.request.urlopen(viewer.url + script, timeout=5).status == 200


def test_a_taken_port_is_a_clear_error(viewer: ViewerServer) -> None:
    session = LiveSession(roadsim.Simulation(crossing()), paused=True)
    with pytest.raises(ViewerError, match=f"127.0.0.1:{viewer.port}.*--port"):
        ViewerServer(session, port=viewer.port)


def test_a_missing_bundle_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    monkeypatch.setattr(server_module, "STATIC_DIR", tmp_path)
    session = LiveSession(roadsim.Simulation(crossing()), paused=True)
    with pytest.raises(ViewerError, match="make web"):
        ViewerServer(session, port=0)


def test_attach_to_a_simulation_someone_else_ticks() -> None:
    sim = roadsim.Simulation(crossing())
    viewer = attach_viewer(sim)
    try:
        with connect(viewer.url.replace("http", "ws") + "feed") as ws:
            (key,) = frames(ws, 1)
            assert key["key"] and key["frame"] == 0 and key["status"]["mode"] == "attached"
            sim.step()
            (delta,) = frames(ws, 1)
            assert delta["frame"] == 1
            ws.send(msgpack.packb({"cmd": "play"}))
            assert "attached" in frames(ws, 1)[0]["error"]
    finally:
        viewer.close()
    sim.step()  # the viewer's sink left the capture


def test_port_zero_binds_a_free_port_on_localhost(viewer: ViewerServer) -> None:
    assert viewer.url.startswith("http://127.0.0.1:") and viewer.port > 0
    with socket.create_connection(("127.0.0.1", viewer.port), timeout=5):
        pass


def test_a_run_that_fails_says_why_in_its_status() -> None:
    sim = roadsim.Simulation(crossing())
    session = LiveSession(sim, paused=True)

    def broken() -> None:
        raise RuntimeError("a sensor failed")

    sim.step = broken  # type: ignore[method-assign]
    with ViewerServer(session, port=0) as server, connect(server.url.replace("http", "ws") + "feed") as ws:
        frames(ws, 1)
        ws.send(msgpack.packb({"cmd": "step"}))
        (refreshed,) = frames(ws, 1)
        assert "a sensor failed" in refreshed["status"]["error"]
        assert isinstance(session.error, RuntimeError)


def test_roadsim_serve_viewer_follows_the_served_world() -> None:
    """``roadsim serve --viewer``: the page sees the ticks a client makes, and the new
    world after a reset (a new simulation and capture on the server's side)."""
    port = free_port_pair()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        web_port = s.getsockname()[1]
    with python_child(
        "-m", "roadsim", "serve", "crossing", "--port", str(port), "--viewer",
        "--viewer-port", str(web_port), stderr=subprocess.PIPE,
    ) as child:  # fmt: skip
        assert child.stderr is not None
        lines = [child.stderr.readline() for _ in range(2)]
        assert f"viewer at http://127.0.0.1:{web_port}/" in lines[1], lines
        with (
            Client(f"tcp://127.0.0.1:{port}") as c,
            connect(f"ws://127.0.0.1:{web_port}/feed") as ws,
        ):
            (key,) = frames(ws, 1)
            assert key["key"] and key["frame"] == 0 and key["status"]["mode"] == "attached"
            assert c.tick(3) == 3
            assert [f["frame"] for f in frames(ws, 3)] == [1, 2, 3]
            c.reset(seed=5)
            after = frames(ws, 1)[0]
            assert after["key"] and after["frame"] == 0
            c.tick()
            assert frames(ws, 1)[0]["frame"] == 1
        interrupt(child)
