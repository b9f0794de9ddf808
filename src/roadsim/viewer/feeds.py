"""The viewer's three feeds, made from snapshots: the ego, the world's other actors, the lanes.

Each feed turns a `roadsim.capture.Snapshot` into a plain dict that msgpack packs (arrays
as little-endian bytes: float32, int32, uint8), in one of two forms:

- a *key* message holds everything a client needs to draw the frame from nothing;
- a *delta* holds only what changed since the previous snapshot the feed saw: the world
  objects added (with their kind, model and size) and removed, the poses of those that
  moved, and the lanes only when the lane sensor's version changed.

Positions are in the world frame (x east, y north, z up, heading counter-clockwise from
x, m and rad) minus the lane table's ``origin``, so that float32 keeps millimetres on a
large map; converting to three.js' y-up frame is the client's business.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from roadsim._types import FloatArray, IntArray
from roadsim.capture import CaptureInfo, Snapshot
from roadsim.road.network import RoadNetwork
from roadsim.scenario.load import parse_scenario
from roadsim.scenario.paths import resolve_paths
from roadsim.scenario.schema import PathObject
from roadsim.viewer.lanes import DEFAULT_RADIUS_M, LanePicker, LaneTable

__all__ = ["EgoSensorFeed", "LaneSensorFeed", "WorldSensorFeed"]

#: Path samples sent per scripted object, at most.
_PATH_POINTS = 200


def _f32(values: Any) -> bytes:
    return np.ascontiguousarray(values, dtype="<f4").tobytes()


def _i32(values: Any) -> bytes:
    return np.ascontiguousarray(values, dtype="<i4").tobytes()


def _u8(values: Any) -> bytes:
    return np.ascontiguousarray(values, dtype=np.uint8).tobytes()


class EgoSensorFeed:
    """The ego vehicle: id, pose, size, speed, acceleration, steering angle and model.

    Sent whole every frame (a few dozen bytes); None without an ego or once it is gone.
    """

    def __init__(self, info: CaptureInfo, origin: FloatArray) -> None:
        self._models = info.model_names
        self._origin = origin

    def message(self, snap: Snapshot) -> dict[str, Any] | None:
        a = snap.actors
        k = _row(a.id, snap.ego_id)
        if k < 0:
            return None
        return {
            "id": int(a.id[k]),
            "model": self._models[int(a.model[k])],
            "pose": [
                float(a.x[k] - self._origin[0]),
                float(a.y[k] - self._origin[1]),
                float(a.z[k] - self._origin[2]),
                float(a.heading[k]),
            ],
            "size": [float(a.length[k]), float(a.width[k]), float(a.height[k])],
            "speed": float(a.speed[k]),
            "accel": float(a.accel[k]),
            "steer": float(a.steer[k]),
            "collided": bool(a.collided[k]),
        }


class WorldSensorFeed:
    """Every actor but the ego, by id: kind, model, size once; pose and speed as they change.

    A key message lists every object as added; a delta lists those added and removed since
    the previous snapshot and the pose (x, y, z, heading) and speed of those whose float32
    values changed. ``collided`` lists the ids that overlap another actor this frame.
    Scripted objects' paths and creation radii (static for a run) go in key messages only.
    """

    def __init__(self, info: CaptureInfo, net: RoadNetwork, origin: FloatArray) -> None:
        self._origin = origin
        self._scripts = _scripted_paths(info, net, origin)
        self._ids: IntArray = np.zeros(0, dtype=np.int64)
        self._poses = np.zeros((0, 5), dtype=np.float32)

    def reset(self) -> None:
        """Forgets the previous snapshot: the next delta is a whole frame."""
        self._ids = np.zeros(0, dtype=np.int64)
        self._poses = np.zeros((0, 5), dtype=np.float32)

    def _rows(self, snap: Snapshot) -> tuple[IntArray, np.ndarray[Any, Any], IntArray]:
        a = snap.actors
        rows = np.flatnonzero(a.id != snap.ego_id)
        poses = np.empty((rows.size, 5), dtype=np.float32)
        poses[:, 0] = a.x[rows] - self._origin[0]
        poses[:, 1] = a.y[rows] - self._origin[1]
        poses[:, 2] = a.z[rows] - self._origin[2]
        poses[:, 3] = a.heading[rows]
        poses[:, 4] = a.speed[rows]
        return a.id[rows], poses, rows

    def key(self, snap: Snapshot) -> dict[str, Any]:
        """Every object of ``snap`` (does not change what the next delta is against)."""
        ids, poses, rows = self._rows(snap)
        msg = self._message(snap, ids, poses, rows, np.ones(ids.size, dtype=bool), ids, [])
        msg["scripts"] = self._scripts
        return msg

    def delta(self, snap: Snapshot) -> dict[str, Any]:
        """What changed since the previous call (everything on the first)."""
        ids, poses, rows = self._rows(snap)
        # Both id lists are sorted (snapshots are sorted by id).
        keep_prev = np.isin(self._ids, ids, assume_unique=True)
        removed = self._ids[~keep_prev]
        if self._ids.size:
            where = np.minimum(np.searchsorted(self._ids, ids), self._ids.size - 1)
            known = self._ids[where] == ids
        else:
            where, known = np.zeros(ids.size, dtype=np.int64), np.zeros(ids.size, dtype=bool)
        added = ~known
        moved = added.copy()
        if known.any():
            moved[known] = np.any(self._poses[where[known]] != poses[known], axis=1)
        self._ids, self._poses = ids, poses
        return self._message(snap, ids, poses, rows, moved, ids[added], removed.tolist())

    def _message(
        self,
        snap: Snapshot,
        ids: IntArray,
        poses: np.ndarray[Any, Any],
        rows: IntArray,
        moved: Any,
        added: IntArray,
        removed: list[int],
    ) -> dict[str, Any]:
        a = snap.actors
        add_rows = rows[np.isin(ids, added, assume_unique=True)]
        collided = a.id[rows[a.collided[rows]]]
        return {
            "add": {
                "id": _i32(a.id[add_rows]),
                "kind": _u8(a.kind[add_rows]),
                "model": _u8(a.model[add_rows]),
                "size": _f32(np.stack((a.length[add_rows], a.width[add_rows], a.height[add_rows]), axis=1)),
            },
            "remove": _i32(removed),
            "pose": {"id": _i32(ids[moved]), "xyzhv": poses[moved].tobytes()},
            "collided": _i32(collided),
            "count": int(ids.size),
        }


class LaneSensorFeed:
    """The lanes within ``radius`` of the ego (all of them without an ego), with a version
    that changes only when the set of lanes does (`roadsim.viewer.lanes`)."""

    def __init__(self, table: LaneTable, radius: float = DEFAULT_RADIUS_M) -> None:
        self.table = table
        self._picker = LanePicker(table, radius)
        self._sent = -1

    def reset(self) -> None:
        self._sent = -1

    def _select(self, snap: Snapshot) -> Any:
        a = snap.actors
        k = _row(a.id, snap.ego_id)
        if k < 0:
            self._picker.radius = math.inf
            return self._picker.update(0.0, 0.0)
        return self._picker.update(float(a.x[k]), float(a.y[k]))

    def key(self, snap: Snapshot) -> dict[str, Any]:
        """The lanes for ``snap``, whole."""
        return self.table.message(self._select(snap))

    def delta(self, snap: Snapshot) -> dict[str, Any] | None:
        """The lanes if their version changed since the previous call, else None."""
        selection = self._select(snap)
        if selection.version == self._sent:
            return None
        self._sent = selection.version
        return self.table.message(selection)

    @property
    def version(self) -> int:
        return self._picker.selection.version


def _row(ids: IntArray, actor_id: int) -> int:
    """The row of ``actor_id`` in sorted ``ids``, -1 if absent."""
    if actor_id < 0 or ids.size == 0:
        return -1
    k = int(np.searchsorted(ids, actor_id))
    return k if k < ids.size and int(ids[k]) == actor_id else -1


def _scripted_paths(info: CaptureInfo, net: RoadNetwork, origin: FloatArray) -> list[dict[str, Any]]:
    """Each scripted object's id, path (float32 x, y, z) and creation radius.

    Scenario objects take the ids after the ego's, in file order
    (`roadsim.scenario.actors`).
    """
    if not info.scenario_yaml:
        return []
    scenario = parse_scenario(info.scenario_yaml, check_map=False)
    offset = 0 if scenario.ego is None else 1
    scripted = [(i, o) for i, o in enumerate(scenario.objects) if isinstance(o, PathObject)]
    if not scripted:
        return []
    paths = resolve_paths([o for _, o in scripted], net)
    out = []
    for (i, obj), path in zip(scripted, paths, strict=True):
        count = min(_PATH_POINTS, path.sample_dist.size)
        dist = np.linspace(0.0, float(path.knots[-1]), max(count, 2))
        x, y, _ = path.pose_at(dist)
        z = np.interp(dist, path.sample_dist, path.sample_z)
        xyz = np.stack((x - origin[0], y - origin[1], z - origin[2]), axis=1)
        out.append(
            {
                "id": offset + i,
                "name": obj.name or "",
                "kind": obj.kind,
                "path": _f32(xyz),
                "radius": float(obj.creation_radius),
            }
        )
    return out
