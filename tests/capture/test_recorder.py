"""`roadsim.capture.Recorder`: recordings read back with the ``mcap`` reader hold every
snapshot with the schemas they declare; the same run gives the same messages."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from mcap.reader import make_reader

from roadsim.capture import ActorStates, Capture, Recorder, RecordingError, SnapshotList
from roadsim.capture.messages import quaternion, rotation_of
from roadsim.scenario import parse_scenario
from roadsim.sim import Simulation
from tests.capture.helpers import camera_snapshot, highway_with_driver


def _messages(path: Path) -> tuple[dict[str, Any], list[tuple[str, Any, Any]]]:
    """The metadata and every (topic, schema, message) of a recording, with its summary."""
    with path.open("rb") as f:
        reader = make_reader(f)
        summary = reader.get_summary()
        assert summary is not None  # a complete file: footer and summary written
        meta = {m.name: dict(m.metadata) for m in reader.iter_metadata()}
        out = [(c.topic, s, m) for s, c, m in reader.iter_messages()]
    return meta, out


def _decoder(schema: Any) -> Any:
    """A protobuf message class from the FileDescriptorSet the recording declares."""
    fds = descriptor_pb2.FileDescriptorSet.FromString(schema.data)
    pool = descriptor_pool.DescriptorPool()
    for file in fds.file:
        pool.Add(file)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(schema.name))


def _record(path: Path, seconds: float = 1.0, **kwargs: Any) -> SnapshotList:
    sim = Simulation(highway_with_driver(), seed=5)
    sink = SnapshotList()
    with Capture(sim, [Recorder(path, **kwargs), sink]):
        sim.run(seconds)
    return sink


def test_recording_holds_every_snapshot_with_its_schemas(tmp_path: Path) -> None:
    path = tmp_path / "run.mcap"
    sink = _record(path)
    meta, messages = _messages(path)
    roadsim_meta = meta["roadsim"]
    assert roadsim_meta["format_version"] == "1"
    assert roadsim_meta["seed"] == "5" and roadsim_meta["map"] == "highway"
    assert "seed: 5" in roadsim_meta["scenario"] and "ISO 8855" in roadsim_meta["conventions"]
    assert json.loads(roadsim_meta["model_names"])[:3] == ["car", "truck", "bus"]
    # The scenario as recorded loads again, as it ran (the seed applied).
    assert parse_scenario(roadsim_meta["scenario"]) == highway_with_driver().with_overrides(seed=5)
    declared = {topic: (s.name, s.encoding) for topic, s, _ in messages}
    assert declared == {
        "/roadsim/snapshot": ("roadsim.Snapshot", "jsonschema"),
        "/roadsim/actors": ("roadsim.ActorStates", "protobuf"),
        "/scene/actors": ("foxglove.SceneUpdate", "protobuf"),
        "/scene/lanes": ("foxglove.SceneUpdate", "protobuf"),
        "/tf": ("foxglove.FrameTransforms", "protobuf"),
        "/driver/driver": ("roadsim.DriverView", "jsonschema"),
    }
    snaps = sink.snapshots
    assert len(snaps) == 21
    by_topic: dict[str, list[Any]] = {}
    for topic, schema, message in messages:
        by_topic.setdefault(topic, []).append((schema, message))
    assert len(by_topic["/scene/lanes"]) == 1
    for topic in ("/roadsim/snapshot", "/roadsim/actors", "/scene/actors", "/tf", "/driver/driver"):
        assert [m.log_time for _, m in by_topic[topic]] == [round(s.time * 1e9) for s in snaps]
    # Every protobuf message decodes with the schema its channel declares.
    for pairs in by_topic.values():
        schema = pairs[0][0]
        if schema.encoding == "protobuf":
            cls = _decoder(schema)
            for _, m in pairs:
                cls.FromString(m.data)
    states = _decoder(by_topic["/roadsim/actors"][0][0])
    boxes = _decoder(by_topic["/scene/actors"][0][0])
    for snap, (_, m_states), (_, m_boxes), (_, m_index) in zip(
        snaps, by_topic["/roadsim/actors"], by_topic["/scene/actors"], by_topic["/roadsim/snapshot"], strict=True
    ):
        decoded = states.FromString(m_states.data)
        assert decoded.frame == snap.frame and decoded.ego_id == 0
        for name, values in snap.actors.arrays().items():
            assert np.array_equal(np.array(getattr(decoded, name)), values, equal_nan=True), name
        update = boxes.FromString(m_boxes.data)
        assert [d.type for d in update.deletions] == [1]  # ALL: actors gone vanish
        assert [e.id for e in update.entities] == [str(i) for i in snap.actors.id]
        e = update.entities[int(np.flatnonzero(snap.actors.id == 0)[0])]
        k = int(np.flatnonzero(snap.actors.id == 0)[0])
        cube = e.cubes[0]
        assert e.frame_id == "world"
        assert cube.pose.position.x == snap.actors.x[k]
        assert cube.pose.position.z == snap.actors.z[k] + 0.5 * snap.actors.height[k]
        assert cube.size.x == snap.actors.length[k]
        assert cube.pose.orientation.z == pytest.approx(np.sin(snap.actors.heading[k] / 2))
        index = json.loads(m_index.data)
        assert index["frame"] == snap.frame and index["actors"] == len(snap.actors)
    view = json.loads(by_topic["/driver/driver"][-1][1].data)
    assert view["id"] == 0 and view["frame"] == snaps[-1].frame
    assert view["ownVehicleStates"]["absoluteVelocity"] == (
        snaps[-1].samples["driver"].reading.own_vehicle_states.absolute_velocity
    )


def test_foxglove_objects_encode_what_ours_decode_to(tmp_path: Path) -> None:
    """The SceneUpdate written on numpy equals the Foxglove SDK's own message."""
    import foxglove.messages as fm

    from roadsim.capture.boxes import ActorBoxes
    from roadsim.sim.build import MODEL_NAMES

    sim = Simulation("town")
    sim.run(1.0)
    actors = ActorStates.of(sim.state)
    encoder = ActorBoxes(MODEL_NAMES)
    ours = encoder.encode(actors, 0, 1_050_000_000)
    rgba = encoder.colors(actors, 0)
    stamp = fm.Timestamp(1, 50_000_000)
    theirs = fm.SceneUpdate(
        deletions=[fm.SceneEntityDeletion(timestamp=stamp, type=fm.SceneEntityDeletionType.All)],
        entities=[
            fm.SceneEntity(
                timestamp=stamp, frame_id="world", id=str(int(actors.id[k])),
                cubes=[fm.CubePrimitive(
                    pose=fm.Pose(
                        position=fm.Vector3(x=actors.x[k], y=actors.y[k], z=actors.z[k] + actors.height[k] / 2),
                        orientation=fm.Quaternion(z=np.sin(actors.heading[k] / 2), w=np.cos(actors.heading[k] / 2)),
                    ),
                    size=fm.Vector3(x=actors.length[k], y=actors.width[k], z=actors.height[k]),
                    color=fm.Color(r=rgba[k, 0], g=rgba[k, 1], b=rgba[k, 2], a=rgba[k, 3]),
                )],
            )
            for k in range(len(actors))
        ],
    ).encode()  # fmt: skip
    cls = _decoder(fm.SceneUpdate.get_schema())
    assert cls.FromString(ours) == cls.FromString(theirs)


