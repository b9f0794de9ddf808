"""Junction entry and the room after it: a vehicle is let in only where it can leave the
junction, what others were promised counts, a request without room keeps nobody out (but
a starved one keeps long vehicles out), and a link of short lane sections between two
junctions belongs to the box."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from roadsim import Simulation
from roadsim.agents.junctions import (
    GRANT_TIMEOUT,
    REROUTE_AFTER,
    SETBACK,
    STARVED_AFTER,
    SWEEP_LENGTH,
    Conflicting,
    JunctionGate,
    Requests,
    _first_requests,
    _keep_paths,
    _keep_room,
    _serve_rows,
    rerouted,
    room_after,
)
from roadsim.road.builder import (
    Document,
    JunctionSpec,
    LaneSectionSpec,
    LaneSpec,
    Line,
    PlanView,
    Pose,
    RoadSpec,
    link_sections,
)
from roadsim.road.load import load_map
from roadsim.scenario import Scenario
from roadsim.sensors.occupancy import occupancy
from roadsim.world.codes import LONG_ROUTE_BIT, ROUTE_BIT
from roadsim.world.lane_info import LaneInfo
from roadsim.world.lane_kernels import choose_next
from roadsim.world.state import VEHICLE

LANE = 3.5
JUNCTION = 10.0  # m: the length of each connecting road


def _sections(*starts: float) -> list[LaneSectionSpec]:
    return link_sections([LaneSectionSpec(s, (LaneSpec(-1, "driving", LANE),)) for s in starts])


def _chain(link_sections: tuple[float, ...], link_length: float) -> Document:
    """Road "1" (200 m) -> junction "A" -> road "M" (``link_length``, in lane sections
    starting at ``link_sections``) -> junction "B" -> road "2" (200 m), due east, one
    driving lane."""
    r1 = RoadSpec("1", PlanView(Pose(0.0, 0.0, 0.0), (Line(200.0),)), _sections(0.0))
    x = 200.0 + JUNCTION
    m = RoadSpec("M", PlanView(Pose(x, 0.0, 0.0), (Line(link_length),)), _sections(*link_sections))
    x += link_length + JUNCTION
    r2 = RoadSpec("2", PlanView(Pose(x, 0.0, 0.0), (Line(200.0),)), _sections(0.0))
    a, b = JunctionSpec("A", "a"), JunctionSpec("B", "b")
    ca = a.connect("ca", r1.end("end"), m.end("start"), [(-1, -1)])
    cb = b.connect("cb", m.end("end"), r2.end("start"), [(-1, -1)])
    return Document("chain", [r1, m, r2, ca, cb], [a, b])


def _lanes_of(info: LaneInfo, road_id: str) -> np.ndarray:
    road = int(info.net.road_index(road_id))
    return np.flatnonzero((info.road == road) & info.drivable)


def test_a_link_of_short_lane_sections_between_two_junctions_is_one_box(tmp_path: Path) -> None:
    path = tmp_path / "chain.xodr"
    path.write_bytes(_chain((0.0, 4.0), 6.0).to_xml())
    info = LaneInfo(load_map(str(path)).prepare())
    gate = JunctionGate(info)
    link = _lanes_of(info, "M")
    assert link.size == 2  # one lane in each of the two sections
    assert gate.boxed[link].all()
    assert not gate.boxed[_lanes_of(info, "1")].any()
    # A longer link is a street to wait on.
    path.write_bytes(_chain((0.0, 4.0), 30.0).to_xml())
    info = LaneInfo(load_map(str(path)).prepare())
    assert not JunctionGate(info).boxed[_lanes_of(info, "M")].any()


def blocked_link_scenario(folder: Path) -> Scenario:
    """Six cars on road 1 of a chain of junctions (written into ``folder``), which drive
    through junction A onto a 16 m link whose way on is blocked: a box stands across road
    2's lane just after junction B."""
    path = folder / "chain.xodr"
    path.write_bytes(_chain((0.0,), 16.0).to_xml())
    return Scenario.model_validate(
        {
            "map": str(path),
            "seed": 3,
            "traffic": {
                "count": 6,
                "min_gap": 10,
                "mix": {"car": 1.0},
                "spawn_area": {"roads": ["1"]},
            },
            "objects": [
                {
                    "type": "box",
                    "size": [1.0, 3.4, 1.0],
                    "position": {"road": "2", "lane": -1, "s": 3},
                }
            ],
        }
    )


