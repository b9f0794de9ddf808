"""The snapshot frame handed to the writer process: decoding it gives what `packet_of`
gives, byte for byte; anything else is a `WireError`."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roadsim.capture import Capture, wire
from roadsim.capture.recorder import Packet, packet_of
from roadsim.capture.snapshot import ACTOR_FIELDS, ActorStates, Snapshot
from roadsim.sim import Simulation
from tests.capture.helpers import camera_snapshot, highway_with_driver


def _same_packet(a: Packet, b: Packet) -> None:
    assert (a.frame, a.time, a.ego_id) == (b.frame, b.time, b.ego_id)
    assert a.index == b.index
    assert a.states == b.states
    assert [(n, k) for n, k, _ in a.sensors] == [(n, k) for n, k, _ in b.sensors]
    for (_, _, pa), (_, _, pb) in zip(a.sensors, b.sensors, strict=True):
        assert np.array_equal(pa.position, pb.position) and np.array_equal(pa.rotation, pb.rotation)
    assert [(n, k) for n, k, _ in a.samples] == [(n, k) for n, k, _ in b.samples]


@pytest.fixture(scope="module")
def snapshots() -> list[Snapshot]:
    sim = Simulation(highway_with_driver())
    sim.add_sensor({"type": "lidar", "name": "roof", "channels": 16, "horizontal_resolution_deg": 4.0})
    sim.add_sensor({"type": "raytracer", "name": "rt", "directions": [[1, 0, 0]], "bounces": 1})
    capture = Capture(sim)
    out = [capture.take()]
    for _ in range(3):
        sim.step()
        out.append(capture.take())
    return out


def test_a_frame_decodes_to_the_packet_of_its_snapshot(snapshots: list[Snapshot]) -> None:
    for snapshot in snapshots:
        assert snapshot.samples.keys() == {"driver", "roof", "rt"}
        packet, actors = wire.decode(b"".join(wire.encode(snapshot)))
        expected = packet_of(snapshot)
        _same_packet(packet, expected)
        assert actors.equals(snapshot.actors)
        assert actors.collided.dtype == np.bool_
        by_name = {n: p for n, _, p in packet.samples}
        want = {n: p for n, _, p in expected.samples}
        assert by_name["driver"] == want["driver"]  # the view's JSON message
        roof, roof_want = by_name["roof"], want["roof"]  # a pickled sample
        assert roof.name == roof_want.name and np.array_equal(roof.reading.xyz, roof_want.reading.xyz)


def test_a_camera_shot_and_no_actors_go_through() -> None:
    empty = ActorStates(**{n: c[:0] for n, c in _actors().arrays().items()})
    snapshot = camera_snapshot(3, empty)
    packet, actors = wire.decode(b"".join(wire.encode(snapshot)))
    _same_packet(packet, packet_of(snapshot))
    assert len(actors) == 0
    (_, _, sample), = packet.samples
    assert np.array_equal(sample.reading.depth, snapshot.samples["front"].reading.depth)


def test_a_column_of_another_dtype_or_strided_is_converted() -> None:
    actors = _actors()
    columns = actors.arrays()
    columns["kind"] = columns["kind"].astype(np.int32)
    columns["x"] = np.repeat(columns["x"], 2)[::2]
    columns["collided"] = columns["collided"].astype(np.uint8)
    snapshot = Snapshot(1, 0.05, 2, ActorStates(**columns), {})
    packet, decoded = wire.decode(b"".join(wire.encode(snapshot)))
    assert decoded.equals(actors)
    assert packet.states == packet_of(Snapshot(1, 0.05, 2, actors, {})).states


def _actors() -> ActorStates:
    n = 4
    ints = {n_: np.arange(n, dtype=np.int64) for n_ in ("id", "kind", "model", "control", "road", "uid")}
    columns = {name: np.linspace(0, 1, n) for name in ACTOR_FIELDS}
    columns.update(ints)
    columns["collided"] = np.array([True, False, False, True])
    return ActorStates(**columns)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 400), st.binary(max_size=64))
def test_a_cut_or_altered_frame_is_a_wire_error(cut: int, junk: bytes) -> None:
    frame = b"".join(wire.encode(Snapshot(1, 0.05, 2, _actors(), {})))
    for bad in (frame[: min(cut, len(frame) - 1)], frame + junk[:1] if junk else frame[:-1], junk):
        with pytest.raises(wire.WireError):
            wire.decode(bad)
