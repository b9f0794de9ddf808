"""`RoadNetwork`: a loaded OpenDRIVE map that answers vectorised road and lane queries."""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from roadsim._types import FloatArray, IntArray
from roadsim.errors import ArgumentError, ArgumentTypeError, QueryError
from roadsim.road.checks import check_network
from roadsim.road.geometry import ReferenceLines
from roadsim.road.lanes import LaneRecords
from roadsim.road.model import Controller, Header, Junction, OpenDrive, Road, RoadObject, Signal
from roadsim.road.polynomials import PiecewiseCubics

if TYPE_CHECKING:
    from roadsim.road.graph import LaneGraph, SignalAhead
    from roadsim.road.localize import LanePosition, Localizer
    from roadsim.road.mesh import SurfaceMesh

RoadIds = str | int | Sequence[str] | Sequence[int] | npt.NDArray[np.generic]

_FD_STEP = 1e-3  # m, for derivatives of lateral offsets by central differences
#: How far beyond its ends (m) `RoadNetwork.to_world` takes an s, for rounding in the
#: caller's arithmetic (a road's length summed from its geometries, say).
_S_TOLERANCE = 1e-3


class RoadNetwork:
    """A road network loaded from OpenDRIVE; immutable after construction.

    Queries take arrays (or scalars) and return arrays. Roads are named by their OpenDRIVE
    id (a string; integers are accepted and converted), lanes by OpenDRIVE lane id, and
    every (road, lane section, lane) also has a stable integer *uid* (see
    `roadsim.road.lanes.LaneRecords`) for code that indexes arrays by lane.

    Parameter names say which: ``road_id`` and ``lane_id`` are OpenDRIVE ids (a lane id
    always beside a road id and an s, which pick the lane section), ``uid`` is a lane uid,
    and ``road`` (in the methods that take road indices, such as `to_world_index`) is a
    road index.

    Attributes:
        path: The file the network was loaded from, if any.
        header: The file's header (``header.geo_reference`` keeps the geoReference text).
        roads: The roads, in file order; ``roads[i]`` has road index ``i``.
        junctions, controllers: As in the file.
        road_ids: OpenDRIVE road id of each road index, shape (n_roads,).
        road_length: Length of each road's reference line (m), shape (n_roads,).
        road_junction: The id of the junction each road belongs to (None: none).
        road_lht: Whether each road has left-hand traffic (``rule="LHT"``), shape
            (n_roads,).
        reference: The roads' reference lines (planView; `ReferenceLines`).
        elevation, superelevation, lane_offset: Per-road functions of s
            (`PiecewiseCubics`): height (m), roll (rad) and lateral lane offset (m).
        lanes: Every lane section and lane record, as arrays by uid (`LaneRecords`).
        signals: Every road's signals, in file order.
        objects: Every road's objects, in file order.
        load_seconds: Wall time spent building the network, parsing and `prepare`
            included (s).
    """

    def __init__(self, doc: OpenDrive, *, load_seconds: float = 0.0) -> None:
        start = time.perf_counter()
        self.path: str | None = doc.path
        self.header: Header = doc.header
        self.roads: tuple[Road, ...] = doc.roads
        self.junctions: tuple[Junction, ...] = doc.junctions
        self.controllers: tuple[Controller, ...] = doc.controllers
        self.road_ids: tuple[str, ...] = tuple(r.id for r in doc.roads)
        self._road_index = {rid: i for i, rid in enumerate(self.road_ids)}
        self._road_id_array = np.array(self.road_ids, dtype=object)
        self.road_length: FloatArray = np.array([r.length for r in doc.roads], dtype=np.float64)
        self.road_junction: tuple[str | None, ...] = tuple(r.junction for r in doc.roads)
        self.road_lht: npt.NDArray[np.bool_] = np.array(
            [r.rule == "LHT" for r in doc.roads], dtype=bool
        )
        lengths = self.road_length.tolist()
        self.reference = ReferenceLines([r.geometries for r in doc.roads], lengths)
        self.elevation = PiecewiseCubics([r.elevation for r in doc.roads], lengths)
        self.superelevation = PiecewiseCubics([r.superelevation for r in doc.roads], lengths)
        self.lane_offset = PiecewiseCubics([r.lane_offset for r in doc.roads], lengths)
        self.lanes = LaneRecords(doc.roads)
        check_network(doc, self.reference)
        self.signals: tuple[Signal, ...] = tuple(sig for r in doc.roads for sig in r.signals)
        self.objects: tuple[RoadObject, ...] = tuple(obj for r in doc.roads for obj in r.objects)
        self.load_seconds = load_seconds + (time.perf_counter() - start)

    # -- names to indices ---------------------------------------------------------------------

    def road_index(self, road_id: RoadIds) -> IntArray:
        """Road indices for OpenDRIVE road ids (scalar or array).

        Raises:
            QueryError: For an id the network does not have.
        """
        ids = np.asarray(road_id, dtype=object)
        uniq, inverse = np.unique(ids.ravel().astype(str), return_inverse=True)
        out = np.empty(len(uniq), dtype=np.int64)
        for k, rid in enumerate(uniq.tolist()):
            idx = self._road_index.get(rid)
            if idx is None:
                raise QueryError(f"{self._name()}: no road with id {rid!r}")
            out[k] = idx
        return out[inverse.ravel()].reshape(ids.shape)

    def has_road(self, road_id: str) -> bool:
        """Whether the network has a road with this OpenDRIVE id."""
        return road_id in self._road_index

    def road_id_of(self, road_index: npt.ArrayLike) -> npt.NDArray[np.object_]:
        """OpenDRIVE road ids (strings) for road indices; ``None`` where the index is -1."""
        idx = np.asarray(road_index, dtype=np.int64)
        # (flat and reshaped: a single index would pick out the string itself)
        at = np.clip(idx, 0, max(len(self.road_ids) - 1, 0)).reshape(-1)
        out: npt.NDArray[np.object_] = self._road_id_array[at].reshape(idx.shape)
        out[idx < 0] = None
        return out

    def lane_uid(self, road_id: RoadIds, lane_id: npt.ArrayLike, s: npt.ArrayLike) -> IntArray:
        """The uid of lane ``lane_id`` in the lane section at ``s`` of each road.

        Raises:
            QueryError: If a road has no such lane at that s.
        """
        road, (lane, sv) = self._broadcast(road_id, lane_id, s)
        return self._uids(road, lane, sv).reshape(sv.shape)

    # -- reference line and the road frame ------------------------------------------------------

    def reference_pose(self, road: IntArray, s: FloatArray) -> tuple[FloatArray, ...]:
        """Reference line ``(x, y, z, hdg, curvature)`` at (road index, s)."""
        x, y, hdg, curv = self.reference.evaluate(road, s)
        z = self.elevation.evaluate(road, s)
        return x, y, z, hdg, curv

    def frame(
        self, road: IntArray, s: FloatArray
    ) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
        """The road frame at (road index, s): origin and unit axes, each shape (N, 3).

        ``e_s`` follows the reference line and its slope; ``e_t`` is the horizontal
        left normal rotated about ``e_s`` by the superelevation (OpenDRIVE 1.8, 8.4.2);
        ``e_h = e_s x e_t``.
        """
        x, y, hdg, _ = self.reference.evaluate(road, s)
        z = self.elevation.evaluate(road, s)
        slope = self.elevation.evaluate(road, s, derivative=1)
        roll = self.superelevation.evaluate(road, s)
        ch, sh = np.cos(hdg), np.sin(hdg)
        k = 1.0 / np.sqrt(1.0 + slope * slope)
        e_s = np.stack((ch * k, sh * k, slope * k), axis=-1)
        n_h = np.stack((-sh, ch, np.zeros_like(ch)), axis=-1)
        b = np.stack((-slope * k * ch, -slope * k * sh, k), axis=-1)
        cr, sr = np.cos(roll)[:, None], np.sin(roll)[:, None]
        e_t = cr * n_h + sr * b
        e_h = np.cross(e_s, e_t)
        return np.stack((x, y, z), axis=-1), e_s, e_t, e_h

    def to_world_index(
        self, road: IntArray, s: FloatArray, t: FloatArray, h: FloatArray | float = 0.0
    ) -> tuple[FloatArray, FloatArray, FloatArray]:
        """`to_world` for road indices."""
        origin, _, e_t, e_h = self.frame(road, s)
        tv = np.asarray(t, dtype=np.float64)[:, None]
        hv = np.broadcast_to(np.asarray(h, dtype=np.float64), tv.shape[:1])[:, None]
        p = origin + tv * e_t + hv * e_h
        return p[:, 0], p[:, 1], p[:, 2]

    def to_world(
        self, road_id: RoadIds, s: npt.ArrayLike, t: npt.ArrayLike, h: npt.ArrayLike = 0.0
    ) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Road coordinates to the world frame, elevation and superelevation applied.

        Args:
            road_id: OpenDRIVE road id(s).
            s: Position along the reference line (m), in [0, the road's length]; NaN
                gives NaN (so that `localize`'s answers off the road pass through).
            t: Lateral position, positive to the left of the reference line (m); any value,
                as the road frame reaches beside the road.
            h: Height above the road surface, along its normal (m).

        Returns:
            ``(x, y, z)`` arrays in the broadcast shape of the arguments.

        Raises:
            QueryError: For a road id the network does not have.
            ArgumentError: For an s before the start or beyond the end of its road (by more
                than 1 mm): the geometry would be extrapolated, which is no point of the
                road.
        """
        road, (sv, tv, hv) = self._broadcast(road_id, s, t, h)
        length = self.road_length[road]
        outside = (sv < -_S_TOLERANCE) | (sv > length + _S_TOLERANCE)
        if outside.any():
            k = np.flatnonzero(outside.ravel())[0]
            raise ArgumentError(
                f"{self._name()}: s={float(sv.ravel()[k]):g} is outside road "
                f"{self.road_ids[int(road.ravel()[k])]}, which runs from s=0 to "
                f"s={float(length.ravel()[k]):g} m"
            )
        shape = sv.shape
        x, y, z = self.to_world_index(road.ravel(), sv.ravel(), tv.ravel(), hv.ravel())
        return x.reshape(shape), y.reshape(shape), z.reshape(shape)

    # -- lanes ----------------------------------------------------------------------------------------

    def uid_t_outer(self, uid: IntArray, s: FloatArray) -> FloatArray:
        """Outer boundary t of lanes given by uid, with their own section's polynomials."""
        road = self.lanes.road[uid]
        return self.lanes.t_outer(uid, s, self.lane_offset.evaluate(road, s))

    def uid_t_center(self, uid: IntArray, s: FloatArray) -> FloatArray:
        """Lateral position of each lane's centre line (m)."""
        road = self.lanes.road[uid]
        offset = self.lane_offset.evaluate(road, s)
        outer = self.lanes.t_outer(uid, s, offset)
        inner = self.lanes.t_outer(self.lanes.inner_or_self(uid), s, offset)
        return 0.5 * (inner + outer)

    def uid_width(self, uid: IntArray, s: FloatArray) -> FloatArray:
        """Width of lanes given by uid at s (m)."""
        return self.lanes.width(uid, s)

    def uid_curvature(self, uid: IntArray, s: FloatArray) -> FloatArray:
        """Curvature of lane centre lines, signed in each lane's driving direction (1/m).

        The centre line is the offset curve ``r(s) + t_c(s) n(s)`` of the reference line;
        with reference curvature k, its curvature in the (tangent, normal) frame is
        ``(A*D - B*C) / (A**2 + B**2)**1.5`` with ``A = 1 - k t_c``, ``B = t_c'``,
        ``C = -k' t_c - 2 k t_c'``, ``D = k (1 - k t_c) + t_c''``.
        """
        road = self.lanes.road[uid]
        h = _FD_STEP
        t_m = self.uid_t_center(uid, s - h)
        t_0 = self.uid_t_center(uid, s)
        t_p = self.uid_t_center(uid, s + h)
        dt = (t_p - t_m) / (2 * h)
        ddt = (t_p - 2 * t_0 + t_m) / (h * h)
        _, _, _, k = self.reference.evaluate(road, s)
        _, _, _, k_m = self.reference.evaluate(road, s - h)
        _, _, _, k_p = self.reference.evaluate(road, s + h)
        dk = (k_p - k_m) / (2 * h)
        a = 1.0 - k * t_0
        c = -dk * t_0 - 2.0 * k * dt
        d = k * a + ddt
        curv = (a * d - dt * c) / np.power(a * a + dt * dt, 1.5)
        return curv * self.driving_sign(uid)

    def driving_sign(self, uid: IntArray) -> FloatArray:
        """+1 for lanes driven along +s, -1 for lanes driven against s, 0 for center lanes.

        Right-hand traffic drives right lanes (id < 0) along s; left-hand traffic the
        left lanes (id > 0).
        """
        lane_id = self.lanes.lane_id[uid]
        lht = self.road_lht[self.lanes.road[uid]]
        sign = np.where(lane_id < 0, 1.0, np.where(lane_id > 0, -1.0, 0.0))
        return np.where(lht, -sign, sign)

    def lane_t_outer(
        self, road_id: RoadIds, lane_id: npt.ArrayLike, s: npt.ArrayLike
    ) -> FloatArray:
        """Lateral position t of the outer boundary of a lane at s (m), laneOffset included."""
        road, (lane, sv) = self._broadcast(road_id, lane_id, s)
        uid = self._uids(road, lane, sv)
        return self.uid_t_outer(uid, sv.ravel()).reshape(sv.shape)

    def lane_width(self, road_id: RoadIds, lane_id: npt.ArrayLike, s: npt.ArrayLike) -> FloatArray:
        """Width of a lane at s (m)."""
        road, (lane, sv) = self._broadcast(road_id, lane_id, s)
        uid = self._uids(road, lane, sv)
        return self.uid_width(uid, sv.ravel()).reshape(sv.shape)

    def lane_curvature(
        self, road_id: RoadIds, lane_id: npt.ArrayLike, s: npt.ArrayLike
    ) -> FloatArray:
        """Curvature of a lane's centre line at s, signed in its driving direction (1/m)."""
        road, (lane, sv) = self._broadcast(road_id, lane_id, s)
        uid = self._uids(road, lane, sv)
        return self.uid_curvature(uid, sv.ravel()).reshape(sv.shape)

    # -- lane graph, localisation, mesh (built on first use, or all at once by prepare) ---------

    @cached_property
    def graph(self) -> LaneGraph:
        """The lane graph: successors, predecessors and neighbours of every lane uid."""
        from roadsim.road.graph import LaneGraph

        return LaneGraph(self)

    @cached_property
    def localizer(self) -> Localizer:
        """The spatial index behind `localize` and `surface_height`."""
        from roadsim.road.localize import Localizer

        return Localizer(self)

    def prepare(self) -> RoadNetwork:
        """Builds every index now (lane graph, localiser) instead of on first use."""
        start = time.perf_counter()
        _ = self.graph, self.localizer
        self.load_seconds += time.perf_counter() - start
        return self

    def successors(self, uid: int) -> list[int]:
        """Lane uids that follow lane ``uid`` in its driving direction.

        Lane queries by uid raise `QueryError` for a uid the network does not have and
        `ArgumentTypeError` for one that is not an integer (numpy integers are fine).
        """
        return self.graph.successors(uid)

    def predecessors(self, uid: int) -> list[int]:
        """Lane uids that lead into lane ``uid`` in its driving direction."""
        return self.graph.predecessors(uid)

    def left_neighbour(self, uid: int) -> int:
        """The lane to the left of ``uid`` in its driving direction (-1: none)."""
        return self.graph.left(uid)

    def right_neighbour(self, uid: int) -> int:
        """The lane to the right of ``uid`` in its driving direction (-1: none)."""
        return self.graph.right(uid)

    def distance_to_end_of_lane(
        self,
        uid: npt.ArrayLike,
        s: npt.ArrayLike,
        horizon: float = float("inf"),
        lane_types: Iterable[str] | None = None,
        route: Sequence[int] | None = None,
    ) -> FloatArray:
        """Distance from (lane ``uid``, s) to where its lane stream ends (openPASS
        semantics).

        See `roadsim.road.graph.LaneGraph.distance_to_end`.
        """
        return self.graph.distance_to_end(uid, s, horizon, lane_types, route)

    def signals_ahead(
        self, uid: int, s: float, horizon: float, route: Sequence[int] | None = None
    ) -> list[SignalAhead]:
        """Signals valid for lane ``uid`` within ``horizon`` ahead of s, nearest first."""
        return self.graph.signals_ahead(uid, s, horizon, route)

    def localize(
        self,
        x: npt.ArrayLike,
        y: npt.ArrayLike,
        z: npt.ArrayLike | None = None,
        heading: npt.ArrayLike | None = None,
    ) -> LanePosition:
        """The lane containing each world point; see `roadsim.road.localize.Localizer`."""
        return self.localizer.localize(x, y, z, heading)

    def surface_height(
        self, x: npt.ArrayLike, y: npt.ArrayLike, z_hint: npt.ArrayLike | None = None
    ) -> FloatArray:
        """Road surface elevation under each point (NaN off the road).

        Where surfaces overlap, the highest, or with ``z_hint`` the one nearest to it; see
        `roadsim.road.localize.Localizer.surface_height`.
        """
        return self.localizer.surface_height(x, y, z_hint)

    def surface_mesh(self) -> SurfaceMesh:
        """A triangle mesh of the road surface with a surface id per triangle.

        Built on the first call and kept: the network never changes.
        """
        return self._surface_mesh

    @cached_property
    def _surface_mesh(self) -> SurfaceMesh:
        from roadsim.road.mesh import build_surface_mesh

        return build_surface_mesh(self)

    # -- helpers ------------------------------------------------------------------------------------

    def _uids(self, road: IntArray, lane: FloatArray, s: FloatArray) -> IntArray:
        whole = lane.ravel() == np.trunc(lane.ravel())  # False for NaN too
        if not whole.all():  # astype would make lane -2.5 lane -2
            bad = float(lane.ravel()[np.flatnonzero(~whole)[0]])
            raise ArgumentTypeError(f"lane_id: expected integer lane ids, got {bad:g}")
        sec = self.lanes.section_at(road.ravel(), s.ravel())
        uid = self.lanes.uid_at(sec, lane.ravel().astype(np.int64))
        if np.any(uid < 0):
            bad = int(np.flatnonzero(uid < 0)[0])
            have = sorted(int(i) for i in self.lanes.lane_id[self._section_uids(int(sec[bad]))])
            raise QueryError(
                f"{self._name()}: road {self.road_ids[int(road.ravel()[bad])]} has no lane "
                f"{int(lane.ravel()[bad])} at s={float(s.ravel()[bad]):g}; lanes there: "
                f"{', '.join(map(str, have))}"
            )
        return uid

    def _section_uids(self, section: int) -> IntArray:
        f = int(self.lanes.sec_first_uid[section])
        return np.arange(f, f + int(self.lanes.sec_count[section]))

    def _broadcast(
        self, road_id: RoadIds, *values: npt.ArrayLike
    ) -> tuple[IntArray, tuple[FloatArray, ...]]:
        road = self.road_index(road_id)
        arrays = np.broadcast_arrays(road, *(np.asarray(v, dtype=np.float64) for v in values))
        # np.array, not ascontiguousarray: scalars must stay 0-d so results do too.
        floats = tuple(np.array(a, dtype=np.float64) for a in arrays[1:])
        return np.array(arrays[0], dtype=np.int64), floats

    def _name(self) -> str:
        return Path(self.path).name if self.path else "road network"

    def __repr__(self) -> str:
        return (
            f"RoadNetwork({self._name()!r}, roads={len(self.roads)}, junctions={len(self.junctions)}, "
            f"lanes={len(self.lanes.lanes)})"
        )
