"""Loading scenario files: YAML to a validated `Scenario`, with errors that name the line.

The YAML text is composed into a node tree first, so every key path keeps the line it was
written on; pydantic's error locations are translated to those key paths. Every mistake
raises `roadsim.errors.ScenarioError` with one line per problem, e.g.::

    town.yaml:3: traffic.cout: unknown key (did you mean 'count'?)
"""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from roadsim.errors import ScenarioError
from roadsim.road.load import builtin_maps, load_map
from roadsim.road.network import RoadNetwork
from roadsim.scenario.problems import KeyPath, SourceMap
from roadsim.scenario.schema import Scenario, validate_data
from roadsim.scenario.validate import validate_against_map

__all__ = [
    "builtin_scenarios",
    "load_scenario",
    "load_scenario_with_map",
    "parse_scenario",
    "validate_data",
]

#: The most values (scalars, lists and mappings) a scenario document may hold, counting
#: what each alias (``*name``) repeats as often as it is repeated. A scenario of 10,000
#: cones holds about 100,000; a document written to multiply through nested aliases
#: ("billion laughs") reaches this bound while it is counted, before it takes the memory
#: and the time that building and validating it would.
MAX_YAML_VALUES = 1_000_000


# -- files and built-ins --------------------------------------------------------------------------


def _builtin_folder() -> Path:
    return Path(str(resources.files("roadsim.scenario") / "scenarios"))


def builtin_scenarios() -> list[str]:
    """Names of the scenarios shipped with roadsim (``load_scenario(name)`` loads them)."""
    return sorted(p.stem for p in _builtin_folder().glob("*.yaml"))


def load_scenario(source: str | Path, *, check_map: bool = True) -> Scenario:
    """Loads and validates a scenario file.

    Args:
        source: A path to a YAML file, or the name of a built-in scenario (see
            `builtin_scenarios`), e.g. ``"highway"``.
        check_map: Also load the map and check the scenario against it (spawns on lanes
            that exist, no overlaps; see `roadsim.scenario.validate`).

    Raises:
        ScenarioError: If the file cannot be read or does not validate; the message names
            the file, line and key path of each problem.
        MapError: If the scenario's map is not valid OpenDRIVE.
    """
    path, name = _locate(source)
    text = _read_text(path, name)
    return parse_scenario(text, path, name=name, check_map=check_map)


def load_scenario_with_map(source: str | Path) -> tuple[Scenario, RoadNetwork]:
    """`load_scenario`, also returning the road network it was checked against (so that a
    simulation need not load the map a second time)."""
    path, name = _locate(source)
    scenario, net = _parse(_read_text(path, name), path, name=name, check_map=True)
    assert net is not None
    return scenario, net


def parse_scenario(
    text: str,
    path: str | Path | None = None,
    *,
    name: str | None = None,
    check_map: bool = True,
) -> Scenario:
    """Validates a scenario given as YAML text.

    Args:
        text: The YAML document.
        path: The file it came from: a relative map path is relative to its folder (to the
            working directory without one).
        name: The file as messages show it (default: ``path``, or ``<string>``).
        check_map: As in `load_scenario`.

    Returns:
        The scenario, its ``map`` a built-in map name or an absolute path.

    Raises:
        ScenarioError, MapError: As in `load_scenario`.
    """
    return _parse(text, path, name=name, check_map=check_map)[0]


def _parse(
    text: str, path: str | Path | None, *, name: str | None, check_map: bool
) -> tuple[Scenario, RoadNetwork | None]:
    shown = name or (str(path) if path is not None else "<string>")
    data, lines = _read_yaml(text, shown)
    source = SourceMap(shown, lines)
    scenario = validate_data(data, source)
    base = Path(path).parent if path is not None else Path.cwd()
    map_source = _resolve_map(scenario.map, base.absolute(), source, must_exist=check_map)
    scenario = scenario.model_copy(update={"map": map_source}).located(source)
    net = None
    if check_map:
        net = load_map(map_source)
        validate_against_map(scenario, net, source=source)
    return scenario, net


def _locate(source: str | Path) -> tuple[Path, str]:
    """The file of a scenario path or built-in name, and its name for messages."""
    path = Path(source)
    name = str(source)
    if path.suffix == "" and not path.exists() and str(source) in builtin_scenarios():
        path = _builtin_folder() / f"{source}.yaml"
        name = path.name
    return path, name


