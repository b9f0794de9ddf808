"""The server over real sockets on 127.0.0.1: determinism, several clients, clients that
die or read slowly, floods of bad messages, shared memory, tokens."""

from __future__ import annotations

import shutil
import signal
import subprocess
import time
from pathlib import Path

import msgpack
import numpy as np
import pytest
import zmq
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import roadsim
from roadsim.capture import Capture, Recorder, SnapshotList
from roadsim.capture.reader import read_recording
from roadsim.errors import ArgumentError
from roadsim.road.load import resolve_map
from roadsim.server import Client, Limits, Server, ServerError
from tests.server.processes import SRC, free_port_pair, interrupt, python_child

#: The ego's commands by frame in the determinism run.
COMMANDS = {0: {"throttle": 0.6}, 5: {"throttle": 0.2, "steering": 0.05}, 12: {"brake": 0.4}}
TICKS = 20


def _in_process() -> list:
    """The run a client drives over TCP, in this process."""
    sim = roadsim.Simulation("town", seed=5)
    sim.sensor("lidar").active = True
    kept = SnapshotList()
    with Capture(sim, [kept]):
        for frame in range(TICKS):
            if frame in COMMANDS:
                sim.drive_ego(roadsim.EgoCommand(**COMMANDS[frame]))
            sim.step()
    return kept.snapshots


def test_a_client_gets_the_frames_of_an_in_process_run_bit_for_bit(town_server: Server) -> None:
    with Client(town_server.endpoint) as client:
        client.set_mode("sync")
        client.sensor("lidar").activate()
        client.subscribe()
        for frame in range(TICKS):
            if frame in COMMANDS:
                client.control(**COMMANDS[frame])
            client.tick()
        got = list(client.snapshots(limit=TICKS + 1, timeout=5.0))
    want = _in_process()[1:]  # frame 0 was taken before the client subscribed
    got = [s for s in got if s.frame >= 1]
    assert [s.frame for s in got] == [s.frame for s in want] == list(range(1, TICKS + 1))
    for g, w in zip(got, want, strict=True):
        assert g.actors is not None and g.actors.equals(w.actors)
        assert set(g.samples) == set(w.samples) == {"lidar"}
        lidar, ref = g.samples["lidar"], w.samples["lidar"].reading
        for name in ("xyz", "range", "intensity", "actor_ids", "channel", "azimuth"):
            assert np.array_equal(lidar.data[name], getattr(ref, name))
        assert np.array_equal(lidar.position, ref.pose.position)
        assert g.dropped == 0


def test_four_clients_subscribed_at_once_get_every_frame(town_server: Server) -> None:
    clients = [Client(town_server.endpoint, name=f"c{k}") for k in range(4)]
    try:
        for c in clients:
            c.subscribe()
        ticker = clients[0]
        ticker.set_mode("sync")
        ticker.tick(10)  # one request, ten ticks: ten snapshots each
        frames = [[s.frame for s in c.snapshots(limit=10, timeout=5.0)] for c in clients]
        assert all(f == frames[0] for f in frames) and len(frames[0]) == 10
        with pytest.raises(ServerError, match="another client holds the tick"):
            clients[1].tick()
    finally:
        for c in clients:
            c.close()


def test_a_client_killed_mid_stream_leaves_the_others_served(town_server: Server) -> None:
    code = f"""
import sys, time
sys.path.insert(0, {str(SRC)!r})
from roadsim.server import Client
c = Client({town_server.endpoint!r})
c.subscribe()
print("subscribed", flush=True)
time.sleep(60)
"""
    with python_child("-c", code, stdout=subprocess.PIPE) as child:
        assert child.stdout is not None and child.stdout.readline().strip() == "subscribed"
        with Client(town_server.endpoint) as watcher:
            watcher.subscribe(actors=True)
            watcher.set_mode("sync")
            watcher.tick(3)
            child.send_signal(signal.SIGKILL)
            child.wait(timeout=10)
            for _ in range(10):
                watcher.tick()
            snaps = list(watcher.snapshots(limit=13, timeout=5.0))
            assert len(snaps) == 13 and snaps[-1].frame == 13


