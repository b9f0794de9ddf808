"""CSV export and the image-files sink."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from roadsim.capture import Capture, Recorder, RecordingError, SnapshotList
from roadsim.capture.export import export_csv
from roadsim.capture.images import INDEX_COLUMNS, ImageFiles
from roadsim.capture.reader import read_recording
from roadsim.sim import Simulation
from roadsim.sim.build import MODEL_NAMES
from roadsim.world.state import KIND_NAMES
from tests.capture.helpers import camera_snapshot, highway_with_driver


def test_export_matches_the_simulation(tmp_path: Path) -> None:
    sim = Simulation(highway_with_driver(), seed=2)
    path = tmp_path / "run.mcap"
    states = {}
    views = {}
    with Capture(sim, [Recorder(path)], rate=10):
        for _ in range(20):
            sim.step()
            if sim.frame % 2 == 0:
                states[sim.frame] = sim.state.copy()
                views[sim.frame] = sim.readings["driver"]
    recording = read_recording(path)
    summary = export_csv(recording.snapshots(), recording.info, tmp_path / "out")
    assert set(summary.rows) == {tmp_path / "out" / "actors.csv", tmp_path / "out" / "driver_driver.csv"}
    with (tmp_path / "out" / "actors.csv").open() as f:
        rows = list(csv.DictReader(f))
    checked = 0
    for row in rows:
        frame = int(row["frame"])
        if frame not in states:
            assert frame == 0
            continue
        st = states[frame]
        k = int(np.flatnonzero(st.active & (st.id == int(row["id"])))[0])
        assert float(row["time"]) == frame * sim.dt
        for name in ("x", "y", "z", "heading", "speed", "accel", "s", "t", "length"):
            assert float(row[name]) == getattr(st, name)[k] or (
                np.isnan(getattr(st, name)[k]) and row[name] == "nan"
            ), name
        assert int(row["uid"]) == st.uid[k] and int(row["road"]) == st.road[k]
        assert row["kind"] == KIND_NAMES[st.kind[k]] and row["model"] == MODEL_NAMES[st.model[k]]
        assert row["collided"] == str(int(st.collided[k]))
        checked += 1
    assert checked == sum(int(st.active.sum()) for st in states.values())
    with (tmp_path / "out" / "driver_driver.csv").open() as f:
        drows = list(csv.DictReader(f))
    assert [int(r["frame"]) for r in drows] == list(range(0, 21, 2))
    last = drows[-1]
    view = views[20]
    assert float(last["ownVehicleStates.absoluteVelocity"]) == view.own_vehicle_states.absolute_velocity
    assert float(last["geometryInformation.laneEgo.width"]) == view.geometry_information.lane_ego.width
    assert int(last["surroundingObjects.objectFront.id"]) == view.surrounding_objects.object_front.id
    markings = json.loads(last["trafficRuleInformation.laneMarkingsLeft"])
    assert len(markings) == len(view.traffic_rule_information.lane_markings_left)


def test_export_into_a_file_is_an_error(tmp_path: Path) -> None:
    sink = SnapshotList()
    Capture(Simulation("highway"), [sink]).start().close()
    assert sink.info is not None
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(RecordingError, match="cannot make the folder"):
        export_csv(sink.snapshots, sink.info, blocker / "sub")


def test_image_files(tmp_path: Path) -> None:
    sim = Simulation("highway")
    sink = SnapshotList()
    Capture(sim, [sink]).start().close()
    assert sink.info is not None
    images = ImageFiles(tmp_path / "images")
    images.open(sink.info)
    snaps = [camera_snapshot(k, sink.snapshots[0].actors) for k in (0, 2)]
    for snap in snaps:
        images.write(snap)
    images.close()
    assert images.shots == 2
    with (tmp_path / "images" / "index.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == list(INDEX_COLUMNS)
    assert [r["frame"] for r in rows] == ["0", "2"]
    shot = snaps[1].samples["front"].reading
    row = rows[1]
    assert (row["camera"], row["sensor_id"], row["width"], row["height"]) == ("front", "7", "8", "6")
    assert float(row["x"]) == 1.0 and float(row["qw"]) == 1.0
    folder = tmp_path / "images"
    assert np.array_equal(np.load(folder / row["depth"]), shot.depth)
    assert np.array_equal(np.load(folder / row["hdr"]), shot.color)
    assert np.array_equal(np.load(folder / row["instance"]), shot.actor_ids)
    assert np.array_equal(np.asarray(Image.open(folder / row["color"])), shot.preview())
    assert np.array_equal(np.asarray(Image.open(folder / row["surface"])), shot.surface_ids)
    assert row["color"] == "front/000002.color.png"
    with pytest.raises(RecordingError, match="unknown 'jpeg'"):
        ImageFiles(tmp_path, kinds=["jpeg"])
    only = ImageFiles(tmp_path / "only", kinds=["depth"])
    only.open(sink.info)
    only.write(snaps[0])
    only.close()
    assert sorted(p.name for p in (tmp_path / "only" / "front").iterdir()) == ["000000.depth.npy"]
