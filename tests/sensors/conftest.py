"""Fixtures of the sensor tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from roadsim.sensors.camera import RENDERERS, Renderer


@pytest.fixture(scope="module")
def renderers() -> Iterator[dict[str, Renderer]]:
    """A camera renderer of each kind (``raster``, ``raycast``) for the tests of one
    module, closed after them."""
    made = {name: RENDERERS[name]() for name in ("raster", "raycast")}
    yield made
    for renderer in made.values():
        renderer.close()
