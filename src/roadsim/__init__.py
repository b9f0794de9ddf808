"""roadsim: a fast, headless driving simulator on real OpenDRIVE road networks.

Its names are imported on first use (`roadsim._lazy`), so that what needs little (the
command's ``--version``, reading a recording) does not wait for numba and the
simulation to load.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from roadsim._lazy import exports

__version__ = "0.1.0"

__getattr__, __dir__ = exports(
    __name__,
    {
        "Client": "roadsim.server.client",
        "CollisionEvent": "roadsim.sim",
        "EgoCommand": "roadsim.sim",
        "RoadNetwork": "roadsim.road.network",
        "Scenario": "roadsim.scenario",
        "Simulation": "roadsim.sim",
        "WarmupSummary": "roadsim.compiling",
        "WorldState": "roadsim.world.state",
        "builtin_maps": "roadsim.road.load",
        "builtin_scenarios": "roadsim.scenario",
        "errors": "roadsim.errors",
        "load_map": "roadsim.road.load",
        "load_scenario": "roadsim.scenario",
        "warmup": "roadsim.compiling",
    },
)

__all__ = [
    "Client",
    "CollisionEvent",
    "EgoCommand",
    "RoadNetwork",
    "Scenario",
    "Simulation",
    "WarmupSummary",
    "WorldState",
    "__version__",
    "builtin_maps",
    "builtin_scenarios",
    "errors",
    "load_map",
    "load_scenario",
    "warmup",
]

if TYPE_CHECKING:
    from roadsim import errors
    from roadsim.compiling import WarmupSummary, warmup
    from roadsim.road.load import builtin_maps, load_map
    from roadsim.road.network import RoadNetwork
    from roadsim.scenario import Scenario, builtin_scenarios, load_scenario
    from roadsim.server.client import Client
    from roadsim.sim import CollisionEvent, EgoCommand, Simulation
    from roadsim.world.state import WorldState