@pytest.fixture(scope="module")
def blocked_link(tmp_path_factory: pytest.TempPathFactory) -> Simulation:
    """`blocked_link_scenario` a minute later."""
    sim = Simulation(blocked_link_scenario(tmp_path_factory.mktemp("chain")))
    sim.run(60.0)
    return sim


def test_a_queue_after_a_junction_never_leaves_a_car_standing_inside_it(
    blocked_link: Simulation,
) -> None:
    sim = blocked_link
    st = sim.state
    cars = np.flatnonzero(st.active & (st.kind == VEHICLE))
    assert cars.size == 6
    info = sim._traffic.info
    junction_lanes = np.flatnonzero(info.junction >= 0)
    on_lane = st.uid[cars]
    inside = np.isin(on_lane, junction_lanes)
    # The first car had been let in to junction A; its promise used to hold for B too,
    # and it stood in B behind the box. Followers through one connecting lane do not
    # conflict with each other, so only the room after a junction keeps them out of it.
    assert not inside.any(), st.uid[cars]
    assert np.isin(on_lane, _lanes_of(info, "M")).sum() >= 1
    assert np.isin(on_lane, _lanes_of(info, "1")).sum() >= 4
    assert (st.speed[cars] < 0.1).all()
    assert not sim.events


def test_rerouting_leaves_the_fork_another_way_and_keeps_the_marks() -> None:
    info = LaneInfo(load_map("town").prepare())
    la = info.arrays
    forks = np.flatnonzero(info.next_count > 1)
    assert forks.size
    long_bit = np.uint64(1 << LONG_ROUTE_BIT)
    rng = np.random.default_rng(0)
    for fork in forks.tolist():
        for salt in rng.integers(0, 2**62, size=8, dtype=np.int64).astype(np.uint64):
            taken = choose_next(la, salt, fork)
            new = np.uint64(rerouted(la, salt, fork, taken))  # (numba returns an int)
            assert choose_next(la, new, fork) != taken
            assert not new & long_bit and not new & np.uint64(1 << ROUTE_BIT)
            assert np.uint64(rerouted(la, salt | long_bit, fork, taken)) & long_bit
    # The vehicle that follows the scenario's route keeps its route.
    ego = np.uint64(123456789) | np.uint64(1 << ROUTE_BIT)
    assert rerouted(la, ego, int(forks[0]), choose_next(la, ego, int(forks[0]))) == ego


def test_a_truck_crosses_two_junctions_joined_by_a_link_it_cannot_wait_on(
    tmp_path: Path,
) -> None:
    """A 13 m link has no room for a 12 m truck, the room it leaves behind it and the
    setback before junction B: with long vehicles about, it joins A and B into one box
    and the truck is let in through both. Before, the truck waited before A for ever (the
    link never had room for it), and on CARLA's Town07 with trucks and buses most
    vehicles stood in the queues behind such trucks."""
    path = tmp_path / "chain.xodr"
    path.write_bytes(_chain((0.0,), 13.0).to_xml())
    traffic = {"count": 1, "min_gap": 10, "mix": {"truck": 1.0}, "spawn_area": {"roads": ["1"]}}
    sim = Simulation(Scenario.model_validate({"map": str(path), "seed": 0, "traffic": traffic}))
    info = sim.lane_info
    assert sim.junction_box[_lanes_of(info, "M")].all()
    road_2 = _lanes_of(info, "2")
    for _ in range(round(60.0 / sim.dt)):
        sim.step()
        st = sim.state
        truck = np.flatnonzero(st.active & (st.kind == VEHICLE))[0]
        if np.isin(st.uid[truck], road_2):
            break
    assert np.isin(st.uid[truck], road_2)
    assert not sim.events


