"""The public API is deliberate: pin what `import roadsim` exports."""

import roadsim


def test_exported_members() -> None:
    assert sorted(roadsim.__all__) == [
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
    for name in roadsim.__all__:
        assert hasattr(roadsim, name)


def test_error_tree() -> None:
    from roadsim import errors

    for cls in (
        errors.MapError,
        errors.ScenarioError,
        errors.QueryError,
        errors.ArgumentError,
        errors.ArgumentTypeError,
    ):
        assert issubclass(cls, errors.RoadsimError)
    # Bad arguments are also what Python code expects to catch for them.
    assert issubclass(errors.ArgumentError, ValueError)
    assert issubclass(errors.ArgumentTypeError, TypeError)
    assert issubclass(errors.MapWarning, UserWarning)
