"""The feeds and the sink: deltas by id, lanes by version, key frames for new clients."""

from __future__ import annotations

from typing import Any

import msgpack
import numpy as np
import pytest

import roadsim
from roadsim.capture import Capture, Snapshot, SnapshotList
from roadsim.capture.snapshot import ActorStates
from roadsim.errors import ArgumentError
from roadsim.viewer import FeedSink
from roadsim.viewer.lanes import LanePicker, LaneTable
from roadsim.viewer.session import parse_command
from roadsim.viewer.sink import MAX_QUEUED
from tests.viewer.helpers import crossing


@pytest.fixture(scope="module")
def run() -> tuple[roadsim.Simulation, list[Snapshot], list[bytes]]:
    """40 ticks of the crossing (its pedestrian goes after 1 s), every frame message."""
    sim = roadsim.Simulation(crossing(lifetime=1.0))
    sink, kept = FeedSink(), SnapshotList()
    with Capture(sim, [kept, sink]):
        messages: list[bytes] = []
        sub = sink.subscribe(lambda: None)
        messages += sink.take(sub)  # the key frame of frame 0
        for _ in range(40):
            sim.step()
            messages += sink.take(sub)
    return sim, kept.snapshots, messages


def unpack(data: bytes) -> dict[str, Any]:
    out: dict[str, Any] = msgpack.unpackb(data)
    return out


def ids(raw: bytes) -> list[int]:
    return np.frombuffer(raw, dtype="<i4").tolist()


def test_deltas_rebuild_the_world_by_id(run: Any) -> None:
    _, snapshots, messages = run
    assert len(messages) == len(snapshots) == 41
    world: dict[int, list[float]] = {}
    for data, snap in zip(messages, snapshots, strict=True):
        msg = unpack(data)
        assert msg["frame"] == snap.frame
        w = msg["worldSensor"]
        for i in ids(w["remove"]):
            del world[i]
        for i in ids(w["add"]["id"]):
            world[i] = []
        poses = np.frombuffer(w["pose"]["xyzhv"], dtype="<f4").reshape(-1, 5)
        for i, pose in zip(ids(w["pose"]["id"]), poses, strict=True):
            world[i] = pose.tolist()
        a = snap.actors
        others = a.id != snap.ego_id
        assert sorted(world) == a.id[others].tolist()
        x = np.array([world[int(i)][0] for i in a.id[others]])
        np.testing.assert_allclose(x, a.x[others], atol=1e-3)
        ego = msg["egoSensor"]
        assert ego["id"] == snap.ego_id and ego["model"] == "car"


def test_the_scripted_object_leaves_and_its_id_is_removed(run: Any) -> None:
    _, snapshots, messages = run
    removed = [i for data in messages for i in ids(unpack(data)["worldSensor"]["remove"])]
    assert removed == [1]  # the pedestrian (the first scenario object after the ego)
    assert 1 in snapshots[0].actors.id and 1 not in snapshots[-1].actors.id


def test_only_moved_objects_are_sent(run: Any) -> None:
    _, snapshots, messages = run
    last = unpack(messages[-1])["worldSensor"]
    a = snapshots[-1].actors
    moving = a.id[(a.id != snapshots[-1].ego_id) & (a.speed > 0)]
    sent = ids(last["pose"]["id"])
    assert set(moving.tolist()) <= set(sent) and len(sent) < len(a) - 1 + 1
    assert ids(last["add"]["id"]) == []


def test_lanes_are_sent_once_then_only_on_a_new_version(run: Any) -> None:
    _, _, messages = run
    msgs = [unpack(m) for m in messages]
    assert msgs[0]["key"] and msgs[0]["laneSensor"]["version"] == 1
    assert all(m["laneSensor"] is None for m in msgs[2:])
    lanes = msgs[0]["laneSensor"]
    rows = np.frombuffer(lanes["rows"], dtype="<i4")
    cols = np.frombuffer(lanes["cols"], dtype="<i4")
    assert len(lanes["points"]) == 12 * int(np.sum(rows * cols))
    assert "driving" in lanes["lane_types"] and set(lanes["mark_types"]) == {"broken", "solid"}


def test_the_key_frame_carries_the_scripted_paths_and_info(run: Any) -> None:
    _, _, messages = run
    key = unpack(messages[0])
    (script,) = key["worldSensor"]["scripts"]
    assert script["id"] == 1 and script["name"] == "pedestrian" and script["radius"] == 150
    assert len(script["path"]) % 12 == 0
    assert key["info"]["kinds"] == ["vehicle", "static_object", "scripted_object"]


def test_the_driver_sensor_names_the_objects_around_the_ego(run: Any) -> None:
    _, _, messages = run
    (view,) = unpack(messages[-1])["sensors"]["driver"]
    assert view["id"] == 0 and {"front", "rear"} <= set(view)


def test_lane_version_changes_only_when_the_set_of_lanes_does() -> None:
    table = LaneTable(roadsim.load_map("highway"))
    picker = LanePicker(table, radius=200.0)
    first = picker.update(0.0, 0.0)
    assert picker.update(10.0, 0.0) is first  # within a quarter of the radius
    far = picker.update(3000.0, 0.0)
    assert far.version == 2 and not np.array_equal(far.sections, first.sections)
    assert picker.update(0.0, 0.0).version == 3


def test_a_slow_client_gets_a_key_frame_instead_of_a_backlog(run: Any) -> None:
    _, snapshots, _ = run
    sink = FeedSink()
    sink.open(Capture(roadsim.Simulation(crossing())).info())
    sub = sink.subscribe(lambda: None)
    sink.write(snapshots[0])
    assert unpack(sink.take(sub)[0])["key"]
    for snap in snapshots[1 : MAX_QUEUED + 3]:
        sink.write(snap)
    (key,) = sink.take(sub)
    assert unpack(key)["key"] and unpack(key)["frame"] == snapshots[MAX_QUEUED + 2].frame
    assert sub.dropped == MAX_QUEUED


def test_an_empty_world_is_fine(run: Any) -> None:
    _, snapshots, _ = run
    sink = FeedSink()
    sink.open(Capture(roadsim.Simulation(crossing())).info())
    empty = ActorStates(**{k: v[:0] for k, v in snapshots[0].actors.arrays().items()})
    sink.write(Snapshot(0, 0.0, -1, empty, {}))
    assert sink.last_size > 0


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ({"cmd": "step"}, {"cmd": "step", "count": 1}),
        ({"cmd": "speed", "value": 2}, {"cmd": "speed", "value": 2.0}),
        ({"cmd": "seek", "frame": 10}, {"cmd": "seek", "frame": 10}),
    ],
)
def test_commands_are_checked(command: dict[str, Any], expected: dict[str, Any]) -> None:
    assert parse_command(command) == expected


@pytest.mark.parametrize(
    "bad",
    [None, "play", {"cmd": "jump"}, {"cmd": "speed", "value": -1}, {"cmd": "speed", "value": True},
     {"cmd": "step", "count": 0}, {"cmd": "seek", "frame": 1.5}, {"cmd": "sensor", "name": 3}],
)  # fmt: skip
def test_bad_commands_are_user_errors(bad: Any) -> None:
    with pytest.raises(ArgumentError):
        parse_command(bad)
