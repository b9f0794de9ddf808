"""The web viewer's Python side: three feeds made from snapshots, and the server.

    roadsim view town                      # a live run, at http://127.0.0.1:8765/
    roadsim view run.mcap                  # a recording, with a timeline

From Python, a viewer watches a simulation that something else drives::

    from roadsim.viewer import attach_viewer

    viewer = attach_viewer(sim)            # or attach_viewer(sim, capture=capture)
    print(viewer.url)
    ...                                    # tick the simulation as you do
    viewer.close()

The feeds (`roadsim.viewer.feeds`): ``egoSensor`` (the ego), ``worldSensor`` (every other
actor, by id), ``laneSensor`` (the lanes within a radius of the ego, with a version). They
reach the page as binary msgpack frame messages, deltas between key frames
(`roadsim.viewer.sink`). See docs/viewer.md.
"""

from __future__ import annotations

from roadsim.capture import Capture
from roadsim.sim import Simulation
from roadsim.viewer.feeds import EgoSensorFeed, LaneSensorFeed, WorldSensorFeed
from roadsim.viewer.lanes import DEFAULT_RADIUS_M
from roadsim.viewer.server import ViewerError, ViewerServer
from roadsim.viewer.session import AttachedSession, LiveSession, ReplaySession
from roadsim.viewer.sink import FeedSink

__all__ = [
    "AttachedSession",
    "EgoSensorFeed",
    "FeedSink",
    "LaneSensorFeed",
    "LiveSession",
    "ReplaySession",
    "ViewerError",
    "ViewerServer",
    "WorldSensorFeed",
    "attach_viewer",
]


def attach_viewer(
    sim: Simulation,
    capture: Capture | None = None,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    radius: float = DEFAULT_RADIUS_M,
) -> ViewerServer:
    """Serves a viewer of a simulation that the caller ticks (the TCP server, a script).

    The viewer's feed sink joins ``capture`` (at its rate), or a capture of its own at
    every tick. The viewer's play controls do nothing here: the caller drives.

    Args:
        sim: The simulation.
        capture: Its capture, if it has one.
        host, port: Where to serve (port 0: any free one; `ViewerServer.url` tells).
        radius: The lane sensor's radius around the ego (m).

    Returns:
        The running server; `ViewerServer.close` stops it and leaves the capture as it was.

    Raises:
        ViewerError: If the web bundle is not built or the port cannot be bound.
    """
    session = AttachedSession(capture or Capture(sim), radius=radius)
    return ViewerServer(session, host=host, port=port).start()
