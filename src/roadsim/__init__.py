"""roadsim: a fast, headless driving simulator on real OpenDRIVE road networks."""

from roadsim import errors
from roadsim.compiling import WarmupSummary, warmup
from roadsim.road.load import builtin_maps, load_map
from roadsim.road.network import RoadNetwork
from roadsim.scenario import Scenario, builtin_scenarios, load_scenario
from roadsim.sim import CollisionEvent, EgoCommand, Simulation
from roadsim.world.state import WorldState

__version__ = "0.1.0"

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


def __getattr__(name: str) -> object:
    # The server's client imports pyzmq, which `import roadsim` need not pay for.
    if name == "Client":
        from roadsim.server.client import Client

        return Client
    raise AttributeError(f"module 'roadsim' has no attribute {name!r}")
