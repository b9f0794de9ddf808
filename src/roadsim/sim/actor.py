"""`Actor`: one actor of a simulation at one frame, looked up by name or id.

The simulation keeps its actors as arrays (`roadsim.world.state.WorldState`); an `Actor`
is a copy of one actor's row, made on demand by `roadsim.Simulation.actor`, with its name
and the names of its kind, model, road and lane. It does not change as the simulation
goes on: ask again for the next frame.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from roadsim.road.network import RoadNetwork
from roadsim.world.state import KIND_NAMES, WorldState

__all__ = ["Actor"]


@dataclass(frozen=True)
class Actor:
    """One actor at one frame (SI units, world frame; see `roadsim.WorldState`).

    Attributes:
        id: Its actor id (stable; never reused).
        name: Its name: ``"ego"`` for the ego, a scenario object's ``name``; None for
            other actors.
        kind: ``"vehicle"``, ``"static_object"`` or ``"scripted_object"``.
        model: The vehicle model or object kind: car, truck, bus, box, cone, barrier,
            map_object, pedestrian, cyclist.
        active: Whether it exists in this frame (a scripted object before its creation
            and after its deletion does not).
        frame, time: The frame (s: ``frame * dt``).
        x, y, z, heading: Pose of its box centre on the ground (m, rad).
        speed, accel, yaw_rate: m/s, m/s^2, rad/s.
        length, width, height: Box size (m).
        road, lane: The OpenDRIVE road id and lane id it is on (None: on no lane).
        s, t: Its road coordinates (m; NaN on no lane).
        collided: It overlapped another actor in this frame.
    """

    id: int
    name: str | None
    kind: str
    model: str
    active: bool
    frame: int
    time: float
    x: float
    y: float
    z: float
    heading: float
    speed: float
    accel: float
    yaw_rate: float
    length: float
    width: float
    height: float
    road: str | None
    lane: int | None
    s: float
    t: float
    collided: bool

    @classmethod
    def of(
        cls,
        state: WorldState,
        slot: int,
        *,
        name: str | None,
        model_names: tuple[str, ...],
        net: RoadNetwork,
        frame: int,
        time: float,
    ) -> Actor:
        """The actor in ``slot`` of ``state``."""
        uid = int(state.uid[slot])
        on = uid >= 0
        return cls(
            id=int(state.id[slot]),
            name=name,
            kind=KIND_NAMES[int(state.kind[slot])],
            model=model_names[int(state.model[slot])],
            active=bool(state.active[slot]),
            frame=frame,
            time=time,
            x=float(state.x[slot]),
            y=float(state.y[slot]),
            z=float(state.z[slot]),
            heading=float(state.heading[slot]),
            speed=float(state.speed[slot]),
            accel=float(state.accel[slot]),
            yaw_rate=float(state.yaw_rate[slot]),
            length=float(state.length[slot]),
            width=float(state.width[slot]),
            height=float(state.height[slot]),
            road=net.road_ids[int(net.lanes.road[uid])] if on else None,
            lane=int(net.lanes.lane_id[uid]) if on else None,
            s=float(state.s[slot]) if on else math.nan,
            t=float(state.t[slot]) if on else math.nan,
            collided=bool(state.collided[slot]),
        )
