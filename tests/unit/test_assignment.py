"""Replica assignment: known answers from Kafka 2.8's own tests and from OpenJDK 17 / Scala 2.13, then
properties that follow from the algorithm (each test says why it must hold)."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkaops.admin.assignment import (
    JavaRandom,
    assign_replicas_to_brokers,
    new_partitions_assignment,
    parse_replica_assignment,
    rack_alternated_broker_list,
    validate_create_assignment,
)
from kafkaops.cluster.common.errors import (
    AdminOperationError,
    BrokerNotAvailableError,
    InvalidArgumentError,
    InvalidPartitionsError,
    InvalidReplicaAssignmentError,
    InvalidReplicationFactorError,
)


class ScriptedRandom:
    """An IntRandom that returns given values and records the bounds it was asked for."""

    def __init__(self, *values: int) -> None:
        self.values = list(values)
        self.bounds: list[int] = []

    def next_int(self, bound: int) -> int:
        self.bounds.append(bound)
        return self.values.pop(0)


class NoRandom:
    def next_int(self, bound: int) -> int:
        raise AssertionError("no draw expected with a fixed start index")


# --- JavaRandom: values printed by OpenJDK 17's java.util.Random --------------------------------------


def test_java_random_seed_42_bound_10() -> None:
    rng = JavaRandom(42)
    assert [rng.next_int(10) for _ in range(10)] == [0, 3, 8, 4, 0, 5, 5, 8, 9, 3]


@pytest.mark.parametrize(
    ("seed", "bound", "expected"),
    [
        (0, 16, [11, 13, 3, 9, 10]),  # power of two: high bits, no modulo
        (0, 64, [46, 53, 15, 38, 40]),
        (0, 1 << 30, [784870680, 892752974, 258274014, 651058223, 684421757]),
        (0, 1000, [360, 948, 29, 447, 515]),
        (1, 7, [4, 4, 1, 0, 6]),
        (1, 1, [0, 0, 0, 0, 0]),
        (1, (1 << 30) + 1, [215764588, 880641847, 874970313, 446064254, 77814904]),  # first draw rejected
        (-1, (1 << 30) + 1, [577549913, 943952225, 26349579, 894294477, 857465478]),  # fourth rejected
        (-1, 6, [5, 5, 3, 5, 2]),
        (123456789, 2147483647, [1426010965, 1639209600, 981296483, 547328344, 838606290]),
        (-(1 << 63), 7, [5, 2, 4, 2, 4]),  # Long.MIN_VALUE scrambles like 0
        (0x5DEECE66D, 1000, [0, 118, 895, 186, 366]),  # scrambled state 0
    ],
)
def test_java_random_known_values(seed: int, bound: int, expected: list[int]) -> None:
    rng = JavaRandom(seed)
    assert [rng.next_int(bound) for _ in range(5)] == expected


@pytest.mark.parametrize("bound", [0, -1, 1 << 31])
def test_java_random_rejects_bounds_java_cannot_take(bound: int) -> None:
    with pytest.raises(ValueError):
        JavaRandom(0).next_int(bound)


def test_unseeded_java_randoms_differ() -> None:
    # The seed uniquifier makes two instances created in the same nanosecond differ, as in Java.
    a, b = JavaRandom(), JavaRandom()
    assert [a.next_int(1 << 30) for _ in range(3)] != [b.next_int(1 << 30) for _ in range(3)]


# --- Kafka's known answers -------------------------------------------------------------------------

RACKS_DOC = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}


@pytest.mark.parametrize(
    ("racks", "expected"),
    [
        (RACKS_DOC, [0, 3, 1, 5, 4, 2]),  # AdminRackAwareTest
        ({k: v for k, v in RACKS_DOC.items() if k != 5}, [0, 3, 1, 4, 2]),  # AdminRackAwareTest
        ({b: f"rack{b // 3 + 1}" for b in range(9)}, [0, 3, 6, 1, 4, 7, 2, 5, 8]),  # AdminUtils doc
        ({7: "b", 3: "a", 9: "b", 1: "a", 5: "c"}, [1, 7, 5, 3, 9]),
    ],
)
def test_rack_alternated_broker_list(racks: dict[int, str], expected: list[int]) -> None:
    assert rack_alternated_broker_list(racks) == expected


def test_rack_order_is_java_string_order() -> None:
    # U+1F600 sorts after U+FF5E by code point but before it by UTF-16 code unit (D83D), as Java sorts.
    assert rack_alternated_broker_list({0: "\U0001f600", 1: "\uff5e"}) == [0, 1]


def test_kafka_replica_assignment_rack_unaware() -> None:
    # AdminTest.testReplicaAssignment (also AdminUtils' doc table).
    expected = {
        0: [0, 1, 2], 1: [1, 2, 3], 2: [2, 3, 4], 3: [3, 4, 0], 4: [4, 0, 1],
        5: [0, 2, 3], 6: [1, 3, 4], 7: [2, 4, 0], 8: [3, 0, 1], 9: [4, 1, 2],
    }  # fmt: skip
    assert assign_replicas_to_brokers([0, 1, 2, 3, 4], 10, 3, 0) == expected


def test_kafka_replica_assignment_rack_aware() -> None:
    # AdminRackAwareTest.testGetRackAlternatedBrokerListAndAssignReplicasToBrokers.
    expected = {
        0: [0, 3, 1], 1: [3, 1, 5], 2: [1, 5, 4], 3: [5, 4, 2], 4: [4, 2, 0], 5: [2, 0, 3], 6: [0, 4, 2],
    }  # fmt: skip
    assert assign_replicas_to_brokers(sorted(RACKS_DOC), 7, 3, 0, 0, racks=RACKS_DOC) == expected


def check_replica_distribution(
    assignment: dict[int, list[int]],
    racks: dict[int, str],
    n_partitions: int,
    rf: int,
    *,
    rack_aware: bool = True,
    leaders: bool = True,
    replicas: bool = True,
) -> None:
    """Port of Kafka's RackAwareTest.checkReplicaDistribution."""
    n_brokers = len(racks)
    assert all(len(set(r)) == len(r) for r in assignment.values())
    if rack_aware:
        assert [len({racks[b] for b in r}) for r in assignment.values()] == [rf] * n_partitions
    if leaders:
        assert list(Counter(r[0] for r in assignment.values()).values()) == [n_partitions // n_brokers] * n_brokers
    if replicas:
        counts = Counter(b for r in assignment.values() for b in r)
        assert list(counts.values()) == [n_partitions * rf // n_brokers] * n_brokers


RACKS_1 = {0: "rack1", 1: "rack2", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack1"}
RACKS_12 = {
    0: "rack1", 1: "rack2", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack1",
    6: "rack1", 7: "rack2", 8: "rack2", 9: "rack3", 10: "rack1", 11: "rack3",
}  # fmt: skip
# AdminRackAwareTest cases: (racks, partitions, rf, fixed start or None for random, start partition, checks).
KAFKA_RACK_CASES = {
    "testAssignmentWithRackAware": (RACKS_1, 6, 3, 2, 0, {}),
    "testAssignmentWithRackAwareWithRandomStartIndex": (RACKS_1, 6, 3, None, -1, {}),
    "testAssignmentWithRackAwareWithUnevenReplicas": (
        RACKS_1, 13, 3, 0, 0, {"leaders": False, "replicas": False},
    ),
    "testAssignmentWithRackAwareWithUnevenRacks": (
        {0: "rack1", 1: "rack1", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack1"}, 12, 3, None, -1,
        {"replicas": False},
    ),
    "testAssignmentWith2ReplicasRackAware": (RACKS_1, 12, 2, None, -1, {}),
    "testRackAwareExpansion": ({b + 6: r for b, r in RACKS_1.items()}, 12, 2, None, 12, {}),
    "testAssignmentWith2ReplicasRackAwareWith6Partitions": (RACKS_1, 6, 2, None, -1, {}),
    "testAssignmentWith2ReplicasRackAwareWith6PartitionsAnd3Brokers": (
        {0: "rack1", 1: "rack2", 4: "rack3"}, 3, 2, None, -1, {},
    ),
    "testLargeNumberPartitionsAssignment": (RACKS_12, 96, 3, None, -1, {}),
    "testSkipBrokerWithReplicaAlreadyAssigned": (
        {0: "a", 1: "b", 2: "c", 3: "a", 4: "a"}, 6, 4, 2, -1,
        {"rack_aware": False, "leaders": False, "replicas": False},
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", KAFKA_RACK_CASES)
def test_kafka_rack_aware_distribution(case: str) -> None:
    racks, n_partitions, rf, fixed, start_pid, checks = KAFKA_RACK_CASES[case]
    n = len(racks)
    # Kafka draws its start once per run; we check every (start index, shift) it could draw.
    draws = [(fixed, fixed)] if fixed is not None else [(s, t) for s in range(n) for t in range(n)]
    for start, shift in draws:
        rng = None if fixed is not None else ScriptedRandom(start, shift)
        assignment = assign_replicas_to_brokers(
            sorted(racks), n_partitions, rf, -1 if fixed is None else fixed, start_pid, racks=racks, rng=rng
        )
        check_replica_distribution(assignment, racks, n_partitions, rf, **checks)


@pytest.mark.parametrize(
    ("rf", "racks", "racks_per_partition", "leaders_per_broker"),
    [
        (
            5,
            {0: "rack1", 1: "rack2", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack2"},
            3,
            None,
        ),  # testMoreReplicasThanRacks
        (
            2,
            {0: "rack1", 1: "rack2", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack2"},
            2,
            None,
        ),  # testLessReplicasThanRacks
        (3, dict.fromkeys(range(6), "rack1"), 1, 1),  # testSingleRack
    ],
)
def test_kafka_rack_spread(
    rf: int, racks: dict[int, str], racks_per_partition: int, leaders_per_broker: int | None
) -> None:
    for start in range(6):
        for shift in range(6):
            assignment = assign_replicas_to_brokers(sorted(racks), 6, rf, racks=racks, rng=ScriptedRandom(start, shift))
            assert [len(r) for r in assignment.values()] == [rf] * 6
            assert all(len({racks[b] for b in r}) == racks_per_partition for r in assignment.values())
            if leaders_per_broker is not None:
                assert Counter(r[0] for r in assignment.values()) == dict.fromkeys(racks, leaders_per_broker)


# --- preconditions and draws ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n_partitions", "rf", "error", "message"),
    [
        (0, 1, InvalidPartitionsError, "Number of partitions must be larger than 0."),
        (10, 0, InvalidReplicationFactorError, "Replication factor must be larger than 0."),
        (10, 6, InvalidReplicationFactorError, "Replication factor: 6 larger than available brokers: 5."),
    ],
)
def test_preconditions(n_partitions: int, rf: int, error: type[Exception], message: str) -> None:
    with pytest.raises(error) as info:
        assign_replicas_to_brokers([0, 1, 2, 3, 4], n_partitions, rf)
    assert str(info.value) == message


def test_some_brokers_without_rack() -> None:
    with pytest.raises(AdminOperationError) as info:
        assign_replicas_to_brokers([0, 1, 2], 3, 2, 0, racks={0: "a", 1: "b"})
    assert str(info.value) == "Not all brokers have rack information for replica rack aware assignment."


def test_racks_of_unlisted_brokers_are_ignored() -> None:
    assert assign_replicas_to_brokers([0, 1, 2], 3, 2, 0, racks={7: "a"}) == assign_replicas_to_brokers(
        [0, 1, 2], 3, 2, 0
    )


def test_start_index_drawn_before_shift() -> None:
    # first = 2, followers at (3 + (3 + j) % 4) % 5 -> brokers 1, 3; swapping the draws gives [3, 1, 2].
    rng = ScriptedRandom(2, 3)
    assert assign_replicas_to_brokers([0, 1, 2, 3, 4], 1, 3, rng=rng) == {0: [2, 1, 3]}
    assert rng.bounds == [5, 5]
    assert assign_replicas_to_brokers([0, 1, 2, 3, 4], 1, 3, rng=ScriptedRandom(3, 2)) == {0: [3, 1, 2]}


def test_rack_aware_draws_use_the_rack_alternated_list_size() -> None:
    rng = ScriptedRandom(0, 0)
    assign_replicas_to_brokers(sorted(RACKS_DOC), 1, 2, racks=RACKS_DOC, rng=rng)
    assert rng.bounds == [6, 6]


def test_fixed_start_index_draws_nothing() -> None:
    assert assign_replicas_to_brokers([0, 1, 2], 4, 2, 1, rng=NoRandom()) == {
        0: [1, 0], 1: [2, 1], 2: [0, 2], 3: [1, 2],
    }  # fmt: skip


def test_java_random_draws_like_kafka() -> None:
    # OpenJDK: new Random(42).nextInt(5) twice gives 0, 3, so a Kafka seeded 42 starts at 0, shift 3.
    brokers = [0, 1, 2, 3, 4]
    expected = assign_replicas_to_brokers(brokers, 3, 2, rng=ScriptedRandom(0, 3))
    assert assign_replicas_to_brokers(brokers, 3, 2, rng=JavaRandom(42)) == expected


# --- properties -------------------------------------------------------------------------------------

broker_lists = st.lists(st.integers(0, 60), min_size=1, max_size=10, unique=True).map(sorted)


@st.composite
def assignment_inputs(draw: st.DrawFn, rack_aware: bool) -> dict:
    brokers = draw(broker_lists)
    racks = {b: draw(st.sampled_from("abcd")) for b in brokers} if rack_aware else None
    return {
        "brokers": brokers,
        "n_partitions": draw(st.integers(1, 40)),
        "replication_factor": draw(st.integers(1, len(brokers))),
        "fixed_start_index": draw(st.integers(-1, 2 * len(brokers))),
        "start_partition_id": draw(st.integers(-1, 60)),
        "racks": racks,
        "rng": JavaRandom(draw(st.integers(-(1 << 63), (1 << 63) - 1))),
    }


any_inputs = st.booleans().flatmap(assignment_inputs)


@given(any_inputs)
def test_every_partition_gets_rf_distinct_listed_brokers(kw: dict) -> None:
    assignment = assign_replicas_to_brokers(**kw)
    first = max(0, kw["start_partition_id"])
    assert list(assignment) == list(range(first, first + kw["n_partitions"]))
    for replicas in assignment.values():
        assert len(replicas) == len(set(replicas)) == kw["replication_factor"]
        assert set(replicas) <= set(kw["brokers"])


@given(any_inputs)
def test_leader_counts_differ_by_at_most_one(kw: dict) -> None:
    # Leaders are (pid + start) mod n over consecutive pids: each broker leads floor or ceil of N / n.
    leaders = Counter(r[0] for r in assign_replicas_to_brokers(**kw).values())
    counts = [leaders[b] for b in kw["brokers"]]
    assert max(counts) - min(counts) <= 1


@given(assignment_inputs(rack_aware=False), st.integers(1, 4))
def test_aligned_blocks_spread_replicas_evenly(kw: dict, blocks: int) -> None:
    # Within a block of n partitions starting at a multiple of n the shift is constant, so each replica
    # position is a rotation of the broker list: every broker holds exactly blocks * rf replicas.
    n = len(kw["brokers"])
    kw |= {"n_partitions": blocks * n, "start_partition_id": n * max(0, kw["start_partition_id"] // n)}
    counts = Counter(b for r in assign_replicas_to_brokers(**kw).values() for b in r)
    assert [counts[b] for b in kw["brokers"]] == [blocks * kw["replication_factor"]] * n


@given(assignment_inputs(rack_aware=True))
def test_rack_aware_spreads_over_min_rf_racks(kw: dict) -> None:
    # A follower from an already used rack is accepted only once every rack holds a replica.
    num_racks = len(set(kw["racks"].values()))
    for replicas in assign_replicas_to_brokers(**kw).values():
        assert len({kw["racks"][b] for b in replicas}) == min(kw["replication_factor"], num_racks)


@given(any_inputs, st.integers(-(1 << 63), (1 << 63) - 1))
def test_seeded_java_random_is_deterministic(kw: dict, seed: int) -> None:
    kw["fixed_start_index"] = -1
    first = assign_replicas_to_brokers(**(kw | {"rng": JavaRandom(seed)}))
    assert assign_replicas_to_brokers(**(kw | {"rng": JavaRandom(seed)})) == first


@given(any_inputs, st.data())
def test_continuation_with_the_same_fixed_start(kw: dict, data: st.DataObject) -> None:
    # Leaders depend on the partition id alone, so they always continue. The shift grows once per
    # multiple of n met *during the run*: a continuation from s matches the one-shot run only while no
    # multiple of n lies in (0, s), i.e. s <= n; later ones lag by (s - 1) // n shifts.
    kw |= {"fixed_start_index": data.draw(st.integers(0, 2 * len(kw["brokers"]))), "start_partition_id": 0}
    total = kw["n_partitions"] + 1
    split = data.draw(st.integers(1, total - 1))
    whole = assign_replicas_to_brokers(**(kw | {"n_partitions": total}))
    head = assign_replicas_to_brokers(**(kw | {"n_partitions": split}))
    tail = assign_replicas_to_brokers(**(kw | {"n_partitions": total - split, "start_partition_id": split}))
    assert {p: r[0] for p, r in (head | tail).items()} == {p: r[0] for p, r in whole.items()}
    if split <= len(kw["brokers"]):
        assert head | tail == whole


def test_continuation_past_n_lags_the_shift() -> None:
    whole = assign_replicas_to_brokers([0, 1, 2], 7, 2, 0, 0)
    tail = assign_replicas_to_brokers([0, 1, 2], 3, 2, 0, 4)
    # Partition 4: one-shot shift 0 + 4 // 3 = 1, continuation shift 0 (no multiple of 3 in [4, 4]).
    assert whole[4] == [1, 0]
    assert tail[4] == [1, 2]


# --- adding partitions ------------------------------------------------------------------------------


def test_kafka_add_partitions_replica_placement_all_servers() -> None:
    # AddPartitionsTest.testReplicaPlacementAllServers: topic3 {0: [2, 3, 0, 1]} grown to 7.
    new = new_partitions_assignment("new-topic3", {0: [2, 3, 0, 1]}, [0, 1, 2, 3], 7)
    assert {p: r[0] for p, r in new.items()} == {1: 3, 2: 0, 3: 1, 4: 2, 5: 3, 6: 0}
    assert all(set(r) == {0, 1, 2, 3} for r in new.values())


def test_kafka_add_partitions_replica_placement_partial_servers() -> None:
    # AddPartitionsTest.testReplicaPlacementPartialServers: topic2 {0: [1, 2]} grown to 3.
    new = new_partitions_assignment("new-topic2", {0: [1, 2]}, [0, 1, 2, 3], 3)
    assert new == {1: [2, 0], 2: [3, 1]}


def test_kafka_add_partitions_missing_partition_0() -> None:
    # AddPartitionsTest.testMissingPartition0 (its text; the map as Scala 2.13 prints it).
    with pytest.raises(AdminOperationError) as info:
        new_partitions_assignment("new-topic5", {1: [0, 1]}, [0, 1, 2, 3], 2, replica_assignment={1: [0, 1]})
    assert str(info.value) == (
        "Unexpected existing replica assignment for topic 'new-topic5', partition id 0 is missing. "
        "Assignment: Map(1 -> ReplicaAssignment(replicas=0,1, addingReplicas=, removingReplicas=))"
    )


def test_missing_partition_0_prints_a_scala_hash_map_past_four_entries() -> None:
    with pytest.raises(AdminOperationError) as info:
        new_partitions_assignment("t", {p: [p] for p in range(1, 6)}, [1, 2, 3, 4, 5], 9)
    assert str(info.value).endswith(
        "Assignment: HashMap(5 -> ReplicaAssignment(replicas=5, addingReplicas=, removingReplicas=), "
        "1 -> ReplicaAssignment(replicas=1, addingReplicas=, removingReplicas=), "
        "2 -> ReplicaAssignment(replicas=2, addingReplicas=, removingReplicas=), "
        "3 -> ReplicaAssignment(replicas=3, addingReplicas=, removingReplicas=), "
        "4 -> ReplicaAssignment(replicas=4, addingReplicas=, removingReplicas=))"
    )


@pytest.mark.parametrize("num_partitions", [1, 2])
def test_add_partitions_must_increase(num_partitions: int) -> None:
    with pytest.raises(InvalidPartitionsError) as info:
        new_partitions_assignment("t", {0: [0], 1: [1]}, [0, 1], num_partitions)
    assert str(info.value) == (
        f"The number of partitions for a topic can only be increased. Topic t currently has 2 partitions, "
        f"{num_partitions} would not be an increase."
    )


@pytest.mark.parametrize(
    ("leader", "start_index"),
    [(5, 2), (4, 2), (1, 0), (0, 0), (9, 0)],  # first broker id >= leader, else index 0
)
def test_add_partitions_starts_at_partition_0_leader(leader: int, start_index: int) -> None:
    brokers = [1, 3, 5, 7]
    new = new_partitions_assignment("t", {0: [leader, 3], 1: [3, 5]}, brokers, 6, rng=NoRandom())
    assert new == assign_replicas_to_brokers(brokers, 4, 2, start_index, 2)


def test_add_partitions_rack_aware() -> None:
    new = new_partitions_assignment("t", {0: [3, 1, 5]}, sorted(RACKS_DOC), 7, racks=RACKS_DOC)
    assert new == assign_replicas_to_brokers(sorted(RACKS_DOC), 6, 3, 3, 1, racks=RACKS_DOC)


@given(broker_lists, st.data())
def test_adding_partitions_continues_kafkas_layout(brokers: list[int], data: st.DataObject) -> None:
    # Partition 0's leader is brokers[f], so adding reuses f as start index and shift; growing a topic of
    # at most n partitions then gives what creating it at the new size would have given.
    n = len(brokers)
    f, rf = data.draw(st.integers(0, n - 1)), data.draw(st.integers(1, n))
    existing_count, added = data.draw(st.integers(1, 2 * n)), data.draw(st.integers(1, 20))
    existing = assign_replicas_to_brokers(brokers, existing_count, rf, f)
    new = new_partitions_assignment("t", existing, brokers, existing_count + added, rng=NoRandom())
    whole = assign_replicas_to_brokers(brokers, existing_count + added, rf, f)
    assert {p: r[0] for p, r in new.items()} == {p: r[0] for p, r in whole.items() if p >= existing_count}
    if existing_count <= n:
        assert existing | new == whole


def test_manual_assignment_is_returned() -> None:
    manual = {1: [0, 1], 2: [2, 3]}
    assert new_partitions_assignment("t", {0: [1, 2]}, [0, 1, 2, 3], 3, replica_assignment=manual) == manual


def test_empty_manual_assignment_means_automatic() -> None:
    auto = new_partitions_assignment("t", {0: [1, 2]}, [0, 1, 2, 3], 3)
    assert new_partitions_assignment("t", {0: [1, 2]}, [0, 1, 2, 3], 3, replica_assignment={}) == auto


@pytest.mark.parametrize(
    ("manual", "error", "message"),
    [
        (
            {1: [], 2: [0, 1]},
            InvalidReplicaAssignmentError,
            "Cannot have replication factor of 0 for partition id 1.",
        ),
        (
            {1: [0, 1], 2: [1, 1]},
            InvalidReplicaAssignmentError,
            "Duplicate brokers not allowed in replica assignment: 1, 1 for partition id 2.",
        ),
        (
            {1: [1, 9], 2: [0, 1]},
            BrokerNotAvailableError,
            (
                "Some brokers specified for partition id 1 are not available. Specified brokers: 1, 9, "
                "available brokers: 0, 1, 2, 3."
            ),
        ),
        (
            # AddPartitionsTest.testWrongReplicaCount, in full.
            {1: [0, 1, 2], 2: [0, 1], 3: [3]},
            InvalidReplicaAssignmentError,
            (
                "Inconsistent replication factor between partitions, partition 0 has 2 while partitions "
                "[1, 3] have replication factors [3, 1], respectively."
            ),
        ),
        (
            {1: [0, 1]},
            InvalidReplicaAssignmentError,
            "Increasing the number of partitions by 3 but 1 assignments provided.",
        ),
        (
            {1: [0, 1], 2: [0, 1], 3: [0, 1], 4: [0, 1]},
            InvalidReplicaAssignmentError,
            "Increasing the number of partitions by 3 but 4 assignments provided.",
        ),
        (
            {1: [0, 1], 2: [0, 1], 7: [0, 1]},
            InvalidReplicaAssignmentError,
            "The replica assignment must list partitions 1 to 3, not 1, 2, 7.",
        ),
    ],
)
def test_manual_assignment_errors(manual: dict[int, list[int]], error: type[Exception], message: str) -> None:
    with pytest.raises(error) as info:
        new_partitions_assignment("t", {0: [1, 2]}, [0, 1, 2, 3], 4, replica_assignment=manual)
    assert str(info.value) == message


def test_available_brokers_print_in_scala_set_order() -> None:
    with pytest.raises(BrokerNotAvailableError) as info:
        new_partitions_assignment("t", {0: [1, 2]}, list(range(6)), 2, replica_assignment={1: [0, 9]})
    assert str(info.value).endswith("available brokers: 0, 5, 1, 2, 3, 4.")


# --- topic creation ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("assignment", "error", "message"),
    [
        # AdminZkClientTest.testManualReplicaAssignment, in order.
        (
            {0: [0, 0]},
            InvalidReplicaAssignmentError,
            "Duplicate replica assignment found: LinkedHashMap(0 -> List(0, 0))",
        ),
        (
            {0: [0, 1], 1: [0]},
            InvalidReplicaAssignmentError,
            "All partitions should have the same number of replicas",
        ),
        (
            {1: [1, 2], 2: [1, 2]},
            InvalidReplicaAssignmentError,
            "partitions should be a consecutive 0-based integer sequence",
        ),
        (
            {0: [1, 2], 3: [1, 2]},
            InvalidReplicaAssignmentError,
            "partitions should be a consecutive 0-based integer sequence",
        ),
        (
            {-1: [1, 2], 1: [1, 2], 2: [1, 2], 4: [1, 2]},
            InvalidReplicaAssignmentError,
            "partitions should be a consecutive 0-based integer sequence",
        ),
        # Kafka's sum check lets {-1, 0, 3} through; we do not.
        (
            {-1: [1], 0: [2], 3: [3]},
            InvalidReplicaAssignmentError,
            "partitions should be a consecutive 0-based integer sequence",
        ),
        ({}, InvalidReplicaAssignmentError, "All partitions should have the same number of replicas"),
        ({0: [], 1: []}, InvalidReplicationFactorError, "Replication factor must be larger than 0."),
        (
            {0: [1, 2], 1: [3, 3]},
            InvalidReplicaAssignmentError,
            "Duplicate replica assignment found: LinkedHashMap(0 -> List(1, 2), 1 -> List(3, 3))",
        ),
    ],
)
def test_validate_create_assignment_errors(
    assignment: dict[int, list[int]], error: type[Exception], message: str
) -> None:
    with pytest.raises(error) as info:
        validate_create_assignment(assignment)
    assert str(info.value) == message


def test_validate_create_assignment_accepts_kafkas_good_assignment() -> None:
    validate_create_assignment({0: [0, 1, 2], 1: [1, 2, 3]})
    validate_create_assignment({1: [1, 2, 3], 0: [0, 1, 2]})


# --- --replica-assignment ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("5:4,3:2,1:0", {0: [5, 4], 1: [3, 2], 2: [1, 0]}),  # TopicCommandTest.testParseAssignment
        (" 1 : 2 ,\t3:4\n", {0: [1, 2], 1: [3, 4]}),
        ("\x0b7\x00", {0: [7]}),  # Java's trim strips every char <= U+0020
        ("1:2,", {0: [1, 2]}),  # Java's split drops trailing empty strings
        ("1:,2", {0: [1], 1: [2]}),
        ("+1:-2", {0: [1, -2]}),
        ("", {}),
        (",", {}),
    ],
)
def test_parse_replica_assignment(text: str, expected: dict[int, list[int]]) -> None:
    assert parse_replica_assignment(text) == expected


@pytest.mark.parametrize(
    ("text", "dups"),
    [
        ("5:5", "5"),  # TopicCommandTest.testParseAssignmentDuplicateEntries
        ("1:2:1:2", "1,2"),
        ("2:1:2:1", "1,2"),
        ("3:1:3:1", "1,3"),
        ("-1:-1:3:3", "3,-1"),
        ("5:37:69:5:37:69:1", "69,5,37"),  # CoreUtils.duplicates: Scala 2.13 HashMap order
        ("0:1,7:7:8:9:8:10:11:12:7", "7,8"),
    ],
)
def test_parse_rejects_duplicates(text: str, dups: str) -> None:
    with pytest.raises(InvalidArgumentError) as info:
        parse_replica_assignment(text)
    assert str(info.value) == f"Partition replica lists may not contain duplicate entries: {dups}"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("5:4:3,2:1", "Partition 1 has different replication factor: [2, 1]"),  # ...PartitionsOfDifferentSize
        ("1:2,3:4,5", "Partition 2 has different replication factor: [5]"),
        ("1,2:3", "Partition 1 has different replication factor: [2, 3]"),
    ],
)
def test_parse_rejects_different_replication_factors(text: str, message: str) -> None:
    with pytest.raises(AdminOperationError) as info:
        parse_replica_assignment(text)
    assert str(info.value) == message


@pytest.mark.parametrize(
    ("text", "bad"),
    [
        ("a:1", "a"),
        ("1::2", ""),
        (",1:2", ""),
        ("1_0", "1_0"),
        ("2147483648", "2147483648"),
        ("0x1", "0x1"),
        ("-", "-"),
    ],
)
def test_parse_rejects_non_integers_with_javas_text(text: str, bad: str) -> None:
    with pytest.raises(InvalidArgumentError) as info:
        parse_replica_assignment(text)
    assert str(info.value) == f'For input string: "{bad}"'


def test_parse_accepts_java_int_range() -> None:
    assert parse_replica_assignment("2147483647:-2147483648") == {0: [2147483647, -2147483648]}