def test_same_scenario_and_seed_same_messages(tmp_path: Path) -> None:
    _record(tmp_path / "a.mcap")
    _record(tmp_path / "b.mcap")
    meta_a, a = _messages(tmp_path / "a.mcap")
    meta_b, b = _messages(tmp_path / "b.mcap")
    assert meta_a == meta_b
    assert [(t, m.log_time, m.data) for t, _, m in a] == [(t, m.log_time, m.data) for t, _, m in b]


def test_two_recorders_in_one_process_write_their_own_files(tmp_path: Path) -> None:
    sims = [Simulation("highway", seed=1), Simulation("town", seed=2)]
    paths = [tmp_path / "highway.mcap", tmp_path / "town.mcap"]
    captures = [Capture(s, [Recorder(p)]).start() for s, p in zip(sims, paths, strict=True)]
    for _ in range(3):
        for s in sims:
            s.step()
    for c in captures:
        c.close()
    for path, name in zip(paths, ("highway", "town"), strict=True):
        meta, messages = _messages(path)
        assert meta["roadsim"]["map"] == name
        assert sum(t == "/roadsim/snapshot" for t, _, _ in messages) == 4


def test_sensor_channels(tmp_path: Path) -> None:
    sim = Simulation("town")
    sim.sensor("lidar").active = True
    sim.add_sensor({"type": "raytracer", "name": "rt", "directions": [[1, 0, 0], [0, 1, 0]], "bounces": 1})
    path = tmp_path / "sensors.mcap"
    with Capture(sim, [Recorder(path)]):
        sim.run(0.2)
    _, messages = _messages(path)
    declared = {t: s.name for t, s, _ in messages}
    assert declared["/lidar/lidar"] == "foxglove.PointCloud"
    assert declared["/rays/rt"] == "foxglove.PointCloud"
    tf_schema = next(s for t, s, _ in messages if t == "/tf")
    tf = _decoder(tf_schema).FromString([m for t, _, m in messages if t == "/tf"][-1].data)
    frames = {(x.parent_frame_id, x.child_frame_id) for x in tf.transforms}
    assert frames == {("world", "sensor/lidar"), ("world", "sensor/rt"), ("world", "ego")}
    cloud_schema = next(s for t, s, _ in messages if t == "/lidar/lidar")
    cloud = _decoder(cloud_schema).FromString([m for t, _, m in messages if t == "/lidar/lidar"][-1].data)
    reading = sim.readings["lidar"]
    assert reading is not None
    assert len(cloud.data) == cloud.point_stride * len(reading.range)
    assert [f.name for f in cloud.fields][:5] == ["x", "y", "z", "range", "intensity"]
    assert cloud.pose.position.x == reading.pose.position[0]


