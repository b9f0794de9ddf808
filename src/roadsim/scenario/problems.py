"""Problems in a scenario document, located: key paths, the lines they were written on, and
pydantic's validation errors turned into one message per problem.

This module knows nothing of the scenario format itself (`roadsim.scenario.schema` builds
on it), so that both the schema and the modules that load and check scenarios can report
problems the same way::

    town.yaml:3: traffic.cout: unknown key (did you mean 'count'?)
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from roadsim.errors import ScenarioError

__all__ = [
    "MAX_PROBLEMS",
    "OBJECT_TYPE_ERROR",
    "KeyPath",
    "SourceMap",
    "describe_error",
    "format_path",
    "unknown_type_message",
    "validate_model",
]

KeyPath = tuple[str | int, ...]

#: At most this many problems are listed in one error.
MAX_PROBLEMS = 5

#: The pydantic error type of an object of an unknown ``type``; its context's ``expected``
#: holds the known types, ``|``-separated.
OBJECT_TYPE_ERROR = "object_type"

Model = TypeVar("Model", bound=BaseModel)


@dataclass(frozen=True)
class SourceMap:
    """Where each key path of a scenario was written, for error messages.

    Attributes:
        name: The file as shown in messages.
        lines: 1-based line of each key (or list item) by key path.
    """

    name: str
    lines: Mapping[KeyPath, int] = field(default_factory=dict)

    def line(self, path: KeyPath) -> int | None:
        """The line of ``path``, or of its nearest ancestor that was written."""
        for k in range(len(path), -1, -1):
            if path[:k] in self.lines:
                return self.lines[path[:k]]
        return None

    def describe(self, path: KeyPath, message: str) -> str:
        """``name:line: key.path: message``."""
        line = self.line(path)
        where = self.name if line is None else f"{self.name}:{line}"
        return f"{where}: {format_path(path)}: {message}" if path else f"{where}: {message}"

    def error(self, problems: Sequence[tuple[KeyPath, str]]) -> ScenarioError:
        """One error listing the problems in file order."""
        ordered = sorted(problems, key=lambda p: self.line(p[0]) or 0)
        text = [self.describe(path, message) for path, message in ordered[:MAX_PROBLEMS]]
        if len(ordered) > MAX_PROBLEMS:
            text.append(f"... and {len(ordered) - MAX_PROBLEMS} more problems")
        return ScenarioError("\n".join(text))


def format_path(path: KeyPath) -> str:
    """``("objects", 0, "size")`` -> ``"objects[0].size"``."""
    out = ""
    for item in path:
        out += f"[{item}]" if isinstance(item, int) else (f".{item}" if out else str(item))
    return out


def unknown_type_message(kind: object, known: list[str]) -> str:
    """``unknown type 'drivr' (did you mean 'driver'?), expected driver``."""
    close = difflib.get_close_matches(kind, known, n=1) if isinstance(kind, str) else []
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"unknown type {kind!r}{hint}, expected {'|'.join(known)}"


def validate_model(
    model: type[Model],
    data: Any,
    source: SourceMap | str,
    *,
    union_tags: frozenset[str] = frozenset(),
) -> Model:
    """Validates parsed YAML data (plain dicts and lists) into ``model``.

    Args:
        model: The pydantic model of the document.
        data: The document's data.
        source: Where the data came from (a name alone if its lines are not known).
        union_tags: The tags of the model's discriminated unions, which pydantic puts in
            error locations and which are no keys of the document.

    Raises:
        ScenarioError: Naming the line and key path of every problem (at most `MAX_PROBLEMS`).
    """
    source = source if isinstance(source, SourceMap) else SourceMap(source)
    if data is None:
        raise source.error([((), "the scenario is empty; expected a mapping with at least 'map'")])
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors()
        problems = [describe_error(e, union_tags) for e in errors]
        # A list with a bad item is also reported as too short (pydantic counts only the
        # good items): keep the item's own error alone.
        problems = [
            (path, message)
            for (path, message), e in zip(problems, errors, strict=True)
            if e["type"] != "too_short"
            or not any(len(q) > len(path) and q[: len(path)] == path for q, _ in problems)
        ]
        raise source.error(problems) from None


# -- pydantic errors to key paths and messages ----------------------------------------------------

_EXPECTED = {
    "int_type": "expected an integer",
    "float_type": "expected a number",
    "string_type": "expected a string",
    "bool_type": "expected true or false",
    "finite_number": "expected a finite number",
    "tuple_type": "expected a list",
    "list_type": "expected a list",
    "dict_type": "expected a mapping",
    "model_type": "expected a mapping",
    "string_too_short": "expected a non-empty string",
    "greater_than": "expected a value > {gt}",
    "greater_than_equal": "expected a value >= {ge}",
    "less_than": "expected a value < {lt}",
    "less_than_equal": "expected a value <= {le}",
    "literal_error": "expected {expected}",
    "too_short": "expected at least {min_length} items",
    "too_long": "expected at most {max_length} items",
}


def describe_error(
    error: ErrorDetails, union_tags: frozenset[str] = frozenset()
) -> tuple[KeyPath, str]:
    """The key path and message of one pydantic error (``union_tags`` as in
    `validate_model`)."""
    path: KeyPath = tuple(p for p in error["loc"] if p not in union_tags and p != "[key]")
    kind, ctx, value = error["type"], error.get("ctx", {}), error.get("input")
    if kind == "at_path":
        return (*path, *ctx["path"]), ctx["message"]
    if kind == "unknown_key":
        return (*path, ctx["key"]), error["msg"]
    if kind == "missing" and path and isinstance(path[-1], str):
        return path[:-1], f"missing required key {path[-1]!r}"
    if kind == OBJECT_TYPE_ERROR:
        expected = str(ctx["expected"])
        if isinstance(value, dict) and "type" in value:
            return (*path, "type"), unknown_type_message(value["type"], expected.split("|"))
        if isinstance(value, dict):
            return path, f"missing required key 'type' ({expected})"
        return path, f"expected a mapping with a type ({expected}), got {_show(value)}"
    if kind == "value_error":
        return path, str(ctx.get("error", error["msg"]))
    if kind in _EXPECTED:
        message = _EXPECTED[kind].format(
            **{k: _show(v) if isinstance(v, float) else v for k, v in ctx.items()}
        )
        if kind in ("too_short", "too_long"):
            return path, f"{message}, got {ctx.get('actual_length')}"
        return path, f"{message}, got {_show(value)}"
    return path, error["msg"].replace("Input should be", "expected", 1)


def _show(value: object) -> str:
    """A value as YAML would write it, for messages."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, float):
        return f"{value:g}"
    return repr(value)
