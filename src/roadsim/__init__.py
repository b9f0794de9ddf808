"""roadsim: a fast, headless driving simulator on real OpenDRIVE road networks."""

from roadsim import errors
from roadsim.road.load import builtin_maps, load_map
from roadsim.road.network import RoadNetwork

__version__ = "0.1.0"

__all__ = ["RoadNetwork", "__version__", "builtin_maps", "errors", "load_map"]
