"""The per-slot arrays traffic's kernels read: one IDM table, whatever the scenario gave."""

from __future__ import annotations

import numba
import numpy as np

from roadsim.agents.idm import IdmParams
from roadsim.agents.traffic import TrafficParams, _drivers
from roadsim.agents.traffic_kernels import COMFORT_DECEL, MAX_ACCEL, MIN_GAP, TIME_HEADWAY


def _params(idm: IdmParams, n: int) -> TrafficParams:
    return TrafficParams(speed_factor=np.ones(n), idm=idm)


def _columns(table: np.ndarray) -> IdmParams:
    return IdmParams(
        max_accel=table[:, 0],
        comfort_decel=table[:, 1],
        time_headway=table[:, 2],
        min_gap=table[:, 3],
    )


def test_a_simulations_table_is_read_in_place() -> None:
    table = np.empty((5, 4))  # owns its memory, as the simulation's does
    table[:] = np.arange(20.0).reshape(5, 4)
    drivers = _drivers(_params(_columns(table), 5), np.zeros(5, np.uint64), np.ones(5))
    assert drivers.idm is table  # the simulation's moves of slots reach the kernels


def test_scalars_and_separate_arrays_become_a_table() -> None:
    n = 3
    for idm in (
        IdmParams(),
        IdmParams(max_accel=np.array([1.0, 2.0, 3.0]), min_gap=np.array([4.0, 5.0, 6.0])),
        _columns(np.arange(12.0).reshape(4, 3).T.copy()),  # columns of the wrong table
    ):
        drivers = _drivers(_params(idm, n), np.zeros(n, np.uint64), np.ones(n))
        assert drivers.idm.shape == (n, 4) and drivers.idm.flags.c_contiguous
        for j, column in (
            (MAX_ACCEL, idm.max_accel),
            (COMFORT_DECEL, idm.comfort_decel),
            (TIME_HEADWAY, idm.time_headway),
            (MIN_GAP, idm.min_gap),
        ):
            np.testing.assert_array_equal(drivers.idm[:, j], np.broadcast_to(column, (n,)))


def test_the_kernels_see_one_type_for_every_number_of_slots() -> None:
    # A column of a one-row table is a contiguous array and of a longer one a strided
    # one: numba would compile traffic's loops once for each.
    types = set()
    for n in (1, 2, 50):
        for idm in (_columns(np.ones((n, 4))), IdmParams()):
            drivers = _drivers(_params(idm, n), np.zeros(n, np.uint64), np.ones(n))
            types.add(numba.typeof(drivers))
    assert len(types) == 1
