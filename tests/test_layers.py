"""Imports go one way between the layers of the package, in the order of DESIGN.md's
"Layers": road <- scenario, world <- sensors <- agents <- sim <- capture <- server, viewer
<- cli.

Every import a module runs is read with `ast`, at its top level or inside a function (an
import deferred into a function is a dependency all the same); imports under
``if TYPE_CHECKING:`` are left out, as they name types for the checker only.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import roadsim

PACKAGE = Path(roadsim.__file__).parent

#: The layers from the bottom up. Layers of one rank (scenario and world; server and viewer)
#: stand side by side: neither imports the other.
RANKS: dict[str, int] = {
    "base": 0,
    "road": 1,
    "scenario": 2,
    "world": 2,
    "sensors": 3,
    "agents": 4,
    "sim": 5,
    "capture": 6,
    "server": 7,
    "viewer": 7,
    "top": 8,
}

#: The top-level modules, which are no subpackage: helpers everything may use at the
#: bottom; the command line, the warm-up of the compiled kernels and the package's own
#: namespace (`roadsim/__init__.py`) on top.
MODULE_LAYERS: dict[str, str] = {
    "_checks": "base",
    "_compile_report": "base",
    "_lazy": "base",
    "_signatures": "base",
    "_jit": "base",
    "_trig": "base",
    "_types": "base",
    "errors": "base",
    "__init__": "top",
    "__main__": "top",
    "cli": "top",
    "cli_run": "top",
    "cli_record": "top",
    "cli_sensors": "top",
    "cli_serve": "top",
    "cli_view": "top",
    "compiling": "top",
}


def _layer(module: str) -> str | None:
    """``roadsim.world.state`` -> ``world``; ``roadsim`` -> ``top``; None if unknown."""
    parts = module.split(".")
    name = parts[1] if len(parts) > 1 else "__init__"
    return MODULE_LAYERS.get(name, name if name in RANKS else None)


def _type_checking_nodes(tree: ast.Module) -> set[int]:
    """The ids of every node under an ``if TYPE_CHECKING:`` (or ``typing.TYPE_CHECKING``)."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) in (
            "TYPE_CHECKING",
            "typing.TYPE_CHECKING",
        ):
            for child in node.body:
                out.update(id(n) for n in ast.walk(child))
    return out


def _imported_modules(node: ast.Import | ast.ImportFrom) -> list[str]:
    """The roadsim modules an import statement names."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] == "roadsim"]
    if node.level or node.module is None or node.module.split(".")[0] != "roadsim":
        return []
    if node.module != "roadsim":
        return [node.module]
    # ``from roadsim import x``: x is a module or subpackage, or a name of the package's
    # namespace (which belongs to the top layer).
    out = []
    for alias in node.names:
        name = alias.name
        is_module = (PACKAGE / f"{name}.py").exists() or (PACKAGE / name).is_dir()
        out.append(f"roadsim.{name}" if is_module else "roadsim")
    return out


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_every_module_has_a_layer() -> None:
    missing = sorted(
        {
            str(path.relative_to(PACKAGE.parent))
            for path in _modules()
            if _layer(_module_name(path)) is None
        }
    )
    assert not missing, f"modules of no layer (add them to the layers of {__file__}): {missing}"


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_go_down_the_layers(path: Path) -> None:
    own = _layer(_module_name(path))
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    skip = _type_checking_nodes(tree)
    wrong = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Import | ast.ImportFrom) or id(node) in skip:
            continue
        for module in _imported_modules(node):
            other = _layer(module)
            if other == own or other is None or own is None:
                continue  # unknown layers fail test_every_module_has_a_layer
            if RANKS[other] >= RANKS[own]:
                where = "above" if RANKS[other] > RANKS[own] else "beside"
                wrong.append(
                    f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: {own} imports "
                    f"{module} ({other} is {where} {own}): {ast.unparse(node)}"
                )
    assert not wrong, "imports against the layer order:\n" + "\n".join(wrong)
