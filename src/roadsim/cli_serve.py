"""``roadsim serve``: a simulation served to clients over TCP (docs/server.md)."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

SubParsers = Any

DEFAULT_SCENARIO = "highway"


def register_serve(groups: SubParsers) -> None:
    """``roadsim serve [SCENARIO] [--host H] [--port P] [--token T] [--realtime] [--viewer]``."""
    serve = groups.add_parser(
        "serve",
        help="serve a simulation to clients over TCP",
        description="Serve a simulation over TCP (ZeroMQ + msgpack, docs/protocol.md): "
        "clients load scenarios, tick the world or let it run in real time, drive vehicles, "
        "add sensors and subscribe to snapshots. The world waits for a client's tick "
        "(sync mode) until one asks for real time, unless --realtime.",
    )
    serve.add_argument(
        "scenario",
        nargs="?",
        default=DEFAULT_SCENARIO,
        help=f"a scenario file or the name of a built-in scenario (default: {DEFAULT_SCENARIO})",
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1)")
    serve.add_argument(
        "--port", type=int, default=2000, help="control port; streams use the next (default: 2000)"
    )
    serve.add_argument(
        "--token",
        default=os.environ.get("ROADSIM_TOKEN"),
        help="secret clients must present (default: $ROADSIM_TOKEN); required off 127.0.0.1",
    )
    serve.add_argument(
        "--files",
        action="append",
        metavar="DIR",
        help="a folder whose scenarios and maps clients may load by path (repeatable; "
        "default: the working folder)",
    )
    serve.add_argument("--seed", type=int, help="random seed (default: the scenario's)")
    serve.add_argument("--realtime", action="store_true", help="run in real time from the start")
    serve.add_argument(
        "--viewer",
        action="store_true",
        help="also serve the web viewer of the world on 127.0.0.1 (docs/viewer.md)",
    )
    serve.add_argument(
        "--viewer-port", type=int, default=8765, help="the viewer's HTTP port (default: 8765)"
    )
    serve.set_defaults(handler=_serve)


def _serve(args: argparse.Namespace) -> int:
    from roadsim.cli import _UsageError
    from roadsim.server import Server

    if not 0 <= args.port <= 65534:
        raise _UsageError(f"--port: expected 0 to 65534 (streams use the next), got {args.port}")
    server = Server(
        args.scenario,
        host=args.host,
        port=args.port,
        token=args.token,
        seed=args.seed,
        realtime=args.realtime,
        files=args.files,
    )
    viewer = None
    try:
        server.bind()
        world = server.sim.scenario
        if args.viewer:
            viewer = _attach_viewer(server, args.viewer_port)
        print(
            f"roadsim: serving {world.name or args.scenario} on {server.endpoint} (streams "
            f"{server.stream_endpoint}), {server.mode} mode; Ctrl-C stops",
            file=sys.stderr,
            flush=True,
        )
        if viewer is not None:
            print(f"roadsim: viewer at {viewer.url}", file=sys.stderr, flush=True)
        server.serve()
    finally:
        if viewer is not None:
            viewer.close()
        server.close()
    return 0


def _attach_viewer(server: Any, port: int) -> Any:
    """The web viewer of ``server``'s world, on 127.0.0.1 (the viewer has no token: it
    stays on the loopback whatever ``--host`` says). It follows the server's world
    across ``load`` and ``reset``, which make a new simulation and capture."""
    from roadsim.viewer.server import ViewerServer
    from roadsim.viewer.session import AttachedSession

    session = AttachedSession(server.capture)
    viewer = ViewerServer(session, port=port).start()
    server.on_load.append(lambda srv: session.follow(srv.capture))
    return viewer
