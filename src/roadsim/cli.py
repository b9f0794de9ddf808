"""The ``roadsim`` command.

Each command group (``run``, ``replay``/``export``/``info``, ``map``, ``scenario``,
``sensors``, ``serve``, ``view``) is one function in `COMMAND_GROUPS` that adds its
subparser and sets a ``handler(args) -> int`` default. A `roadsim.errors.RoadsimError` (a user's mistake: a
malformed map, a missing file, a damaged recording) is printed as ``roadsim: error:
<message>`` on stderr with exit code 2 and no traceback; argparse usage errors exit with 2
as well.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from roadsim import __version__
from roadsim.cli_record import register_recording
from roadsim.cli_run import register_run, register_scenario
from roadsim.cli_sensors import register_sensors
from roadsim.cli_serve import register_serve
from roadsim.cli_view import register_view
from roadsim.errors import RoadsimError

Handler = Callable[[argparse.Namespace], int]
SubParsers = Any  # argparse._SubParsersAction, private in typeshed

PROG = "roadsim"
EXIT_USER_ERROR = 2


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command line; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Handler = args.handler
    try:
        with _warnings_as_lines():
            return handler(args)
    except RoadsimError as exc:
        _error(str(exc))
        return EXIT_USER_ERROR
    except BrokenPipeError:  # the reader went away (`roadsim map info x | head`): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except OSError as exc:  # e.g. an output folder that does not exist
        _error(f"{exc.filename}: {exc.strerror}" if exc.filename and exc.strerror else str(exc))
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        return 130


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every command group registered."""
    parser = argparse.ArgumentParser(
        prog=PROG, description="roadsim: a fast, headless driving simulator on OpenDRIVE maps."
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    groups = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for register in COMMAND_GROUPS:
        register(groups)
    return parser


# -- roadsim map ----------------------------------------------------------------------------------


def register_map(groups: SubParsers) -> None:
    """``roadsim map info|plot|list``."""
    group = groups.add_parser(
        "map", help="inspect OpenDRIVE maps", description="Inspect OpenDRIVE maps."
    )
    cmds = group.add_subparsers(dest="map_command", metavar="SUBCOMMAND", required=True)

    info = cmds.add_parser("info", help="summarise a map", description="Print what a map holds.")
    info.add_argument("map", metavar="MAP", help="an .xodr file or the name of a built-in map")
    info.add_argument("--json", action="store_true", help="print the summary as JSON")
    info.set_defaults(handler=_map_info)

    plot = cmds.add_parser(
        "plot", help="draw a map to an image", description="Draw a map from above."
    )
    plot.add_argument("map", metavar="MAP", help="an .xodr file or the name of a built-in map")
    plot.add_argument(
        "-o", "--output", type=Path, help="image file to write (default: MAP's name + .png)"
    )
    plot.add_argument("--dpi", type=int, default=150, help="resolution (default: 150)")
    plot.add_argument(
        "--size",
        type=float,
        default=10.0,
        help="longer side of the map in inches (default: 10; --size x --dpi at most 10000)",
    )
    plot.add_argument("--title", help="title (default: the map's name and size)")
    plot.add_argument(
        "--labels",
        action="append",
        default=[],
        metavar="KINDS",
        help="write ids on the map: roads, lanes, junctions; comma-separated or repeated "
        "(e.g. --labels roads,lanes)",
    )
    # The old spelling of --labels junctions, kept for scripts that use it.
    plot.add_argument("--junction-labels", action="store_true", help=argparse.SUPPRESS)
    zoom = plot.add_argument_group(
        "zoom",
        "Show part of the map: --center (and --radius) or --bbox, not both. Write a "
        "negative first number with '=' (--center=-20,5).",
    )
    zoom.add_argument("--center", metavar="X,Y", help="centre of the view (m)")
    zoom.add_argument(
        "--radius",
        metavar="R",
        help="half the side of the square view around --center (m, default: 100)",
    )
    zoom.add_argument("--bbox", metavar="XMIN,YMIN,XMAX,YMAX", help="the view (m)")
    plot.add_argument(
        "--strips",
        metavar="N",
        help="cut the map into N strips along its length, stacked on one scale (default: "
        "as many as a long map needs to be readable, e.g. the highway; 1: one panel)",
    )
    plot.add_argument("--no-signals", action="store_true", help="leave signals out")
    plot.add_argument("--no-objects", action="store_true", help="leave objects out")
    plot.add_argument("--no-legend", action="store_true", help="leave the legend out")
    plot.set_defaults(handler=_map_plot)

    lst = cmds.add_parser(
        "list", help="list the built-in maps", description="List the built-in maps."
    )
    lst.set_defaults(handler=_map_list)


def _map_info(args: argparse.Namespace) -> int:
    from roadsim.road.load import load_map
    from roadsim.road.summary import map_summary

    summary = map_summary(load_map(args.map))
    print(json.dumps(summary.to_dict(), indent=2) if args.json else summary.to_text())
    return 0


def image_output(given: Path | None, source: str) -> Path:
    """The image file a plot command writes: ``given``, or ``<source's stem>.png`` in the
    working directory.

    Raises:
        _UsageError: If matplotlib cannot tell the image format from the suffix.
    """
    from matplotlib.backend_bases import FigureCanvasBase

    output = given if given is not None else Path(f"{Path(source).stem}.png")
    formats = FigureCanvasBase.get_supported_filetypes()
    if output.suffix.lstrip(".").lower() not in formats:
        raise _UsageError(
            f"{output}: cannot tell the image format from the suffix "
            f"(use one of: {', '.join('.' + f for f in sorted(formats))})"
        )
    return output


def _map_plot(args: argparse.Namespace) -> int:
    import math

    from roadsim.road.load import load_map
    from roadsim.road.plot import LABEL_KINDS, plot_map
    from roadsim.road.plot_layout import MAX_PIXELS

    def numbers(option: str, text: str, count: int, expected: str) -> list[float]:
        try:
            values = [float(v) for v in text.split(",")]
        except ValueError:
            values = []
        if len(values) != count or not all(math.isfinite(v) for v in values):
            raise _UsageError(f"{option}: expected {expected}, got {text!r}")
        return values

    if not (math.isfinite(args.size) and args.size > 0) or args.dpi <= 0:
        raise _UsageError("--dpi and --size must be positive")
    if args.size * args.dpi > MAX_PIXELS:
        raise _UsageError(
            f"--size {args.size:g} at --dpi {args.dpi} is {args.size * args.dpi:.0f} pixels "
            f"across; the limit is {MAX_PIXELS} (--size x --dpi)"
        )
    labels = {kind.strip() for given in args.labels for kind in given.split(",") if kind.strip()}
    if args.junction_labels:
        labels.add("junctions")
    for kind in sorted(labels):
        if kind not in LABEL_KINDS:
            raise _UsageError(f"--labels: unknown kind {kind!r} (use {', '.join(LABEL_KINDS)})")
    view = None
    if args.bbox is not None and (args.center is not None or args.radius is not None):
        raise _UsageError("--bbox cannot be combined with --center or --radius: give one view")
    if args.radius is not None and args.center is None:
        raise _UsageError("--radius needs --center")
    if args.center is not None:
        x, y = numbers("--center", args.center, 2, "X,Y in metres")
        radius = 100.0
        if args.radius is not None:
            (radius,) = numbers("--radius", args.radius, 1, "a distance in metres")
            if radius <= 0:
                raise _UsageError(f"--radius: expected a positive distance, got {args.radius!r}")
        view = (x - radius, y - radius, x + radius, y + radius)
    if args.bbox is not None:
        expected = "XMIN,YMIN,XMAX,YMAX in metres with XMIN < XMAX and YMIN < YMAX"
        x0, y0, x1, y1 = numbers("--bbox", args.bbox, 4, expected)
        if not (x0 < x1 and y0 < y1):
            raise _UsageError(f"--bbox: expected {expected}, got {args.bbox!r}")
        view = (x0, y0, x1, y1)
    strips = None
    if args.strips is not None:
        if not args.strips.isdigit() or not 1 <= int(args.strips) <= 20:
            raise _UsageError(
                f"--strips: expected a whole number from 1 to 20, got {args.strips!r}"
            )
        strips = int(args.strips)
    output = image_output(args.output, args.map)
    net = load_map(args.map)
    written = plot_map(
        net,
        output,
        title=args.title,
        signals=not args.no_signals,
        objects=not args.no_objects,
        labels=labels,
        legend=not args.no_legend,
        view=view,
        strips=strips,
        size_in=args.size,
        dpi=args.dpi,
    )
    print(f"wrote {written}")
    return 0


def _map_list(args: argparse.Namespace) -> int:
    from roadsim.road.load import builtin_maps

    names = builtin_maps()
    for name in names:
        print(name)
    if not names:
        print("no built-in maps", file=sys.stderr)
    return 0


# -- roadsim warmup -------------------------------------------------------------------------------


def register_warmup(groups: SubParsers) -> None:
    """``roadsim warmup``."""
    warm = groups.add_parser(
        "warmup",
        help="compile the simulation's kernels now",
        description="Compile (or load from the cache) every kernel a simulation of the "
        "built-in scenarios uses, so that the first simulation does not wait for it. "
        "Needed once per machine and version; `make run` and `make install` run it.",
    )
    warm.set_defaults(handler=_warmup)


def _warmup(args: argparse.Namespace) -> int:
    from roadsim.compiling import warmup

    summary = warmup()
    print(
        f"roadsim: {summary.kernels} kernels ready, {summary.compiled} of them compiled now, "
        f"in {summary.seconds:.1f} s"
    )
    return 0


#: Command groups, in the order ``roadsim --help`` lists them.
COMMAND_GROUPS: tuple[Callable[[SubParsers], None], ...] = (
    register_run,
    register_recording,
    register_map,
    register_scenario,
    register_sensors,
    register_serve,
    register_view,
    register_warmup,
)


# -- helpers ----------------------------------------------------------------------------------------


class _UsageError(RoadsimError):
    """A bad combination of command-line values that argparse cannot check."""


def _error(message: str) -> None:
    print(f"{PROG}: error: {message}", file=sys.stderr)


@contextmanager
def _warnings_as_lines() -> Iterator[None]:
    """Warnings (e.g. `MapWarning`) as ``roadsim: warning: ...`` lines, each once."""

    def show(message: Warning | str, category: type[Warning], *_: object, **__: object) -> None:
        print(f"{PROG}: warning: {message}", file=sys.stderr)

    with warnings.catch_warnings():
        warnings.simplefilter("default")
        warnings.showwarning = show
        yield