def test_long_vehicles_keep_off_a_link_they_cannot_wait_on_where_they_have_another_way(
    tmp_path: Path,
) -> None:
    """Junction A offers a way straight on and one onto a 13 m link into junction B.
    Long vehicles keep off the link (`LaneInfo.tight` 2), so it does not join A and B
    into one box: cars may wait on it. Before, with trucks about, every link under 17 m
    joined its junctions for everyone, and on CARLA's Town07 with the default mix 20 to
    130 vehicles a run stood stuck (300 over six seeds; cars alone with those boxes left
    16 to 27 stuck)."""
    r1 = RoadSpec("1", PlanView(Pose(0.0, 0.0, 0.0), (Line(200.0),)), _sections(0.0))
    x = 200.0 + JUNCTION
    straight = RoadSpec("S", PlanView(Pose(x + 5.0, 0.0, 0.0), (Line(200.0),)), _sections(0.0))
    y = 15.0
    link = RoadSpec("M", PlanView(Pose(x, y, 0.5 * np.pi), (Line(13.0),)), _sections(0.0))
    y += 13.0 + JUNCTION
    r2 = RoadSpec("2", PlanView(Pose(x, y, 0.5 * np.pi), (Line(200.0),)), _sections(0.0))
    a, b = JunctionSpec("A", "a"), JunctionSpec("B", "b")
    ahead = a.connect("ca", r1.end("end"), straight.end("start"), [(-1, -1)])
    left = a.connect("cb", r1.end("end"), link.end("start"), [(-1, -1)])
    on = b.connect("cc", link.end("end"), r2.end("start"), [(-1, -1)])
    path = tmp_path / "fork.xodr"
    Document("fork", [r1, straight, link, r2, ahead, left, on], [a, b]).write(path)
    traffic = {"count": 8, "min_gap": 10, "mix": {"car": 0.5, "truck": 0.5}}
    sim = Simulation(Scenario.model_validate({"map": str(path), "seed": 0, "traffic": traffic}))
    info = sim.lane_info
    m = _lanes_of(info, "M")
    assert np.all(info.tight[m] == 2) and np.all(info.tight[_lanes_of(info, "ca")] == 0)
    assert not sim.junction_box[m].any()
    trucks = sim.state.active & (sim.state.length >= 12.0)
    assert trucks.any()
    assert not info.reach_of_long(sim.state.uid[trucks])[m].any()
    fork = int(_lanes_of(info, "1")[0])
    cars = {choose_next(info.arrays, np.uint64(salt), fork) for salt in range(32)}
    assert cars == {int(_lanes_of(info, "ca")[0]), int(_lanes_of(info, "cb")[0])}


def test_a_link_a_long_vehicle_can_wait_on_stays_a_street(tmp_path: Path) -> None:
    path = tmp_path / "chain.xodr"
    path.write_bytes(_chain((0.0,), 20.0).to_xml())
    gate = JunctionGate(LaneInfo(load_map(str(path)).prepare()))
    gate.keep_clear_of_long_vehicles(np.ones(gate.info.n, dtype=bool))  # (trucks everywhere)
    link = _lanes_of(gate.info, "M")
    assert not gate.boxed[link].any()
    assert link.size == 1
    # (and the setback before B leaves the truck its room on it)
    assert gate.info.length[link[0]] - gate.setback[link[0]] >= SWEEP_LENGTH + 2.0


def test_a_long_vehicle_waiting_for_room_after_a_junction_is_not_passed_by_later_cars() -> None:
    """Town07: a truck waited at a merge for room on a 29 m street while the cars of the
    other entry, which need less room, filled it as fast as it emptied; eight trucks
    queued behind it for 96 s. Room after a junction is first come, first served too:
    the requests into that lane from vehicles that came after it are refused."""
    # Rows: the waiting truck (no room), a car after it into the same lane, a car into
    # another lane, a car that came before it, a truck still far from its entry (no
    # room) and a car after that one into its lane.
    after = np.array([5, 5, 7, 5, 9, 9])
    requests = Requests(
        start=np.zeros(6, dtype=np.int64),
        end=np.zeros(6, dtype=np.int64),
        lane=np.zeros(6, dtype=np.int64),
        rank=np.array([-50.0, 3.0, 3.0, -60.0, 30.0, 31.0]),
        slot=np.arange(6),
        is_long=np.array([True, False, False, False, True, False]),
        after=after,
        starved=np.zeros(6, dtype=bool),
    )
    entry = np.array([1.0, 3.0, 3.0, 0.5, 30.0, 31.0])
    fits = np.array([False, True, True, True, False, True])
    scratch = np.full(10, -1, dtype=np.int64)
    _keep_room(requests, entry, fits, scratch)
    assert fits.tolist() == [False, False, True, True, False, True]
    assert np.all(scratch == -1)  # (left as found: the gate's scratch of `serve`)


