"""The simulation as a server: `roadsim serve`, its protocol, and the Python client.

    from roadsim.server import Server, Client

    with Server("town", port=0) as server, Client(server.endpoint) as client:
        client.set_mode("sync")
        client.subscribe()
        client.tick()
        snap = client.next_snapshot()

See docs/server.md (users) and docs/protocol.md (the wire protocol).
"""

from roadsim.server.client import Client, ServerError, StreamSample, StreamSnapshot
from roadsim.server.protocol import PROTOCOL_VERSION, Limits
from roadsim.server.server import Server

__all__ = [
    "PROTOCOL_VERSION",
    "Client",
    "Limits",
    "Server",
    "ServerError",
    "StreamSample",
    "StreamSnapshot",
]