def test_a_slow_reader_in_real_time_drops_frames_and_is_told(town_server: Server) -> None:
    with Client(town_server.endpoint, queue=1) as slow, Client(town_server.endpoint) as other:
        other.sensor("camera").activate()  # 6.4 MB a snapshot: TCP buffers fill at once
        slow.subscribe(sensors=["camera"])
        other.set_mode("realtime")
        # The slow client reads nothing while the world makes 30 frames (190 MB for it).
        deadline = time.monotonic() + 60.0
        while other.world_info()["frame"] < 30:
            assert time.monotonic() < deadline, "the world did not go on"
            time.sleep(0.1)
        other.set_mode("sync")  # the world stands: the stream ends
        snaps = list(slow.snapshots(timeout=0.5))
        assert snaps and snaps[-1].dropped > 0
        # Every message before the last was either received or counted as dropped.
        assert snaps[-1].seq >= len(snaps) - 1 + snaps[-1].dropped


def test_sync_mode_waits_for_its_ticker_until_the_timeout(town_server: Server) -> None:
    with Client(town_server.endpoint) as ticker, Client(town_server.endpoint) as watcher:
        watcher.subscribe(actors=False)
        ticker.set_mode("sync", timeout_s=0.3)
        frame = watcher.world_info()["frame"]
        time.sleep(0.1)
        assert watcher.world_info()["frame"] == frame  # it waits
        time.sleep(0.6)
        info = watcher.world_info()
        assert info["mode"] == "realtime"
        # The watcher hears why; the ticker's next tick says so.
        deadline = time.monotonic() + 2.0
        while not watcher.notices and time.monotonic() < deadline:
            watcher.next_snapshot(timeout=0.1)
        assert watcher.notices[0]["code"] == "sync_timeout"
        with pytest.raises(ServerError, match="sync_timeout"):
            ticker.tick()


# Integers that are no tick count but 1: a valid tick of thousands of ticks is a real
# request that takes its time (the server steps on while the flood waits), not junk.
_numbers = st.one_of(st.integers(-(2**63), 1), st.integers(100_001, 2**64 - 1))
_junk = st.one_of(
    st.binary(max_size=200),
    st.builds(lambda d: msgpack.packb(d), st.dictionaries(st.text(max_size=5), st.integers(0, 9), max_size=4)),
    st.builds(lambda t, a: msgpack.packb({"v": 1, "id": 1, "type": t, "args": a}),
              st.sampled_from(["tick", "load", "spawn", "control", "subscribe", "bogus"]),
              st.dictionaries(st.sampled_from(["x", "scenario", "count", "actor", "sensors"]),
                              st.one_of(_numbers, st.text(max_size=5), st.floats()), max_size=3)),
)  # fmt: skip


def test_a_flood_of_bad_messages_leaves_the_server_serving(tmp_path: Path) -> None:
    recording = tmp_path / "flood.mcap"
    with Server("town", port=0, seed=5, limits=Limits(max_request_bytes=2048)) as server, \
            Client(server.endpoint) as good:  # fmt: skip
        server.add_sink(Recorder(recording))  # what a flood must not corrupt
        ctx = zmq.Context.instance()
        bad = ctx.socket(zmq.DEALER)
        try:
            bad.setsockopt(zmq.LINGER, 0)
            bad.connect(server.endpoint)
            bad.send(msgpack.packb({"v": 1, "id": 0, "type": "hello", "args": {"version": 1}}))
            assert bad.poll(5000)
            bad.recv_multipart()

            @settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
            @given(_junk)
            def flood(raw: bytes) -> None:
                bad.send(raw)

            flood()
            bad.send_multipart([b"x", b"y", b"z"])  # several frames
            # One connection's requests are answered in order: once this one is, the
            # flood has been read.
            bad.send(msgpack.packb({"v": 1, "id": 999, "type": "world", "args": {}}))
            while bad.poll(5000):
                if msgpack.unpackb(bad.recv_multipart()[0]).get("id") == 999:
                    break
            else:
                raise AssertionError("the server stopped answering the flooding client")
            assert server.stats["errors"] > 100
            bad.send(b"\x00" * 4096)  # oversized: ZeroMQ drops the connection unread
            world = good.request("world")
            assert world["scenario"] == "town"
            good.set_mode("sync")
            assert good.tick() == world["frame"] + 1
            frames = good.tick()
        finally:
            bad.close()
    rec = read_recording(recording)
    assert rec.complete
    assert [s.frame for s in rec.snapshots()] == list(range(1, frames + 1))  # added at frame 1


