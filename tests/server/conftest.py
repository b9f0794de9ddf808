"""Servers on loopback (port 0: any free port) for the integration tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from roadsim.server import Server


@pytest.fixture
def town_server() -> Iterator[Server]:
    with Server("town", port=0, seed=5) as server:
        yield server
