"""`load_map`: an OpenDRIVE file or a built-in map name to a `RoadNetwork`."""

from __future__ import annotations

import time
from importlib import resources
from pathlib import Path

from roadsim.errors import ArgumentError, MapError
from roadsim.road.network import RoadNetwork
from roadsim.road.xodr import read_xodr


def builtin_maps() -> list[str]:
    """Names of the maps shipped with roadsim (``load_map(name)`` loads them)."""
    folder = resources.files("roadsim.road") / "maps"
    return sorted(p.name[: -len(".xodr")] for p in folder.iterdir() if p.name.endswith(".xodr"))


def resolve_map(source: str | Path) -> Path:
    """The file behind a map argument: a path, or the name of a built-in map.

    Raises:
        ArgumentError: For an empty name (which `pathlib` would take for the working
            directory).
        MapError: For a name that is neither a file nor a built-in map.
    """
    if str(source) == "":
        raise ArgumentError(
            "the map name is empty; give an .xodr file or the name of a built-in map "
            f"({', '.join(builtin_maps())})"
        )
    path = Path(source)
    if path.suffix == "" and not path.exists():
        folder = resources.files("roadsim.road") / "maps"
        candidate = folder / f"{source}.xodr"
        if candidate.is_file():
            return Path(str(candidate))
        raise MapError(
            f"no such file, and no built-in map of that name (built-in: {', '.join(builtin_maps())})",
            path=str(source),
        )
    return path


def load_map(source: str | Path) -> RoadNetwork:
    """Loads an OpenDRIVE map, ready for every query.

    Args:
        source: A path to an ``.xodr`` file, or the name of a built-in map
            (see `builtin_maps`), e.g. ``"highway"``.

    Raises:
        MapError: If the file cannot be read or is not valid OpenDRIVE; the message names
            the file, line, element and road.
        ArgumentError: For an empty name.
    """
    start = time.perf_counter()
    path = resolve_map(source)
    doc = read_xodr(path)
    return RoadNetwork(doc, load_seconds=time.perf_counter() - start)