def test_shared_memory_frames_equal_the_tcp_frames(town_server: Server) -> None:
    with Client(town_server.endpoint) as tcp, Client(town_server.endpoint, shm=True) as local:
        tcp.subscribe(sensors=["camera", "lidar"])
        local.subscribe(sensors=["camera", "lidar"])
        tcp.set_mode("sync")
        tcp.sensor("camera").activate()
        tcp.sensor("lidar").activate()
        tcp.tick(2)
        for a in tcp.snapshots(limit=2, timeout=5.0):
            b = local.next_snapshot(timeout=5.0)
            assert b is not None and a.frame == b.frame
            for name in ("camera", "lidar"):
                sa, sb = a.samples[name], b.samples[name]
                assert sa.shm is None and sb.shm is not None
                for field, values in sa.data.items():
                    other = sb.data[field]
                    assert np.array_equal(values, other, equal_nan=isinstance(values, np.ndarray)
                                          and values.dtype.kind == "f")  # fmt: skip
            assert local.still_valid(b.samples["camera"])
        latest = local.sensor("camera").latest()
        assert latest is not None and latest["color"].shape == (480, 640, 3)


def test_world_changes_over_the_wire(town_server: Server) -> None:
    with Client(town_server.endpoint) as c:
        ego = c.actor("ego")
        new = c.spawn(np.float64(ego["x"] + 2000.0), ego["y"], 0.0, speed=3.0, external=True)
        c.control(new, accel=1.0)
        c.set_mode("sync")
        c.tick(2)
        assert c.actor(new)["speed"] == pytest.approx(3.0 + 2 * 1.0 * 0.05)
        c.remove(new)
        with pytest.raises(ServerError, match="not_found"):
            c.control(new, throttle=0.1)
        on_lane = c.spawn_on_lane("5", 1, 100.0, speed=4.0)
        assert c.actor(on_lane)["speed"] == 4.0 and c.actor(on_lane)["lane"] is not None
        with pytest.raises(ServerError, match=r"not_found.*road 100 has no lane 1"):
            c.spawn_on_lane(100, 1, 5.0)
        with pytest.raises(ServerError, match=r"bad_value.*outside road 5"):
            c.spawn_on_lane("5", -1, 300.0)
        frame, actors = c.state()
        assert frame == 2 and new not in actors.id
        views = c.driver_views([0])
        assert len(views) == 1 and "ownVehicleStates" in views[0]
        handle = c.add_sensor(type="lidar", name="roof2", vehicle="ego", channels=16)
        assert handle.name == "roof2"
        with pytest.raises(ServerError, match="bad_value"):
            c.add_sensor(type="lidar", name="roof2", vehicle="ego")
        assert c.set_capture_rate(every=2)["every"] == 2
        world = c.load(map="highway")
        assert world["map"] == "highway" and world["ego_id"] == -1 and world["frame"] == 0
        with pytest.raises(ServerError, match="scenario"):
            c.load(scenario_yaml="map: nowhere\n")
        assert c.load("town", seed=9)["seed"] == 9
        assert c.reset(seed=2)["seed"] == 2