def _requests(count: int, paths: list[int], **fields: np.ndarray) -> Requests:
    """Requests through a junction, one lane each (``paths``), in the order they came."""
    base: dict[str, np.ndarray] = {
        "start": np.arange(count),
        "end": np.arange(count) + 1,
        "lane": np.array(paths),
        "rank": np.arange(count, dtype=float),
        "slot": np.arange(count),
        "is_long": np.zeros(count, dtype=bool),
        "after": np.full(count, -1),
        "starved": np.zeros(count, dtype=bool),
    }
    return Requests(**(base | fields))


@pytest.mark.parametrize("starved", [True, False])
def test_a_starved_vehicle_keeps_the_room_after_the_junction_from_later_cars(
    starved: bool,
) -> None:
    """A car that has waited `STARVED_AFTER` seconds at its entry keeps the room after the
    junction, as a long vehicle does at once (above); before that, the room goes to
    whoever has it now."""
    requests = _requests(2, [0, 1], after=np.array([5, 5]), starved=np.array([starved, False]))
    fits = np.array([False, True])
    _keep_room(requests, np.array([1.0, 3.0]), fits, np.full(6, -1, dtype=np.int64))
    assert fits.tolist() == [False, not starved]


@pytest.mark.parametrize("starved", [True, False])
def test_a_starved_vehicle_without_room_keeps_its_path_from_later_long_vehicles(
    starved: bool,
) -> None:
    """CARLA's Town07 (seeds 31 and 44): a car waited 64 and 81 s at an entry. A convoy of
    trucks through a conflicting turn was let in whenever the car had no room after the
    junction (a request without room keeps nobody out), and held the turn whenever it
    had. Once starved, a vehicle waiting for room keeps its path from the long vehicles
    that came after it, but not from cars: keeping every vehicle out locked rings of
    queues (the room it waited for waited for a car it kept out)."""
    # Lanes: 0 the starved car's path; 1 a truck's, 2 a car's, both crossing lane 0.
    near = [[1, 2], [0], [0]]
    conflicts = Conflicting(
        near_ptr=np.array([0, 2, 3, 4]),
        near_idx=np.array([q for lanes in near for q in lanes]),
        wide_ptr=np.array([0, 2, 3, 4]),
        wide_idx=np.array([q for lanes in near for q in lanes]),
    )
    requests = _requests(
        3,
        [0, 1, 2],
        is_long=np.array([False, True, False]),
        starved=np.array([starved, False, False]),
    )
    grant = np.array([False, True, True])  # (the starved car has no room after it)
    position = np.full(3, -1, dtype=np.int64)
    _first_requests(requests, grant, position)
    kept = np.full(3, -1, dtype=np.int64)
    _keep_paths(requests, grant, kept)
    free = np.zeros(3, dtype=bool)
    _serve_rows(requests, free, free, conflicts, position, kept, True, grant, 0, 1)
    assert grant.tolist() == [False, not starved, True]


def test_the_room_after_a_junction_ends_where_a_long_vehicle_may_wait_for_a_passage(
    tmp_path: Path,
) -> None:
    """A truck on its way to a narrow passage 20 m into the lane after a junction (on the
    lane, or still in the junction) may stop before it, where one comes the other way:
    the room after the junction ends there while it is on its way. Before, a second
    truck was let in behind it and stood in the junction (CARLA's Town07)."""
    path = tmp_path / "chain.xodr"
    _chain((0.0,), 60.0).write(path)
    info = LaneInfo(load_map(path).prepare())
    gate = JunctionGate(info)
    (lane,) = _lanes_of(info, "M")
    long_stop = np.full(info.n, np.inf)
    long_stop[lane] = 20.0
    setback = np.full(info.n, 3.0)
    salt, need = np.uint64(0), 14.0

    def room(p: list[float], long_coming: bool, stop: np.ndarray = long_stop) -> float:
        n = len(p)
        occ = occupancy(info.n, np.arange(n), np.full(n, lane), np.array(p), np.full(n, 6.0))
        args = (info.arrays, occ, gate.boxed, setback, stop, lane, salt, need, long_coming)
        return float(room_after(*args))

    nowhere = np.full(info.n, np.inf)
    assert room([], False) == pytest.approx(57.0)  # up to the setback before junction B
    assert room([], True) == pytest.approx(20.0)  # a truck comes in from junction A
    assert room([], True, nowhere) == pytest.approx(57.0)
    # A truck whose front is at the passage's wait point: 20 - 14 m queued.
    assert room([14.0], False) == pytest.approx(6.0)
    assert room([14.0], False, nowhere) == pytest.approx(8.0)  # (up to its rear)
    # One already past it is let in, or on its way through: the room ends as before.
    assert room([30.0], False) == pytest.approx(24.0)