def test_camera_images(tmp_path: Path) -> None:
    """Camera shots (a stand-in with the camera reading's attributes) as RawImages."""
    sim = Simulation("highway")
    sink = SnapshotList()
    capture = Capture(sim, [sink]).start()
    capture.close()
    path = tmp_path / "cam.mcap"
    recorder = Recorder(path)
    assert sink.info is not None
    recorder.open(sink.info)
    snap = camera_snapshot(0, sink.snapshots[0].actors)
    recorder.write(snap)
    recorder.close()
    _, messages = _messages(path)
    images = {t: (s, m) for t, s, m in messages if t.startswith("/camera/front/")}
    assert set(images) == {
        f"/camera/front/{k}" for k in ("color", "hdr", "depth", "surface", "instance", "calibration")
    }
    raw = _decoder(images["/camera/front/depth"][0])
    depth = raw.FromString(images["/camera/front/depth"][1].data)
    assert (depth.encoding, depth.width, depth.height) == ("32FC1", 8, 6)
    assert depth.frame_id == "sensor/front/optical"
    image = snap.samples["front"].reading
    assert np.array_equal(np.frombuffer(depth.data, "<f4").reshape(6, 8), image.depth)
    color = raw.FromString(images["/camera/front/color"][1].data)
    assert color.encoding == "rgb8" and color.step == 24


def test_path_taken_or_missing_folder(tmp_path: Path) -> None:
    taken = tmp_path / "taken.mcap"
    taken.write_bytes(b"x")
    sim = Simulation("highway")
    with pytest.raises(RecordingError, match="the file exists"):
        Capture(sim, [Recorder(taken)]).start()
    with pytest.raises(RecordingError, match="no folder"):
        Capture(sim, [Recorder(tmp_path / "nope" / "x.mcap")]).start()
    with pytest.raises(RecordingError, match="compression"):
        Recorder(tmp_path / "x.mcap", compression="gzip")
    Capture(sim, [Recorder(taken, overwrite=True)]).start().close()
    assert taken.stat().st_size > 100


def test_quaternions_round_trip() -> None:
    rng = np.random.default_rng(0)
    from roadsim.sensors.mount import rotation_rpy

    for _ in range(50):
        r = rotation_rpy(*rng.uniform(-np.pi, np.pi, 3))
        q = quaternion(r)
        assert np.linalg.norm(q) == pytest.approx(1.0)
        assert np.allclose(rotation_of(*q), r, atol=1e-12)
    for r in (np.eye(3), np.diag([1.0, -1.0, -1.0]), np.diag([-1.0, 1.0, -1.0]), np.diag([-1.0, -1.0, 1.0])):
        assert np.allclose(rotation_of(*quaternion(r)), r)