def test_clients_load_files_only_from_the_folders_served(tmp_path: Path) -> None:
    served, elsewhere = tmp_path / "served", tmp_path / "elsewhere"
    served.mkdir()
    elsewhere.mkdir()
    for folder in (served, elsewhere):
        shutil.copy(resolve_map("highway"), folder / "road.xodr")
        (folder / "drive.yaml").write_text("map: road.xodr\n")
    with Server("town", port=0, files=[served]) as server, Client(server.endpoint) as c:
        assert c.load(str(served / "drive.yaml"))["map"] == str(served / "road.xodr")
        assert c.load(map=str(served / "road.xodr"))["ego_id"] == -1
        for load in (
            lambda: c.load(str(elsewhere / "drive.yaml")),
            lambda: c.load(map=str(elsewhere / "road.xodr")),
            lambda: c.load(map=str(served / ".." / "elsewhere" / "road.xodr")),
            lambda: c.load(scenario_yaml=f"map: {elsewhere / 'road.xodr'}\n"),
            lambda: c.load("/etc/passwd"),
        ):
            with pytest.raises(ServerError, match="forbidden") as refused:
                load()
            assert str(served) in str(refused.value)
        # Built-in names pass whatever the folders; the world is the last one loaded.
        assert c.load("highway")["scenario"] == "highway"
        assert c.load(map="town")["map"] == "town"


def test_a_token_is_required_off_loopback_and_checked() -> None:
    with pytest.raises(ArgumentError, match="needs a token"):
        Server("town", host="0.0.0.0", port=0)
    with Server("town", port=0, token="s3cret") as server:
        with pytest.raises(ServerError, match="unauthorized"):
            Client(server.endpoint, token="wrong")
        with Client(server.endpoint, token="s3cret") as c:
            assert c.world["scenario"] == "town"
        raw = zmq.Context.instance().socket(zmq.DEALER)
        raw.setsockopt(zmq.LINGER, 0)
        raw.connect(server.endpoint)
        raw.send(msgpack.packb({"v": 1, "id": 3, "type": "tick", "args": {}}))
        assert raw.poll(5000)
        reply = msgpack.unpackb(raw.recv_multipart()[0])
        assert reply["error"]["code"] == "unauthorized"
        raw.close()


def test_roadsim_serve_serves_until_interrupted() -> None:
    port = free_port_pair()
    with python_child(
        "-m", "roadsim", "serve", "town", "--port", str(port), stderr=subprocess.PIPE
    ) as child:
        assert child.stderr is not None
        line = child.stderr.readline()
        assert f"serving town on tcp://127.0.0.1:{port}" in line
        with Client(f"tcp://127.0.0.1:{port}") as c:
            assert c.tick() == 1
        interrupt(child)


def test_a_port_in_use_is_a_clear_error(town_server: Server) -> None:
    port = int(town_server.endpoint.rsplit(":", 1)[1])
    with pytest.raises(ArgumentError, match=f"cannot bind 127.0.0.1:{port}"):
        Server("town", port=port).bind()


def test_a_subscription_picks_array_fields(town_server: Server) -> None:
    with Client(town_server.endpoint) as c:
        c.sensor("camera").activate()
        with pytest.raises(ServerError, match="has no array 'colour'"):
            c.subscribe(sensors=["camera"], fields={"camera": ["colour"]})
        c.subscribe(sensors=["camera"], actors=False, fields={"camera": ["depth"]})
        c.set_mode("sync")
        c.tick()
        snap = c.next_snapshot(timeout=5.0)
        assert snap is not None and snap.actors is None
        data = snap.samples["camera"].data
        assert data["depth"].shape == (480, 640) and "color" not in data and data["width"] == 640


def test_sessions_of_clients_gone_without_bye_make_room() -> None:
    with Server("town", port=0, limits=Limits(max_sessions=2)) as server:
        first = Client(server.endpoint)
        try:
            with Client(server.endpoint), Client(server.endpoint) as third:
                assert third.world_info()["scenario"] == "town"
                with pytest.raises(ServerError, match="unauthorized"):
                    first.world_info()  # the longest silent session made room
        finally:
            first.close()
