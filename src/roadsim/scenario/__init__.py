"""Scenarios: the YAML scenario format, its loading and its checks against the map.

See `roadsim.scenario.schema` for the format, `roadsim.scenario.load` for loading files and
built-in scenarios, and `roadsim.scenario.validate` for the checks against the map.
"""

from roadsim.scenario.load import builtin_scenarios, load_scenario, parse_scenario
from roadsim.scenario.schema import VEHICLE_MODELS, Scenario, VehicleModel, scenario_json_schema
from roadsim.scenario.validate import SpawnPose, resolve_spawn, validate_against_map

__all__ = [
    "VEHICLE_MODELS",
    "Scenario",
    "SpawnPose",
    "VehicleModel",
    "builtin_scenarios",
    "load_scenario",
    "parse_scenario",
    "resolve_spawn",
    "scenario_json_schema",
    "validate_against_map",
]