def _read_text(path: Path, name: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        known = ", ".join(builtin_scenarios())
        raise ScenarioError(
            f"{name}: no such file, and no built-in scenario of that name (built-in: {known})"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError(f"{name}: cannot read the file: {exc}") from None


def _resolve_map(value: str, base: Path, source: SourceMap, *, must_exist: bool) -> str:
    """A built-in map name as it is, a path made absolute relative to ``base``."""
    given = Path(value).expanduser()
    path = (given if given.is_absolute() else base / given).resolve()
    if given.suffix == "" and not path.exists() and value in builtin_maps():
        return value
    if must_exist and not path.is_file():
        known = ", ".join(builtin_maps())
        message = f"no map file {str(path)!r} and no built-in map {value!r} (built-in: {known})"
        raise source.error([(("map",), message)])
    return str(path)


# -- YAML with line numbers -----------------------------------------------------------------------


# libyaml's parser, where PyYAML was built with it, reads a file of 10,000 objects three
# times as fast as the pure-Python one (1.5 s against 4); both keep every node's line.
if TYPE_CHECKING or not yaml.__with_libyaml__:
    from yaml import SafeLoader as _SafeLoader
else:
    from yaml import CSafeLoader as _SafeLoader


class _Loader(_SafeLoader):
    """PyYAML's safe loader, also reading ``1e-3`` as a float (as YAML 1.2 does)."""


_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"),
    list("-+0123456789"),
)


def _read_yaml(text: str, name: str) -> tuple[Any, dict[KeyPath, int]]:
    """The document's data and the line of each key path in it."""
    loader = _Loader(text)
    lines: dict[KeyPath, int] = {}
    try:
        node = loader.get_single_node()
        if node is None:
            return None, lines
        _check_size(node, name)
        # Indexed before construction, which flattens merge keys (<<) into the mapping.
        lines[()] = node.start_mark.line + 1
        _index(node, (), lines, SourceMap(name, lines))
        return loader.construct_document(node), lines
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{name}:{mark.line + 1}" if mark is not None else name
        problem = " ".join(p for p in (exc.context, exc.problem) if p)
        raise ScenarioError(f"{where}: invalid YAML: {problem}") from None
    except yaml.YAMLError as exc:
        raise ScenarioError(f"{name}: invalid YAML: {exc}") from None
    except RecursionError:  # PyYAML composes nested lists and mappings recursively
        raise ScenarioError(
            f"{name}: invalid YAML: lists and mappings are nested too deeply"
        ) from None
    finally:
        loader.dispose()


def _check_size(root: yaml.Node, name: str) -> None:
    """Refuses a document that expands to more than `MAX_YAML_VALUES` values, or that
    contains itself through an alias.

    Each node's expanded size is counted once (an alias shares the node it names), so
    the count takes time in proportion to the text, however far the aliases multiply it.
    """
    size: dict[int, int] = {}
    open_nodes: set[int] = set()  # the nodes whose subtrees are being counted
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        children = _children(node)
        if children_done:
            open_nodes.discard(key)
            total = 1 + sum(size[id(child)] for child in children)
            if total > MAX_YAML_VALUES:
                raise ScenarioError(
                    f"{name}:{node.start_mark.line + 1}: the document expands to more than "
                    f"{MAX_YAML_VALUES:,} values (through its aliases, *name); a scenario "
                    f"may hold at most {MAX_YAML_VALUES:,}"
                )
            size[key] = total
        elif key in open_nodes:
            raise ScenarioError(
                f"{name}:{node.start_mark.line + 1}: invalid YAML: an alias refers to a "
                "list or mapping that contains it"
            )
        elif key not in size:
            open_nodes.add(key)
            stack.append((node, True))
            stack.extend((child, False) for child in children if id(child) not in size)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _index(node: yaml.Node, path: KeyPath, lines: dict[KeyPath, int], source: SourceMap) -> None:
    """Records the line of every key and list item under ``node``; rejects duplicate keys."""
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
            if key is None or key == "<<":
                continue
            child = (*path, key)
            if child in lines:
                lines[child] = key_node.start_mark.line + 1
                raise source.error([(child, "duplicate key")])
            lines[child] = key_node.start_mark.line + 1
            _index(value_node, child, lines, source)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            lines[(*path, i)] = item.start_mark.line + 1
            _index(item, (*path, i), lines, source)
