"""Stands by class (issue 27): a vehicle's queue, whether it moves, and a stall counted as
stuck."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from roadsim import Simulation
from roadsim.agents.passages import Passages
from roadsim.sim.queues import CHAIN_JUNCTIONS, MOVED_ON, QueueWatch, Traffic, queue_ahead
from roadsim.sim.traffic_stats import STUCK, STUCK_AFTER, watch
from tests.agents.test_junction_room import blocked_link_scenario

#: Lane uids of the toy network below: a street, a junction's lane, the street after it,
#: a second junction's lane and the street after that.
STREET, BOX, AFTER, BOX2, LAST = 0, 1, 2, 3, 4


def _traffic(ids: list[int], uid: list[int], p: list[float]) -> Traffic:
    """Cars 4 m long (ids, lane uids, progress) on the toy network: 100 m street -> 10 m
    box -> 30 m street -> 10 m box -> 100 m street."""
    n = len(ids)
    chain = [STREET, BOX, AFTER, BOX2, LAST, -1]
    route = np.full((n, 8), -1, dtype=np.int64)
    for row, lane in enumerate(uid):
        rest = chain[chain.index(lane) + 1 : -1]
        route[row, : len(rest)] = rest
    uids, progress = np.array(uid), np.array(p)
    order = np.lexsort((progress, uids))
    by_lane: dict[int, list[int]] = {}
    for row in order.tolist():
        by_lane.setdefault(int(uids[row]), []).append(row)
    return Traffic(
        slot=np.arange(n), id=np.array(ids), uid=uids, p=progress, half=np.full(n, 2.0),
        route=route, length=np.array([100.0, 10.0, 30.0, 10.0, 100.0]),
        box=np.array([False, True, False, True, False]), by_lane=by_lane,
    )  # fmt: skip


def test_a_queue_runs_to_its_head_and_on_through_the_junction_it_waits_at() -> None:
    # Ids: 10 the head 5 m before the entry, 11 and 12 queued behind it, 13 further back
    # beyond a gap, 14 inside the box, 15 and 16 on the street after it (16 waiting 3 m
    # before the next junction's entry), 17 beyond the next junction.
    t = _traffic(
        [10, 11, 12, 13, 14, 15, 16, 17],
        [STREET, STREET, STREET, STREET, BOX, AFTER, AFTER, LAST],
        [93.0, 87.0, 81.0, 40.0, 5.0, 10.0, 25.0, 50.0],
    )
    ids = t.id.tolist()

    def queue(vid: int, junctions: int = 1, traffic: Traffic = t) -> list[int]:
        return sorted(ids[r] for r in queue_ahead(traffic, ids.index(vid), junctions))

    assert queue(12) == [10, 11, 14, 15, 16]
    assert queue(10) == [14, 15, 16]
    assert queue(14) == [15, 16]
    # 37 m behind the queue: it stands behind nothing.
    assert queue(13) == []
    # Through the junctions a queue waits at in turn: 16, the foremost on the street 10
    # waits for room on, waits at the next junction for room that 17 takes.
    assert queue(12, 2) == [10, 11, 14, 15, 16, 17]
    assert queue(10, 2) == queue(10, CHAIN_JUNCTIONS) == [14, 15, 16, 17]
    # ... not where the foremost there stands 23 m before that entry.
    back = _traffic(ids, t.uid.tolist(), [93.0, 87.0, 81.0, 40.0, 5.0, 1.0, 5.0, 50.0])
    assert queue(10, CHAIN_JUNCTIONS, back) == [14, 15, 16]
    # A head far from the junction waits for nothing there.
    far = _traffic([20, 21], [STREET, AFTER], [50.0, 10.0])
    assert queue_ahead(far, 0) == []


def test_a_head_waiting_before_a_narrow_passage_waits_for_those_in_it() -> None:
    """A truck stands 4 m before a narrow bend on the last street (20 to 60 m) while a
    truck coming the other way is in it: it waits for that one, as a head at a junction
    entry waits for those on its path. Town07 with the default mix counted 27 such
    stands as stuck over six runs while the trucks in the bend crept on in their own
    queues. A car waits only at a bend long vehicles take whole (``exclusive``)."""

    def passage(exclusive: bool) -> Passages:
        ptr = np.array([0, 0, 0, 0, 0, 1])  # one record, on LAST
        return Passages(
            number=1, ptr=ptr, passage=np.array([0]), lo=np.array([20.0]),
            hi=np.array([60.0]), way=np.array([1]), exclusive=np.array([exclusive]),
        )  # fmt: skip

    # 30 stands before the bend, 31 is in it, 32 is beyond it.
    t = _traffic([30, 31, 32], [LAST, LAST, LAST], [10.0, 40.0, 90.0])
    truck = replace(t, half=np.array([6.0, 6.0, 2.0]), passages=passage(False))
    assert queue_ahead(truck, 0) == [1]
    # Without passages it waits for nothing (31 is 18 m ahead: no queue).
    assert queue_ahead(replace(truck, passages=None), 0) == []
    # A car does not wait at a bend only long vehicles take turns at ...
    car = replace(t, half=np.array([2.0, 6.0, 2.0]), passages=passage(False))
    assert queue_ahead(car, 0) == []
    # ... but does at one they take whole.
    assert queue_ahead(replace(car, passages=passage(True)), 0) == [1]
    # One in the bend waits for nothing there.
    inside = replace(truck, p=np.array([25.0, 55.0, 90.0]))
    assert queue_ahead(inside, 0) == []


def test_a_queue_moves_when_one_that_was_in_it_drives_on() -> None:
    watch_ = QueueWatch(STUCK_AFTER)
    t = _traffic([10, 11], [STREET, STREET], [93.0, 87.0])
    ids, speed = np.array([10, 11]), np.zeros(2)
    watch_.drive(ids, speed, 0.05)
    watch_.note(t, np.array([11]), 0.0)
    assert not watch_.moved(11)
    # The head creeps less than `MOVED_ON`: no progress.
    watch_.drive(ids, np.array([0.5 * MOVED_ON, 0.0]), 1.0)
    watch_.note(t, np.array([11]), 30.0)
    assert not watch_.moved(11)
    # It drives on (into the junction, out of the queue): progress.
    watch_.drive(ids, np.array([MOVED_ON, 0.0]), 1.0)
    assert watch_.moved(11)
    watch_.note(t, np.array([11]), 30.0 + STUCK_AFTER)
    assert watch_.moved(11)
    # Over a minute later the notes before the window are gone, and what moved before
    # it no longer counts.
    watch_.note(t, np.array([11]), 31.0 + STUCK_AFTER)
    assert not watch_.moved(11)
    # A vehicle that stands no more is forgotten.
    watch_.note(t, np.array([10]), 32.0 + STUCK_AFTER)
    assert list(watch_.queue(11)) == []


def test_cars_behind_a_blocked_link_are_stuck(tmp_path: Path) -> None:
    """A box across the lane after junction B: the car on the link before it and the
    queue behind it on road 1 stand with nothing ahead of them moving, and no light."""
    summary = watch(Simulation(blocked_link_scenario(tmp_path)), 100.0)
    assert summary.stuck == summary.long_stands == 6, summary.to_text()
    assert summary.behind_red == summary.in_moving_queue == 0
    assert all(stand.kind == STUCK for stand in summary.stands)
    assert all(stand.seconds > STUCK_AFTER for stand in summary.stands)