def _gate_before_a_junction(tmp_path: Path) -> tuple[JunctionGate, np.ndarray]:
    """A gate for one vehicle on road 1 of a `_chain` with one junction, and its route:
    road 1's lane, the connecting lane and the lane after it."""
    path = tmp_path / "chain.xodr"
    _chain((0.0,), 60.0).write(path)
    info = LaneInfo(load_map(path).prepare())
    gate = JunctionGate(info)
    (before,) = _lanes_of(info, "1")
    gate.resize(1)
    return gate, np.array([[before, *_lanes_of(info, "ca"), *_lanes_of(info, "M")]])


def _ask(
    gate: JunctionGate, route: np.ndarray, to_entry: float, speed: float, *, wants_in: bool
) -> np.ndarray:
    """One tick of the gate for a 5 m car whose front is ``to_entry`` metres before the
    junction along ``route``: its gap to where it must wait (inf: none)."""
    info, before = gate.info, route[0, 0]
    p = info.length[before] - to_entry - 2.5  # (the car's centre)
    occ = occupancy(info.n, np.array([0]), np.array([before]), np.array([p]), np.array([2.5]))
    start = np.array([[-(p + 2.5), to_entry, to_entry + info.length[route[0, 1]]]])
    return gate.gaps(
        np.array([0]), route, start, np.array([1]), np.array([wants_in]), occ, np.array([2.5]),
        np.array([speed]), np.zeros(1, dtype=np.uint64), 0.05,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("mouth", "to_entry", "speed", "keeps"),
    [
        (10.0, 6.0, 0.5, True),  # in the mouth long vehicles sweep
        (10.0, 12.0, 4.4, True),  # too fast to stop before it
        (10.0, 12.0, 0.5, False),
        (SETBACK, -0.8, 5.5, True),  # its front in the junction
        (SETBACK, 6.0, 0.5, False),
    ],
)
def test_a_promise_running_out_is_kept_by_a_vehicle_that_could_not_stop_before_the_entry(
    tmp_path: Path, mouth: float, to_entry: float, speed: float, keeps: bool
) -> None:
    """A promise not used for `GRANT_TIMEOUT` seconds is withdrawn, but not from a
    vehicle that could not stop before the entry, nor before the mouth of an entry that
    long vehicles turning nearby sweep (`entry_setbacks`). On CARLA's Town07 (once
    trucks could leave their circuit) a bus let in from 28 m back lost its promise at
    4.4 m/s 12.2 m before the entry, stood 11 m before it in the 12 m mouth, and the next
    truck's turn met it (seed 58; seed 6: a car that had crept into the mouth); a car
    lost its promise with its front 0.8 m in the junction, stopped there and was met by
    the car let in instead (seed 30). Before, cars always lost it, trucks below 3 m/s
    too, and the mouth did not count."""
    gate, route = _gate_before_a_junction(tmp_path)
    gate.setback[route[0, 0]] = mouth  # (as `entry_setbacks` sets it where trucks sweep)
    gate.granted[0], gate.grant_lane[0] = True, route[0, 1]
    gate.grant_age[0] = GRANT_TIMEOUT + 0.1
    out = _ask(gate, route, to_entry, speed, wants_in=True)
    if keeps:
        assert gate.granted[0] and out[0] == np.inf
    else:
        assert not gate.granted[0] and out[0] == pytest.approx(to_entry - mouth)


