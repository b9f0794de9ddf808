"""`roadsim.capture.Capture`: rates, sinks, what a snapshot holds."""

from __future__ import annotations

import numpy as np
import pytest

from roadsim.capture import ActorStates, Capture, SnapshotList, every_ticks
from roadsim.errors import ArgumentError, ArgumentTypeError, ScenarioError
from roadsim.scenario import load_scenario
from roadsim.scenario.schema import validate_data
from roadsim.sim import Simulation
from roadsim.sim.build import MODEL_NAMES
from roadsim.world.state import KIND_NAMES
from tests.capture.helpers import highway_with_driver


def test_every_ticks_from_a_rate_or_a_count() -> None:
    assert every_ticks(0.05) == 1
    assert every_ticks(0.05, rate=20) == 1
    assert every_ticks(0.05, rate=10) == 2
    assert every_ticks(0.05, rate=5) == 4
    assert every_ticks(0.05, rate=15) == 1  # the nearest
    assert every_ticks(0.05, every=3) == 3
    with pytest.raises(ArgumentError, match="above the simulation's 20 ticks per second"):
        every_ticks(0.05, rate=40)
    for bad in (0, -1, float("nan"), float("inf")):
        with pytest.raises(ArgumentError):
            every_ticks(0.05, rate=bad)
    with pytest.raises(ArgumentError, match="not both"):
        every_ticks(0.05, rate=10, every=2)
    with pytest.raises(ArgumentError):
        every_ticks(0.05, every=0)
    with pytest.raises(ArgumentTypeError):
        every_ticks(0.05, every=1.5)  # type: ignore[arg-type]
    with pytest.raises(ArgumentTypeError):
        every_ticks(0.05, rate="20")  # type: ignore[arg-type]


def test_snapshots_at_the_rate_with_every_actor_by_id() -> None:
    sim = Simulation(highway_with_driver(), seed=3)
    sink = SnapshotList()
    with Capture(sim, [sink], rate=5) as capture:
        assert capture.every == 4 and capture.rate == 5.0
        for _ in range(12):
            sim.step()
            if sim.frame % 4 == 0:  # the snapshot of this frame is taken by now
                last = sink.snapshots[-1]
                assert last.frame == sim.frame
                assert last.actors.equals(ActorStates.of(sim.state))
    assert sink.closed and sink.info is not None
    assert [s.frame for s in sink.snapshots] == [0, 4, 8, 12]
    assert [s.time for s in sink.snapshots] == [0.0, 0.2, 0.4, 0.6000000000000001]
    info = sink.info
    assert info.seed == 3 and info.map == "highway" and info.every == 4
    assert info.model_names == MODEL_NAMES and info.kind_names == KIND_NAMES
    assert "seed: 3" in info.scenario_yaml
    snap = sink.snapshots[-1]
    ids = snap.actors.id
    assert np.all(np.diff(ids) > 0)  # sorted by id, whatever the slot order
    assert len(snap.actors) == int(sim.state.active.sum())
    assert snap.ego_id == 0
    # The driver view: stamped with the frame, its pose the ego's vehicle frame.
    sample = snap.samples["driver"]
    assert (sample.type, sample.sensor_id, sample.frame) == ("driver", -1, 12)
    assert sample.reading == sim.readings["driver"]
    k = int(np.flatnonzero(ids == 0)[0])
    assert sample.pose.position.tolist() == [snap.actors.x[k], snap.actors.y[k], snap.actors.z[k]]
    c, s = np.cos(snap.actors.heading[k]), np.sin(snap.actors.heading[k])
    assert np.allclose(sample.pose.rotation[:2, 0], [c, s])


def test_inactive_sensors_contribute_nothing_and_rates_change_at_run_time() -> None:
    sim = Simulation("town")
    sink = SnapshotList()
    capture = Capture(sim, [sink]).start()
    sim.step()
    assert "lidar" not in sink.snapshots[-1].samples  # off by default
    sim.sensor("lidar").active = True
    sim.step()
    sample = sink.snapshots[-1].samples["lidar"]
    assert sample.type == "lidar" and sample.frame == sim.frame
    assert sample.sensor_id == sim.sensor("lidar").id
    assert sample.pose is sample.reading.pose
    sim.sensor("lidar").active = False
    sim.step()
    assert "lidar" not in sink.snapshots[-1].samples
    capture.set_rate(every=2)
    sim.step()
    sim.step()
    capture.close()
    assert [s.frame for s in sink.snapshots] == [0, 1, 2, 3, 4]
    sim.step()  # closed: no more snapshots
    assert len(sink.snapshots) == 5 and sink.closed


def test_sensor_not_due_is_left_out() -> None:
    sim = Simulation("town")
    sim.add_sensor({"type": "raytracer", "name": "rt", "directions": [[1, 0, 0]], "sample_every": 2})
    sink = SnapshotList()
    with Capture(sim, [sink]):
        sim.run(0.2)
    has = [("rt" in s.samples) for s in sink.snapshots]
    assert has == [True, False, True, False, True]


def test_each_simulation_has_its_own_capture() -> None:
    a, b = Simulation("highway", seed=1), Simulation("highway", seed=2)
    sink_a, sink_b = SnapshotList(), SnapshotList()
    with Capture(a, [sink_a]), Capture(b, [sink_b], every=2):
        a.step()
        b.step()
        b.step()
    assert [s.frame for s in sink_a.snapshots] == [0, 1]
    assert [s.frame for s in sink_b.snapshots] == [0, 2]
    assert not sink_a.snapshots[1].actors.equals(sink_b.snapshots[0].actors)


def test_the_scenario_sets_the_rate() -> None:
    sim = Simulation(highway_with_driver(capture={"rate": 10}))
    assert Capture(sim).every == 2
    assert Capture(sim, every=5).every == 5  # the caller's wins
    data = load_scenario("highway").model_dump(mode="json", exclude_unset=True)
    too_fast = validate_data({**data, "capture": {"rate": 50}}, "fast.yaml")
    with pytest.raises(ScenarioError, match=r"capture\.rate: 50 Hz is above"):
        Capture(Simulation(too_fast))


def test_capture_section_is_validated() -> None:
    base = {"map": "highway"}
    with pytest.raises(ScenarioError, match="not both"):
        validate_data({**base, "capture": {"rate": 10, "every": 2}}, "x")
    with pytest.raises(ScenarioError, match="unknown key"):
        validate_data({**base, "capture": {"hz": 10}}, "x")
    with pytest.raises(ScenarioError, match=r"capture\.every"):
        validate_data({**base, "capture": {"every": 0}}, "x")
    assert validate_data({**base, "capture": {"every": 3}}, "x").capture.every == 3


def test_a_sink_that_fails_to_open_closes_the_others() -> None:
    class Broken(SnapshotList):
        def open(self, info: object) -> None:
            raise OSError("disk full")

    sim = Simulation("highway")
    good = SnapshotList()
    capture = Capture(sim, [good, Broken()])
    with pytest.raises(OSError, match="disk full"):
        capture.start()
    assert good.closed
    sim.step()
    assert good.snapshots == []
    with pytest.raises(ArgumentTypeError):
        capture.add_sink(object())  # type: ignore[arg-type]
