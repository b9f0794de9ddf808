"""Codes and constants that the compiled kernels read, in a module that imports nothing.

Kernels are cached by the sources of the modules they import (`roadsim._jit`), so the
values they compile in live here, apart from the Python code that also uses them:
editing that code compiles no kernel again.
"""

from __future__ import annotations

# How a lane record ends for traffic (`roadsim.world.lane_info.LaneInfo.end_kind`).
CONTINUES, LANE_DROP, MAP_EDGE = 0, 1, 2

# What a traffic light shows (`roadsim.world.traffic_lights`).
RED, YELLOW, GREEN = 0, 1, 2

# m/s^2 with which traffic slows down before a curve (`roadsim.world.lane_samples`).
ENVELOPE_DECEL = 1.5

# Route salts (`roadsim.world.lane_kernels.choose_next`) are drawn below 2**63; this bit
# marks a vehicle too long for tight turns, which it avoids at forks that offer another way.
LONG_ROUTE_BIT = 63
# ... and this one the vehicle that follows the scenario's route (the ego's ``route``).
ROUTE_BIT = 62
# m: the vehicles that carry it (at least this long), and the tightest turn radius they
# take where they have a choice.
LONG_VEHICLE = 8.0
LONG_MIN_RADIUS = 12.0
# m: the tightest turn radius long vehicles can make at all (a 12 m truck's 6.5 m wheelbase
# at its 49 degree lock turns on 5.7 m, and swings wider than its lane on the way); they
# keep off the lanes that lead only into tighter turns (`roadsim.world.lane_info`).
LONG_TURN_RADIUS = 7.0
# m: a road shorter than this between two junctions has no room for a long vehicle to wait
# on (its 12 m, 2 m behind it and the 3 m it keeps before the next entry): long vehicles
# keep off such links as off the turns they cannot make.
LONG_LINK = 17.0
# m: a lane narrower than this has no room for a long vehicle (a truck is 2.5 m wide, a bus
# 2.55 m): long vehicles keep off it as off the turns they cannot make.
LONG_WIDTH = 2.5