@pytest.mark.parametrize(
    ("to_entry", "keeps"), [(SETBACK, True), (SETBACK + 4.0, True), (20.0, False)]
)
def test_a_vehicle_that_stops_asking_where_it_waits_keeps_its_time_there(
    tmp_path: Path, to_entry: float, keeps: bool
) -> None:
    """Who has waited longer at an entry is served first (`_WAITED_AHEAD`). A vehicle
    that stops asking for a moment while still where it waits keeps that time: on CARLA's
    Town07 every truck turning past swung over the mouth a car waited at, the car saw it
    ahead and stopped asking for a tick, and lost the minute it had waited to the next
    truck to come (seed 23: 95 s at an empty junction). One that has moved back from
    its waiting point, or on, starts afresh."""
    gate, route = _gate_before_a_junction(tmp_path)
    gate.wait_age[0] = 30.0
    _ask(gate, route, to_entry, 0.0, wants_in=False)
    assert gate.wait_age[0] == (30.0 if keeps else 0.0)


def _crossing() -> Document:
    """Road "1" (200 m, due east) -> connecting road "ca" -> road "2"; across it, road
    "S" (200 m, due north) -> "cs" -> road "N": two straight ways through one junction
    that cross in its middle, one driving lane each."""
    east = PlanView(Pose(0.0, 0.0, 0.0), (Line(200.0),))
    r1 = RoadSpec("1", east, _sections(0.0))
    r2 = RoadSpec("2", PlanView(Pose(200.0 + JUNCTION, 0.0, 0.0), (Line(200.0),)), _sections(0.0))
    half = 0.5 * JUNCTION
    north = PlanView(Pose(200.0 + half, -200.0 - half, 0.5 * np.pi), (Line(200.0),))
    south_road = RoadSpec("S", north, _sections(0.0))
    after = PlanView(Pose(200.0 + half, half, 0.5 * np.pi), (Line(200.0),))
    north_road = RoadSpec("N", after, _sections(0.0))
    a = JunctionSpec("A", "a")
    ca = a.connect("ca", r1.end("end"), r2.end("start"), [(-1, -1)])
    cs = a.connect("cs", south_road.end("end"), north_road.end("start"), [(-1, -1)])
    return Document("crossing", [r1, r2, south_road, north_road, ca, cs], [a])


@pytest.mark.parametrize(
    ("refused_for", "waited", "reroutes"),
    [
        ("crossing traffic", 0.0, True),
        ("crossing traffic", STARVED_AFTER, False),
        ("room", STARVED_AFTER, True),
    ],
)
def test_a_starved_vehicle_refused_for_crossing_traffic_keeps_its_way(
    tmp_path: Path, refused_for: str, waited: float, reroutes: bool
) -> None:
    """A vehicle refused at an entry for `REROUTE_AFTER` seconds takes another way (a new
    route salt): the room it waits for may wait on a ring of queues. A starved one with
    room, refused for crossing traffic only, keeps its way, where it comes first: on
    CARLA's Town07 (seed 88) a car went round three ways for 70 s, each time finding the
    vehicles let in while it waited for the last one across the next."""
    path = tmp_path / "crossing.xodr"
    _crossing().write(path)
    info = LaneInfo(load_map(path).prepare())
    gate = JunctionGate(info)
    gate.resize(2)
    (before,), (inside,), (after,) = (_lanes_of(info, r) for r in ("1", "ca", "2"))
    route = np.array([[before, inside, after]])
    # Slot 0 waits at its entry; slot 1 crosses its path, or stands where it would go.
    other_lane, other_p = (
        (_lanes_of(info, "cs")[0], 0.5 * JUNCTION)
        if refused_for == "crossing traffic"
        else (after, 2.5)
    )
    p = info.length[before] - SETBACK - 2.5
    occ = occupancy(
        info.n, np.array([0, 1]), np.array([before, other_lane]), np.array([p, other_p]),
        np.full(2, 2.5),
    )  # fmt: skip
    start = np.array([[-(p + 2.5), SETBACK, SETBACK + info.length[inside]]])
    salt = np.zeros(2, dtype=np.uint64)
    gate.wait_age[0] = waited
    dt = 0.05
    for _ in range(round(REROUTE_AFTER / dt) + 2):
        out = gate.gaps(
            np.array([0]), route, start, np.array([1]), np.array([True]), occ, np.full(2, 2.5),
            np.zeros(2), salt, dt,
        )  # fmt: skip
        assert out[0] == pytest.approx(0.0)  # (refused: it waits where it is)
    assert (salt[0] != 0) == reroutes
