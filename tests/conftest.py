"""Shared test fixtures: where the OpenDRIVE corpus lives; the long runs first."""

from __future__ import annotations

from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
CORPUS = DATA / "opendrive"
CORPUS_MAPS = sorted((CORPUS / "maps").glob("*/*.xodr"))


def corpus_name(path: Path) -> str:
    """``<source>/<name>`` of a corpus map, as used in the reference folder."""
    return f"{path.parent.name}/{path.stem}"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The long runs (``slow``) first, longest first (``slow(seconds)``, default 10).
    `make test` has pytest-xdist hand tests out one or two at a time in this order
    (``--maxschedchunk 1``), so that the long runs overlap the short ones instead of
    leaving one worker busy alone at the end."""

    def expected_seconds(item: pytest.Item) -> float:
        marker = item.get_closest_marker("slow")
        return 0.0 if marker is None else float(marker.args[0] if marker.args else 10)

    items.sort(key=expected_seconds, reverse=True)
