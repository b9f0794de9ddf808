"""``roadsim view``: a live simulation or a recording in the web viewer."""

from __future__ import annotations

import argparse
import math
import sys
import webbrowser
from pathlib import Path
from typing import Any

from roadsim.cli_run import DEFAULT_SCENARIO

SubParsers = Any


def register_view(groups: SubParsers) -> None:
    """``roadsim view [SCENARIO | RECORDING.mcap]``."""
    view = groups.add_parser(
        "view",
        help="watch a simulation or a recording in the web viewer",
        description="Run a scenario (or play a recording) and serve the web viewer on this "
        "machine: open the printed address in a browser. Ctrl-C stops it.",
    )
    view.add_argument(
        "source",
        nargs="?",
        default=DEFAULT_SCENARIO,
        metavar="SCENARIO | RECORDING.mcap",
        help=f"a scenario file or built-in name, or a recording (default: {DEFAULT_SCENARIO})",
    )
    view.add_argument("--host", default="127.0.0.1", help="address to serve on (default: 127.0.0.1)")
    view.add_argument(
        "--port", type=int, default=8765, help="port (default: 8765; 0: any free port)"
    )
    view.add_argument("--open", action="store_true", help="open the viewer in a browser")
    view.add_argument("--paused", action="store_true", help="start paused (step from the page)")
    view.add_argument(
        "--speed", default="1", help="times real time (default: 1; 'max': as fast as it goes)"
    )
    view.add_argument("--seed", type=int, help="the simulation's seed (default: the scenario's)")
    view.add_argument(
        "--radius", type=float, default=400.0, help="send the lanes within this many metres "
        "of the ego (default: 400)",
    )  # fmt: skip
    view.add_argument("--capture-rate", type=float, metavar="HZ", help="frames per simulated second")
    view.add_argument("--duration", type=float, help="simulated seconds to run (default: no end)")
    view.add_argument("--partial", action="store_true", help="play a cut-short recording")
    view.set_defaults(handler=_view)


def _view(args: argparse.Namespace) -> int:
    from roadsim.cli import _UsageError
    from roadsim.viewer import LiveSession, ReplaySession, ViewerServer
    from roadsim.viewer.server import static_dir
    from roadsim.viewer.session import Session

    if args.speed == "max":
        speed = math.inf
    else:
        try:
            speed = float(args.speed)
        except ValueError:
            raise _UsageError(f"--speed: expected a number or 'max', got {args.speed!r}") from None
    if not (math.isfinite(args.radius) and args.radius > 0):
        raise _UsageError(f"--radius: expected a positive distance (m), got {args.radius:g}")
    static_dir()  # before the simulation is built: say at once that the bundle is missing
    session: Session
    if Path(args.source).suffix.lower() == ".mcap":
        if args.seed is not None or args.capture_rate is not None or args.duration is not None:
            raise _UsageError("--seed, --capture-rate and --duration are for scenarios, not recordings")
        session = ReplaySession(
            args.source, partial=args.partial, speed=speed, paused=args.paused, radius=args.radius
        )
    else:
        from roadsim.sim import Simulation

        sim = Simulation(args.source, seed=args.seed)
        session = LiveSession(
            sim, speed=speed, paused=args.paused, radius=args.radius,
            rate=args.capture_rate, duration=args.duration,
        )  # fmt: skip
    server = ViewerServer(session, host=args.host, port=args.port)
    server.start()
    print(f"roadsim: viewer at {server.url}  (Ctrl-C to stop)", flush=True)
    if args.open:
        webbrowser.open(server.url)
    try:
        server.wait()
    finally:
        server.close()
    error = getattr(session, "error", None)
    if error is not None:
        print(f"roadsim: error: the simulation stopped: {error}", file=sys.stderr)
        return 1
    if server.error is not None:
        print(f"roadsim: error: the viewer's server stopped: {server.error}", file=sys.stderr)
        return 1
    return 0
