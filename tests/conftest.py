"""Shared test fixtures: where the OpenDRIVE corpus lives."""

from __future__ import annotations

from pathlib import Path

DATA = Path(__file__).parent / "data"
CORPUS = DATA / "opendrive"
CORPUS_MAPS = sorted((CORPUS / "maps").glob("*/*.xodr"))


def corpus_name(path: Path) -> str:
    """``<source>/<name>`` of a corpus map, as used in the reference folder."""
    return f"{path.parent.name}/{path.stem}"
