"""The exceptions roadsim raises for a user's mistake.

Every error names where the mistake is (a file, a line, an element or a key path) and what
was expected, so that the CLI can print it in one or two lines without a traceback.

    RoadsimError
    ├── MapError          a malformed or inconsistent OpenDRIVE file
    ├── ScenarioError     a scenario file that does not validate
    ├── QueryError        a query on a road network with arguments that do not exist
    ├── ArgumentError     a Python call with a value out of its range (also a ValueError)
    └── ArgumentTypeError a Python call with an argument of the wrong type (also a TypeError)
"""

from __future__ import annotations

__all__ = [
    "ArgumentError",
    "ArgumentTypeError",
    "MapError",
    "MapWarning",
    "QueryError",
    "RoadsimError",
    "ScenarioError",
    "TrafficWarning",
]


class RoadsimError(Exception):
    """Base class of every error roadsim raises for bad input."""


class MapError(RoadsimError):
    """An OpenDRIVE file that cannot be loaded.

    Attributes:
        path: The file, or ``None`` for a map given as text.
        line: The 1-based source line of the offending element, when known.
        element: The XML element's tag, when known.
        road_id: The id of the road the element belongs to, when there is one.
        reason: What is wrong and what was expected.
    """

    def __init__(
        self,
        reason: str,
        *,
        path: str | None = None,
        line: int | None = None,
        element: str | None = None,
        road_id: str | None = None,
    ) -> None:
        self.reason = reason
        self.path = path
        self.line = line
        self.element = element
        self.road_id = road_id
        super().__init__(self._format())

    def _format(self) -> str:
        where = self.path or "<string>"
        if self.line is not None:
            where += f":{self.line}"
        parts = [where]
        if self.element:
            parts.append(f"<{self.element}>")
        if self.road_id is not None:
            parts.append(f"road {self.road_id}")
        return f"{' '.join(parts)}: {self.reason}"


class ScenarioError(RoadsimError):
    """A scenario file that does not validate."""


class QueryError(RoadsimError, KeyError):
    """A road-network query naming a road, lane or signal that does not exist."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class ArgumentError(RoadsimError, ValueError):
    """A value a Python call cannot take: NaN, a negative duration, a point beyond the end
    of a road. The message names the argument, the value and what was expected."""


class ArgumentTypeError(RoadsimError, TypeError):
    """An argument of the wrong type: a string for a number, ``0.5`` for an id. The message
    names the argument, what it got and what was expected."""


class TrafficWarning(UserWarning):
    """Traffic a scenario asks for that the simulation cannot give it in full (more
    vehicles than the spawn lanes hold)."""


class MapWarning(UserWarning):
    """Something in an OpenDRIVE file that roadsim ignores (an unknown element)."""
