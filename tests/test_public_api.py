"""The public API is deliberate: pin what `import roadsim` exports."""

import subprocess
import sys

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


def _fresh_python(code: str) -> str:
    """Runs ``code`` in a new interpreter; its stdout."""
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    return done.stdout


def test_light_uses_do_not_load_the_simulation() -> None:
    # The names are imported on first use: `roadsim --version` and reading a recording's
    # errors need neither numba nor the simulation.
    out = _fresh_python(
        "import sys, roadsim, roadsim.capture, roadsim.cli\n"
        "print(roadsim.__version__, sorted(m for m in ('numba', 'roadsim.sim') if m in sys.modules))"
    )
    assert out.split() == ["0.1.0", "[]"]
    out = _fresh_python(
        "import sys, roadsim, roadsim.capture\n"
        "roadsim.Simulation, roadsim.capture.Recorder\n"
        "print('roadsim.sim' in sys.modules, 'roadsim.capture.recorder' in sys.modules)"
    )
    assert out.split() == ["True", "True"]


def test_the_compile_report_listens_however_roadsim_is_imported() -> None:
    # A kernel module alone, without the package's namespace: the report is on.
    out = _fresh_python(
        "import sys, roadsim.world.collisions\n"
        "print('roadsim._compile_report' in sys.modules)"
    )  # (the module registers its listener when imported)
    assert out.strip() == "True"
