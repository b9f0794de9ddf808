"""Queues: the vehicles a standing vehicle waits behind, and whether they move on.

The issue's measure of flowing traffic excuses a vehicle that stands for long "behind a red
light or in a queue that moves". `QueueWatch` tells the second apart from a stall: every
second it notes, for each standing vehicle, the vehicles of its queue (`queue_ahead`) and
how far each has driven so far; a queue moves over a time span when one of the vehicles
that were in it at the span's start has driven `MOVED_ON` metres by its end (it moved up,
or left the queue into the junction or beyond).

A vehicle's queue is:

- the vehicles ahead of it along its route, up to the queue's head: each is in the queue
  when its rear is at most `QUEUE_GAP` metres before the front of the one behind it, and
  the queue stops at a junction's entry (the first lane of the junction's box,
  `Simulation.junction_box`);
- when that head (the vehicle itself, if nothing stands close ahead of it) waits at a
  junction entry (its front `AT_ENTRY` metres before it or closer) or stands in the
  junction's box: the vehicles on the head's path through the box and on the lanes after
  it, up to `AFTER_LANES` lanes and not into the next box. They take the room the head
  waits for, and it frees as they move on. The foremost of them may itself wait at the
  next junction for room: its queue is in the head's queue too, through
  `CHAIN_JUNCTIONS` junctions at most (a row of trucks on short roads each waiting for
  room on the next one moves as its foremost moves);
- else, when the head waits before a narrow passage (its front `AT_ENTRY` metres before
  one or closer, `Simulation.narrow_passages`) that it takes turns at (a long vehicle at
  any, a car at those long vehicles take whole): the vehicles in that passage. The
  passage frees as they move on through it.

A head that stands with nothing close ahead, no junction entry and no such passage near
has an empty queue: nothing it waits for can move.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from roadsim._types import BoolArray, FloatArray, IntArray
from roadsim.agents.passages import Passages, record_lanes
from roadsim.sim.simulation import Simulation
from roadsim.world.codes import LONG_VEHICLE
from roadsim.world.state import VEHICLE

#: m, bumper to bumper: a vehicle this close ahead of a standing one is in its queue.
QUEUE_GAP = 10.0
#: m from a queue's head's front to the junction's entry: a head this close waits to enter.
AT_ENTRY = 20.0
#: Lanes after a junction, at most, whose vehicles a head waiting to enter it waits on.
AFTER_LANES = 4
#: Junctions a queue is followed through, at most: a head waiting for room after one
#: waits on the queue of the foremost vehicle there, which may wait at the next one.
CHAIN_JUNCTIONS = 8
#: m a vehicle that was in a queue must have driven for the queue to count as moving.
MOVED_ON = 1.0
#: Lanes of each vehicle's route looked at (a path through a box of joined junctions
#: may have 20 pieces and more).
_HOPS = 48


@dataclass(frozen=True)
class Traffic:
    """Where every vehicle is at one instant, as `queue_ahead` reads it.

    Attributes:
        slot: Slots of the active vehicles on lanes, shape (N,); the rows below follow it.
        id: Their actor ids.
        uid: Their lanes.
        p: Their centres' progress along their lanes (m).
        half: Half their lengths (m).
        route: The next lanes of their routes, shape (N, `_HOPS`), -1 past the end.
        length: Lane lengths (m), by uid.
        box: `Simulation.junction_box`, by uid.
        by_lane: For each lane with vehicles, their rows by increasing progress.
        passages: The map's narrow passages (None: none looked at).
    """

    slot: IntArray
    id: IntArray
    uid: IntArray
    p: FloatArray
    half: FloatArray
    route: IntArray
    length: FloatArray
    box: BoolArray
    by_lane: dict[int, list[int]]
    passages: Passages | None = None

    @classmethod
    def of(cls, sim: Simulation) -> Traffic:
        st = sim.state
        slot = np.flatnonzero(st.active & (st.kind == VEHICLE) & (st.uid >= 0))
        info = sim.lane_info
        uid = st.uid[slot]
        p = info.progress(uid, st.s[slot])
        order = np.lexsort((p, uid))
        by_lane: dict[int, list[int]] = {}
        for row in order.tolist():
            by_lane.setdefault(int(uid[row]), []).append(row)
        return cls(
            slot=slot, id=st.id[slot], uid=uid, p=p, half=0.5 * st.length[slot],
            route=sim.lanes_ahead(slot, _HOPS), length=info.length, box=sim.junction_box,
            by_lane=by_lane, passages=sim.narrow_passages,
        )  # fmt: skip

    def lanes(self, row: int) -> list[int]:
        """The lane of vehicle ``row`` and the next lanes of its route."""
        out = [int(self.uid[row])]
        for lane in self.route[row].tolist():
            if lane < 0:
                break
            out.append(lane)
        return out


def queue_ahead(traffic: Traffic, row: int, junctions: int = CHAIN_JUNCTIONS) -> list[int]:
    """The rows of the vehicles in the queue of vehicle ``row`` (see the module docstring),
    itself not included, through ``junctions`` junctions at most."""
    t = traffic
    lanes = t.lanes(row)
    members: list[int] = []
    head = row
    if not t.box[lanes[0]]:
        # Ahead along its route, while the next one stands close, up to the entry.
        front = float(t.p[row] + t.half[row])  # of the queue's last vehicle, from lanes[0]
        offset = 0.0  # where the lane looked at starts, from lanes[0]'s start
        gap = False
        for k, lane in enumerate(lanes):
            if t.box[lane]:
                break
            for other in t.by_lane.get(lane, []):
                if k == 0 and (other == row or t.p[other] <= t.p[row]):
                    continue
                if offset + t.p[other] - t.half[other] - front > QUEUE_GAP:
                    gap = True  # the queue ends, its head not at the entry
                    break
                members.append(other)
                head = other
                front = float(offset + t.p[other] + t.half[other])
            if gap:
                break
            offset += float(t.length[lane])
        else:
            gap = True  # no junction on the route looked at
        if gap or offset - front > AT_ENTRY:
            return members + _in_passage_ahead(t, head)
    # The head's path through the box and the lanes after it.
    path = t.lanes(head)
    first = next((k for k, lane in enumerate(path) if t.box[lane]), None)
    if first is None:
        return members
    after = 0
    front = -1  # the foremost vehicle on the lanes after the box
    for k in range(first, len(path)):
        lane = path[k]
        if not t.box[lane]:
            after += 1
            if after > AFTER_LANES:
                break
        elif after > 0:
            break  # the next junction
        for other in t.by_lane.get(lane, []):
            if other == head or (k == 0 and t.p[other] <= t.p[head]):
                continue
            members.append(other)
            if after > 0:
                front = other
    if front >= 0 and junctions > 1:
        # (and that vehicle's own queue, where it waits at the next junction in turn)
        seen = set(members) | {row}
        for other in queue_ahead(t, front, junctions - 1):
            if other not in seen:
                seen.add(other)
                members.append(other)
    return members


def _in_passage_ahead(t: Traffic, head: int) -> list[int]:
    """The rows of the vehicles in the narrow passage that vehicle ``head`` waits before
    (its front within `AT_ENTRY` metres of it, not in it), if it takes turns there: a
    long vehicle at any, a car at an exclusive one; else none."""
    ps = t.passages
    if ps is None or ps.number == 0:
        return []
    long = 2.0 * float(t.half[head]) >= LONG_VEHICLE
    front = float(t.p[head] + t.half[head])
    rear = front - 2.0 * float(t.half[head])
    offset = 0.0
    for lane in t.lanes(head):
        if offset - front > AT_ENTRY:
            break
        for r in range(int(ps.ptr[lane]), int(ps.ptr[lane + 1])):
            q = int(ps.passage[r])
            near, far = offset + float(ps.lo[r]), offset + float(ps.hi[r])
            if not (long or ps.exclusive[q]) or (near < front and far > rear):
                continue  # not one it waits at, or it is in it
            if 0.0 <= near - front <= AT_ENTRY:
                return _in_passage(t, q, head)
        offset += float(t.length[lane])
    return []


def _in_passage(t: Traffic, q: int, but: int) -> list[int]:
    """The rows of the vehicles whose bodies overlap passage ``q``, but row ``but``."""
    ps = t.passages
    assert ps is not None
    rows = set()
    lanes = record_lanes(ps)
    for r in np.flatnonzero(ps.passage == q).tolist():
        lane = int(lanes[r])
        for other in t.by_lane.get(lane, []):
            body = (t.p[other] - t.half[other], t.p[other] + t.half[other])
            if other != but and body[0] < ps.hi[r] and body[1] > ps.lo[r]:
                rows.add(other)
    return sorted(rows)


class QueueWatch:
    """Notes, once a second, the queue of every standing vehicle and how far its members
    have driven, and says whether a vehicle's queue moved over the last `window` seconds
    (`moved`)."""

    def __init__(self, window: float) -> None:
        self.window = window
        #: Metres each actor (by id) has driven since it was first seen.
        self.odometer: FloatArray = np.zeros(0)
        # By standing vehicle id: its queue's notes, oldest first: (time, member ids,
        # their odometers then).
        self._notes: dict[int, deque[tuple[float, IntArray, FloatArray]]] = {}

    def drive(self, ids: IntArray, speed: FloatArray, dt: float) -> None:
        """Adds a tick's travel of actors ``ids``."""
        if ids.size and ids.max() >= self.odometer.size:
            grown = np.zeros(max(int(ids.max()) + 1, 2 * self.odometer.size))
            grown[: self.odometer.size] = self.odometer
            self.odometer = grown
        self.odometer[ids] += np.abs(speed) * dt

    def note(self, traffic: Traffic | None, standing: IntArray, now: float) -> None:
        """Notes the queues of the vehicles ``standing`` (ids) in ``traffic`` at time
        ``now``; forgets the notes of vehicles no longer standing."""
        keep = set(standing.tolist())
        for gone in [k for k in self._notes if k not in keep]:
            del self._notes[gone]
        if traffic is None or not keep:
            return
        row_of = {int(i): r for r, i in enumerate(traffic.id.tolist())}
        for vid in keep:
            row = row_of.get(vid)
            members = (
                np.zeros(0, dtype=np.int64)
                if row is None
                else traffic.id[np.array(queue_ahead(traffic, row), dtype=np.int64)]
            )
            notes = self._notes.setdefault(vid, deque())
            notes.append((now, members, self.odometer[members].copy()))
            while notes[0][0] < now - self.window:
                notes.popleft()

    def moved(self, vid: int) -> bool:
        """Whether a vehicle that was in the queue of standing vehicle ``vid`` at the
        oldest note within the window (`note`) has driven `MOVED_ON` metres since."""
        notes = self._notes.get(vid)
        if not notes:
            return False
        _, members, then = notes[0]
        return bool(np.any(self.odometer[members] - then >= MOVED_ON))

    def queue(self, vid: int) -> IntArray:
        """The ids of the queue of standing vehicle ``vid`` at its latest note."""
        notes = self._notes.get(vid)
        return notes[-1][1] if notes else np.zeros(0, dtype=np.int64)
