"""The driver sensor: what a driver sees of its own vehicle, the lanes, the rules and the
traffic around it (openPASS' ``Sensor_Driver``, `roadsim.sensors.view` for the fields).

`DriverSensor` is built once per simulation from the lane tables and the light plan. Each
tick, `DriverSensor.occupancy` sorts the actors onto the lanes their footprints overlap,
and `DriverSensor.observe` runs the compiled pass (`roadsim.sensors.driver_kernels`) over
any number of vehicles at once. The traffic model perceives through this same pass (its
leaders, its neighbours for lane changes, the lights and the end of its lane), asking
each row only for what it needs; `DriverSensor.views` turns a full pass into the
`roadsim.sensors.view.DriverViews` users read.

Where the openPASS document is terse, roadsim's contract is:

- the reference point is the centre of the front edge, and the main lane the lane
  containing it: the lane of the vehicle's centre, or the lane the route continues in,
  or (when the front is over the edge) the neighbour on that side;
- left and right, ahead and behind are in the main lane's driving direction; a neighbour
  lane driven the other way is read in that direction too (its curvature negated, its
  stream followed through its predecessors);
- an object is ahead when its centre is ahead of the vehicle's centre; gaps are bumper to
  bumper along the lanes, with the object's extent along its lane (a box standing across
  the lane is as long as it is wide);
- the lane markings of a lane side are the OpenDRIVE road marks on that border (a lane's
  ``<roadMark>`` lies on its outer border, so the inner border of lanes 1 and -1 carries
  the centre lane's), with consecutive equal marks merged.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from roadsim._jit import chunks_for
from roadsim._types import FloatArray, IntArray, UIntArray
from roadsim.road.graph import END_OF_LANE_TYPES
from roadsim.road.signals import SignalIndex
from roadsim.scenario.schema import VEHICLE_MODELS
from roadsim.sensors.driver_kernels import (
    END,
    Actors,
    Out,
    Tables,
    observe,
)
from roadsim.sensors.occupancy import LaneOccupancy, footprints
from roadsim.sensors.view import MISSING, DriverViews, MarkingTable, SignalTable
from roadsim.world.lane_info import LaneInfo
from roadsim.world.lane_kernels import by_lane
from roadsim.world.state import WorldState
from roadsim.world.traffic_lights import TrafficLightPlan

#: How far a driver sees by default (m).
DEFAULT_VISIBILITY = 300.0
#: Steering ratio of actors that are no vehicle model (their steering angle is 0 anyway).
_DEFAULT_RATIO = 15.0
NO_MARK = "none"  # the type of a lane border no road mark covers


class DriverSensor:
    """The driver sensor of every vehicle of one simulation.

    Args:
        info: The lane tables.
        lights: The traffic-light plan.
        model_names: The model name of each model code of `WorldState.model`.

    Attributes:
        signals: The signal table the views index.
        markings: The names of the lane-marking codes.
    """

    def __init__(self, info: LaneInfo, lights: TrafficLightPlan, model_names: tuple[str, ...]):
        self.info = info
        self.lights = lights
        net = info.net
        graph = net.graph
        index = SignalIndex(net, graph)
        self.signals = _signal_table(index)
        marks, self.markings = _marking_segments(info)
        self.tables = Tables(
            succ_ptr=graph.succ_ptr.astype(np.int64),
            succ_idx=graph.succ_idx.astype(np.int64),
            pred_ptr=graph.pred_ptr.astype(np.int64),
            pred_idx=graph.pred_idx.astype(np.int64),
            lane_row=_lane_rows(
                np.array([t in END_OF_LANE_TYPES for t in net.lanes.type_name], dtype=np.int64),
                index.lane_ptr,
                marks.pop("mark_ptr"),
            ),
            **_lane_signals(index),
            sig_light=np.array([sig.dynamic for sig in index.signals], dtype=np.int64),
            sig_plan=_plan_index(index, lights),
            **marks,
        )
        self._ratio = np.array(
            [
                VEHICLE_MODELS[name].steering_ratio if name in VEHICLE_MODELS else _DEFAULT_RATIO
                for name in model_names
            ]
        )
        self._sizes = (64, 64, 256)  # flat list room of each chunk, grown as needed

    # -- per tick -------------------------------------------------------------------------------

    def occupancy(
        self,
        state: WorldState,
        extra: tuple[IntArray, IntArray, FloatArray] | None = None,
        boxes: tuple[FloatArray, FloatArray, FloatArray] | None = None,
    ) -> LaneOccupancy:
        """Every active actor on the lanes its footprint overlaps, sorted (``extra``: see
        `roadsim.sensors.occupancy.footprints`; ``boxes``: each actor's s, t and length
        to take instead of the state's)."""
        s, t, length = (state.s, state.t, state.length) if boxes is None else boxes
        return footprints(
            self.info.arrays,
            state.active,
            state.uid,
            s,
            t,
            state.heading,
            length,
            state.width,
            extra,
        )

    def actors(self, state: WorldState, salt: UIntArray) -> Actors:
        """What the kernels read of every actor (``salt``: route salts by slot)."""
        return Actors(
            id=state.id,
            kind=state.kind,
            uid=state.uid,
            road=state.road,
            s=state.s,
            t=state.t,
            x=state.x,
            y=state.y,
            heading=state.heading,
            speed=state.speed,
            accel=state.accel,
            steer=state.steer,
            length=state.length,
            width=state.width,
            height=state.height,
            collided=state.collided,
            model=state.model,
            model_ratio=self._ratio,
            salt=salt,
        )

    def observe(
        self,
        actors: Actors,
        occ: LaneOccupancy,
        slots: IntArray,
        time: float,
        *,
        visibility: FloatArray | float = DEFAULT_VISIBILITY,
        out: Out | None = None,
        order: IntArray | None = None,
    ) -> Out:
        """Runs the sensor for the vehicles in ``slots``.

        Args:
            actors: `actors` of this frame.
            occ: `occupancy` of this frame.
            slots: Actor slots of the vehicles, one row each.
            time: Simulation time (s), for the lights.
            visibility: Per row or for all (m).
            out: Results of an earlier call over as many rows to write over; new arrays
                by default.
            order: The order to visit the rows in (`roadsim.world.lane_kernels.by_lane`
                of their lanes, by default).

        Returns:
            The kernel's raw results (`roadsim.sensors.driver_kernels.Out`), by row.
        """
        n = slots.shape[0]
        rows = np.ascontiguousarray(slots, dtype=np.int64)
        vis = _per_row(visibility, n, np.float64)
        shown = self.shown(time)
        if order is None:
            order = by_lane(actors.uid[rows], self.info.n)
        la, tab = self.info.arrays, self.tables
        out = self.out_for(n, out)
        while True:
            observe(len(out.cursor), la, tab, occ, actors, rows, vis, shown, out, order)
            if out_fits(out):
                return out
            out = self.grown(out)

    def shown(self, time: float) -> IntArray:
        """What each light of the plan shows at ``time``, as the kernels read it."""
        return self.lights.state(time).astype(np.int64) if self.lights.signals else _NO_LIGHTS

    def out_for(self, n: int, out: Out | None = None) -> Out:
        """Results for a pass over ``n`` rows: ``out`` (an earlier pass's) where it fits,
        else new arrays."""
        chunks = chunks_for(n)
        if out is not None:
            sizes = (out.sign_signal.size, out.light_signal.size, out.mark_type.size)
            room = tuple(size * chunks for size in self._sizes)
            if out.speed.shape[0] == n and len(out.cursor) == chunks and sizes == room:
                return out
        signs, lights, marks = (size * chunks for size in self._sizes)
        return Out.empty(n, signs, lights, marks, chunks)

    def grown(self, out: Out) -> Out:
        """New results with room for at least twice the lists of the pass that did not
        fit in ``out``, and that much more from now on."""
        chunks = len(out.cursor)
        used = out.cursor[:, :END] - np.arange(chunks)[:, None] * self._sizes
        self._sizes = tuple(  # type: ignore[assignment]
            max(size, 2 * int(need))
            for need, size in zip(used.max(axis=0), self._sizes, strict=True)
        )
        return self.out_for(out.speed.shape[0])

    def views(self, out: Out, ids: IntArray, frame: int, time: float) -> DriverViews:
        """The `DriverViews` of a full pass (``want`` everything) over vehicles ``ids``."""
        sign_ptr, sign_take = _compact(out.sign_start, out.sign_count)
        light_ptr, light_take = _compact(out.light_start, out.light_count)
        mark_ptr, mark_take = _compact(out.mark_start, out.mark_count)
        exist = out.object_slot >= 0
        return DriverViews(
            id=np.asarray(ids, dtype=np.int64).copy(),
            frame=frame,
            time=time,
            visibility_distance=out.visibility,
            absolute_velocity=out.speed,
            acceleration=out.accel,
            lateral_position=out.lateral,
            heading=out.heading,
            steering_wheel_angle=out.steering,
            distance_to_lane_boundary_left=out.boundary_left,
            distance_to_lane_boundary_right=out.boundary_right,
            collision=out.collision,
            lane_uid=out.lane_uid,
            lane_exists=out.lane_exists,
            lane_curvature=out.lane_curvature,
            lane_width=out.lane_width,
            lane_distance_to_end_of_lane=out.lane_end,
            object_id=out.object_id,
            object_exist=exist,
            object_is_static=out.object_static,
            object_absolute_velocity=out.object_speed,
            object_acceleration=out.object_accel,
            object_heading=out.object_heading,
            object_length=out.object_length,
            object_width=out.object_width,
            object_height=out.object_height,
            object_relative_longitudinal_distance=out.object_lon,
            object_relative_lateral_distance=out.object_lat,
            sign_ptr=sign_ptr,
            sign_signal=out.sign_signal[sign_take],
            sign_distance=out.sign_distance[sign_take],
            light_ptr=light_ptr,
            light_signal=out.light_signal[light_take],
            light_distance=out.light_distance[light_take],
            light_state=out.light_state[light_take],
            marking_ptr=mark_ptr,
            marking_type=out.mark_type[mark_take],
            marking_color=out.mark_color[mark_take],
            marking_width=out.mark_width[mark_take],
            marking_start=out.mark_distance[mark_take],
            signals=self.signals,
            markings=self.markings,
        )


_NO_LIGHTS = np.zeros(0, dtype=np.int64)


def out_fits(out: Out) -> bool:
    """Whether every chunk's lists of a pass fitted in its part of the flat arrays."""
    return bool((out.cursor[:, :END] <= out.cursor[:, END : 2 * END]).all())


def _per_row(value: npt.ArrayLike, n: int, dtype: type) -> npt.NDArray[Any]:
    """``value`` as a contiguous array of n rows (a scalar repeated)."""
    if isinstance(value, np.ndarray) and value.dtype == dtype and value.shape == (n,):
        return np.ascontiguousarray(value)
    return np.full(n, value, dtype=dtype)


def _compact(start: IntArray, count: IntArray) -> tuple[IntArray, IntArray]:
    """CSR pointers in row order, and the flat indices to gather, of lists written at
    ``start`` with ``count`` entries each (rows of shape (N, K), read row-major)."""
    s, c = start.ravel(), count.ravel()
    ptr = np.zeros(c.size + 1, dtype=np.int64)
    np.cumsum(c, out=ptr[1:])
    take = np.repeat(s - ptr[:-1], c) + np.arange(int(ptr[-1]), dtype=np.int64)
    return ptr, take


# -- tables -------------------------------------------------------------------------------------------


def _lane_rows(end_ok: IntArray, sig_ptr: IntArray, mark_ptr: IntArray) -> IntArray:
    """`roadsim.sensors.driver_kernels.Tables.lane_row` from its per-lane columns and
    CSR pointers (``mark_ptr`` by ``2 uid + border``)."""
    n = end_ok.size
    rows = np.zeros((n + 1, 4), dtype=np.int64)
    rows[:n, 0] = end_ok
    rows[:, 1] = sig_ptr
    rows[:, 2] = mark_ptr[0::2]
    rows[:n, 3] = mark_ptr[1:-1:2]
    rows[n, 3] = mark_ptr[-1]
    return rows


def _signal_table(index: SignalIndex) -> SignalTable:
    sigs = index.signals
    return SignalTable(
        id=tuple(sig.id for sig in sigs),
        type=tuple(sig.type for sig in sigs),
        subtype=tuple(sig.subtype for sig in sigs),
        country=tuple(sig.country for sig in sigs),
        value=np.array([sig.value for sig in sigs], dtype=np.float64),
        unit=tuple(sig.unit for sig in sigs),
    )


def _lane_signals(index: SignalIndex) -> dict[str, Any]:
    """The signals of each lane in order of their position along it."""
    n = index.lane_ptr.size - 1
    lane = np.repeat(np.arange(n, dtype=np.int64), np.diff(index.lane_ptr))
    order = np.lexsort((index.lane_signal, index.lane_pos, lane))
    return {
        "sig_idx": index.lane_signal[order].astype(np.int64),
        "sig_pos": index.lane_pos[order].astype(np.float64),
    }


def _plan_index(index: SignalIndex, lights: TrafficLightPlan) -> IntArray:
    """The light plan's index of each signal of ``index`` (-1 for signs).

    Both list the map's signals in file order with references resolved, the plan only
    the dynamic ones; so the k-th dynamic signal of the index is the plan's k-th.
    """
    dynamic = np.array([sig.dynamic for sig in index.signals], dtype=bool)
    out = np.full(dynamic.size, -1, dtype=np.int64)
    out[dynamic] = np.arange(int(dynamic.sum()), dtype=np.int64)
    if int(dynamic.sum()) != len(lights.signals):
        raise ValueError("the light plan and the signal index disagree on the map's lights")
    return out


def _marking_segments(info: LaneInfo) -> tuple[dict[str, Any], MarkingTable]:
    """The road marks on both borders of every lane, as segments along s.

    OpenDRIVE 1.8, 9.6: a lane's ``<roadMark>`` records lie on its outer border, each from
    its ``sOffset`` to the next record or the end of the lane section. So the border at
    larger t is a left lane's own outer border and, for a right lane, the outer border of
    the lane inside it (the centre lane's, for lane -1); the other way round at smaller t.
    Stretches no record covers are marked `NO_MARK`.
    """
    lanes = info.net.lanes
    n = len(lanes.lanes)
    types: dict[str, int] = {NO_MARK: 0}
    colors: dict[str, int] = {"standard": 0}
    segments: list[
        tuple[float, float, int, int, float, int]
    ] = []  # s0, s1, type, colour, width, row
    for u in range(n):
        lane_id = int(lanes.lane_id[u])
        a, b = float(info.s0[u]), float(info.s1[u])
        for side in (0, 1):  # 0: the border at larger t
            own = (lane_id > 0) == (side == 0)
            owner = u if own or lane_id == 0 else int(lanes.inner[u])
            row = 2 * u + side
            records = sorted(lanes.lanes[owner].road_marks, key=lambda m: m.s_offset)
            cuts = [a + max(m.s_offset, 0.0) for m in records] + [b]
            if not records or cuts[0] > a + 1e-9:
                segments.append((a, min(cuts[0], b), 0, 0, 0.0, row))
            for k, mark in enumerate(records):
                lo, hi = min(cuts[k], b), min(cuts[k + 1], b)
                if hi > lo or (k == 0 and a == b):
                    kind = types.setdefault(mark.type, len(types))
                    colour = colors.setdefault(mark.color, len(colors))
                    segments.append((lo, hi, kind, colour, float(mark.width or 0.0), row))
    s0, s1, kind_code, color_code, width, rows = (
        [list(c) for c in zip(*segments, strict=True)] if segments else [[] for _ in range(6)]
    )
    ptr = np.zeros(2 * n + 1, dtype=np.int64)
    np.cumsum(np.bincount(np.array(rows, dtype=np.int64), minlength=2 * n), out=ptr[1:])
    return (
        {
            "mark_ptr": ptr,
            # (codes as floats: one row per segment, one cache line for the kernel)
            "mark": np.array([s0, s1, kind_code, color_code, width], dtype=np.float64)
            .T.reshape(-1, 5)
            .copy(),
        },
        MarkingTable(types=tuple(types), colors=tuple(colors)),
    )


__all__ = ["DEFAULT_VISIBILITY", "MISSING", "DriverSensor"]
