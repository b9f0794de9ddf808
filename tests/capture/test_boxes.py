"""`roadsim.capture.boxes.ActorBoxes`: the rows it keeps from one update to the next give
the bytes a new encoder gives."""

from __future__ import annotations

from typing import Any

import numpy as np

from roadsim.capture.boxes import ActorBoxes
from roadsim.capture.snapshot import ACTOR_FIELDS, ActorStates
from roadsim.sim.build import MODEL_NAMES
from roadsim.world.state import STATIC_OBJECT


def _actors(ids: list[int], rng: np.random.Generator, collided: set[int]) -> ActorStates:
    """Actors with these ids (sorted), random poses and sizes; models and kinds by id."""
    n = len(ids)
    id_ = np.array(sorted(ids), dtype=np.int64)
    columns: dict[str, Any] = {name: rng.normal(size=n) for name in ACTOR_FIELDS}
    columns["id"] = id_
    columns["model"] = id_ % 3
    columns["kind"] = np.where(id_ % 7 == 0, STATIC_OBJECT, 0).astype(np.int64)
    columns["control"] = np.zeros(n, dtype=np.int64)
    columns["road"] = np.zeros(n, dtype=np.int64)
    columns["uid"] = np.zeros(n, dtype=np.int64)
    columns["collided"] = np.isin(id_, list(collided))
    return ActorStates(**columns)


def test_kept_rows_encode_as_new_ones() -> None:
    """Actors that come and go, ids that gain a digit (9 to 10, 99 to 100, 999 to 1000)
    and lose one, collisions that start and end, the timestamp growing a byte: each update
    is, byte for byte, what an encoder that kept nothing writes."""
    rng = np.random.default_rng(1)
    steps: list[tuple[list[int], set[int], int]] = [
        ([0, 1, 2, 5], set(), 0),
        ([0, 1, 2, 5], set(), 50_000_000),  # the same actors: rows kept
        ([0, 1, 2, 5], {2}, 100_000_000),  # a collision: colours change
        ([0, 2, 5, 9], set(), 150_000_000),  # one gone, one new
        ([0, 2, 5, 9, 10], set(), 200_000_000),  # a second digit
        ([0, 2, 10, 11, 98], {11}, 250_000_000),
        ([0, 10, 11, 98, 99, 100, 101], set(), 1_000_000_000),  # a third digit, a longer stamp
        ([0, 10, 99, 100, 101, 1000], set(), 1_050_000_000),
        ([0, 10, 99, 100], set(), 1_100_000_000),  # back to three digits
        ([0, 10, 99, 100], set(), 1_150_000_000),
        ([], set(), 1_200_000_000),  # nobody
        ([3, 4], set(), 1_250_000_000),
    ]
    kept = ActorBoxes(MODEL_NAMES)
    for ids, collided, ns in steps:
        actors = _actors(ids, rng, collided)
        for ego in (0, 3):
            assert kept.encode(actors, ego, ns) == ActorBoxes(MODEL_NAMES).encode(actors, ego, ns), (ids, ego)
