"""`ActorStates.of`: the active rows of a state, by id, gathered into one block whose
columns are made on first use."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from roadsim.capture.snapshot import ACTOR_FIELDS, COLUMN_DTYPES, ROW_BYTES, ActorStates
from roadsim.world.state import WorldState


def _state(capacity: int, active_share: float, id_span: int, seed: int) -> WorldState:
    rng = np.random.default_rng(seed)
    st = WorldState.empty(capacity)
    for name in ACTOR_FIELDS:
        column = getattr(st, name)
        if column.dtype == np.bool_:
            column[:] = rng.random(capacity) < 0.3
        elif column.dtype.kind == "i":
            column[:] = rng.integers(-5, 1000, capacity)
        else:
            column[:] = rng.normal(size=capacity)
    st.x[::5] = np.nan
    st.active[:] = rng.random(capacity) < active_share
    st.id[:] = rng.choice(id_span, capacity, replace=False)
    return st


def _by_numpy(st: WorldState) -> dict[str, np.ndarray]:
    rows = np.flatnonzero(st.active)
    rows = rows[np.argsort(st.id[rows], kind="stable")]
    return {name: getattr(st, name)[rows] for name in ACTOR_FIELDS}


@pytest.mark.parametrize(
    ("capacity", "active_share", "id_span"),
    [(346, 0.9, 346), (346, 0.9, 10**6), (40, 0.5, 400), (10, 0.0, 10), (1, 1.0, 1)],
)
def test_the_active_rows_by_id_as_numpy_gathers_them(
    capacity: int, active_share: float, id_span: int
) -> None:
    # Ids that span a few times their count go straight to their places, wider ones are
    # sorted: both give numpy's order.
    st = _state(capacity, active_share, id_span, seed=capacity + id_span)
    actors = ActorStates.of(st)
    want = _by_numpy(st)
    assert len(actors) == len(want["id"])
    assert actors.block is not None and actors.block.nbytes == len(actors) * ROW_BYTES
    for name in ACTOR_FIELDS:
        column = getattr(actors, name)
        assert column.dtype == COLUMN_DTYPES[name] == getattr(st, name).dtype
        assert np.array_equal(column, want[name], equal_nan=True), name
    assert actors.equals(ActorStates(**want))


def test_actors_sharing_an_id_come_in_slot_order_as_numpy_gives_them() -> None:
    st = _state(20, 1.0, 20, seed=4)
    st.id[[3, 11, 15]] = 7
    assert ActorStates.of(st).equals(ActorStates(**_by_numpy(st)))


def test_the_columns_are_views_of_the_block_laid_out_in_field_order() -> None:
    actors = ActorStates.of(_state(30, 1.0, 30, seed=1))
    n, offset = len(actors), 0
    for name in ACTOR_FIELDS:
        column = getattr(actors, name)
        size = n * column.dtype.itemsize
        assert bytes(actors.block[offset : offset + size]) == column.tobytes()
        assert np.shares_memory(column, actors.block)
        offset += size
    assert offset == actors.block.nbytes
    assert actors.x is actors.x  # made once, then kept


def test_a_copy_of_the_states_is_whole_and_a_wrong_block_is_refused() -> None:
    actors = ActorStates.of(_state(30, 0.8, 90, seed=2))
    again = pickle.loads(pickle.dumps(actors))
    assert again.equals(actors) and len(again) == len(actors)
    with pytest.raises(AttributeError):
        actors.speeed  # noqa: B018 (not a column)
    with pytest.raises(ValueError, match="block"):
        ActorStates.from_block(np.zeros(ROW_BYTES + 1, dtype=np.uint8), 1)
    assert ActorStates(**_by_numpy(_state(5, 1.0, 5, seed=3))).block is None
