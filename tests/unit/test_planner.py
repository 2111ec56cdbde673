"""The reassignment planner's pure core: examples with known answers (the property tests are in
test_planner_properties.py, the JSON files in test_planner_files.py)."""

from __future__ import annotations

from collections import Counter

import pytest

from kafkaops.admin import planner
from kafkaops.admin.assignment import JavaRandom, assign_replicas_to_brokers
from kafkaops.admin.planner import (
    HOLE,
    TopicStats,
    make_layout,
    normalize_partition,
    plan_balanced,
    plan_kafka,
    plan_report,
    rack_limits,
    split_batches,
)
from kafkaops.cluster.common.errors import (
    AdminOperationError,
    InvalidArgumentError,
    InvalidReplicaAssignmentError,
    InvalidReplicationFactorError,
)


def kafka_cluster(brokers, topics, partitions, rf=3, seed=1, racks=None):
    rng = JavaRandom(seed)
    current = {}
    for t in range(topics):
        for p, replicas in assign_replicas_to_brokers(brokers, partitions, rf, racks=racks, rng=rng).items():
            current[(f"t{t}", p)] = replicas
    return current


def per_broker(assignment):
    return Counter(b for replicas in assignment.values() for b in replicas)


def leaders(assignment):
    return Counter(replicas[0] for replicas in assignment.values())


def moved(current, proposed):
    return sum(len(set(proposed[k]) - set(current[k])) for k in current)


# --- rules ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rf", "racks", "expected"),
    [(3, 3, (1, 3)), (2, 3, (1, 2)), (1, 4, (1, 1)), (4, 3, (2, 1)), (3, 2, (2, 1)), (4, 2, (2, 2)), (3, 1, (3, 1))],
)
def test_rack_limits(rf, racks, expected):
    assert rack_limits(rf, racks) == expected


def test_layout_sorts_brokers_and_indexes_racks():
    layout = make_layout([5, 1, 3], {1: "b", 3: "a", 5: "b", 9: "c"})
    assert layout.brokers == (1, 3, 5)
    assert layout.rack_names == ("a", "b")
    assert layout.rack_of == (1, 0, 1)
    assert layout.racks == {1: "b", 3: "a", 5: "b"}
    assert make_layout([2, 1]).num_racks == 1


def test_layout_refuses_partial_racks_with_kafkas_text():
    with pytest.raises(AdminOperationError, match=r"^Not all brokers have rack information\. Add --disable-rack-aware"):
        make_layout([1, 2], {1: "a"})


def test_layout_refuses_an_empty_broker_list():
    with pytest.raises(InvalidArgumentError):
        make_layout([])


def test_normalize_holes_for_decommissioned_brokers_and_rack_extras():
    layout = make_layout([1, 2, 3, 4], {1: "a", 2: "a", 3: "b", 4: "c"})
    # broker 9 is not a target; 2 shares rack a with the leader 1, which wins (earlier in the list)
    assert normalize_partition([1, 9, 2], layout) == ([0, HOLE, HOLE], 0)
    assert normalize_partition([9, 3, 4], layout) == ([HOLE, 2, 3], HOLE)
    # RF 4 on 3 racks: 2 + 1 + 1, a third replica in rack a must go
    assert normalize_partition([1, 2, 3, 4], layout) == ([0, 1, 2, 3], 0)


def test_validate_current_texts():
    layout = make_layout([1, 2])
    with pytest.raises(
        InvalidReplicationFactorError, match=r"^Replication factor: 3 larger than available brokers: 2\.$"
    ):
        planner.validate_current({("t", 0): [1, 2, 3]}, layout)
    with pytest.raises(
        InvalidReplicaAssignmentError,
        match=r"^Partition replica lists may not contain duplicate entries: t-0 contains multiple entries for 1$",
    ):
        planner.validate_current({("t", 0): [1, 1]}, layout)
    with pytest.raises(InvalidReplicaAssignmentError, match=r"^Partition replica list cannot be empty$"):
        planner.validate_current({("t", 0): []}, layout)


def test_topic_stats_merge_is_the_sum():
    a, b = TopicStats(), TopicStats()
    a.add([0, 1], 0, 1)
    b.add([1, HOLE], 1, 1)
    merged = a.merge(b)
    assert (merged.partitions, merged.replicas, merged.forced) == (2, 4, 1)
    assert merged.kept == {0: 1, 1: 2}
    assert merged.leaders == {0: 1, 1: 1}


# --- known answers -------------------------------------------------------------------------------


def test_kip6_example_7_6_0_0_reaches_4_3_3_3_with_6_moves():
    current = {("t", i): [0] for i in range(7)} | {("t", 7 + i): [1] for i in range(6)}
    plan = plan_balanced(current, [0, 1, 2, 3])
    assert sorted(per_broker(plan.proposed).values(), reverse=True) == [4, 3, 3, 3]
    assert per_broker(plan.proposed)[0] == 4  # the +1 stays where the replicas are
    assert moved(current, plan.proposed) == 6 == plan.bound.total


def test_adding_brokers_to_a_balanced_cluster_moves_exactly_the_lower_bound():
    current = kafka_cluster(list(range(6)), topics=20, partitions=30)
    plan = plan_balanced(current, range(8))
    report = plan_report(current, plan.proposed, range(8))
    assert report.replicas_moved == report.lower_bound.total == 450  # 1800 / 8 = 225 each; 6 x 75 leave
    assert report.replicas_after.spread == 0
    assert report.leaders_after.spread == 0
    assert report.topic_spread_after <= 1


def test_decommission_moves_exactly_the_replicas_of_the_removed_brokers():
    current = kafka_cluster(list(range(10)), topics=10, partitions=30)
    plan = plan_balanced(current, range(9))
    assert 9 not in per_broker(plan.proposed)
    on_nine = per_broker(current)[9]
    assert moved(current, plan.proposed) == on_nine == plan.bound.forced == plan.bound.total
    counts = per_broker(plan.proposed)
    assert max(counts.values()) - min(counts.values()) <= 1


def test_a_balanced_plan_is_left_alone():
    current = kafka_cluster(list(range(5)), topics=4, partitions=10)
    first = plan_balanced(current, range(5)).proposed
    second = plan_balanced(first, range(5)).proposed
    assert second == first


def test_rack_aware_plan_spans_racks_and_fixes_violations():
    racks = {0: "a", 1: "a", 2: "b", 3: "b", 4: "c", 5: "c"}
    current = {("t", p): [p % 2, 2 + p % 2, (p + 1) % 2] for p in range(12)}  # two replicas in rack a
    plan = plan_balanced(current, range(6), racks)
    for replicas in plan.proposed.values():
        assert len({racks[b] for b in replicas}) == 3
    report = plan_report(current, plan.proposed, range(6), racks)
    assert report.rack_violations_before == 12 and report.rack_violations_after == 0
    assert report.replicas_after.spread == 0 and report.leaders_after.spread == 0


def test_same_seed_same_plan_other_seed_same_quality():
    current = kafka_cluster(list(range(6)), topics=8, partitions=13, seed=3)
    a = plan_balanced(current, range(9), seed=7).proposed
    b = plan_balanced(dict(reversed(list(current.items()))), range(9), seed=7).proposed
    assert a == b  # the input's order does not matter
    c = plan_balanced(current, range(9), seed=8).proposed
    assert moved(current, c) == moved(current, a)


def test_kafka_strategy_is_kafkas_algorithm_with_one_random_for_all_topics():
    current = kafka_cluster(list(range(4)), topics=3, partitions=5, rf=2)
    proposed = plan_kafka(current, [3, 1, 2, 0, 4], seed=42)
    rng = JavaRandom(42)
    expected = {}
    for t in ("t0", "t1", "t2"):
        for p, replicas in assign_replicas_to_brokers([0, 1, 2, 3, 4], 5, 2, rng=rng).items():
            expected[(t, p)] = replicas
    assert proposed == expected


def test_kafka_strategy_errors_are_kafkas():
    with pytest.raises(
        InvalidReplicationFactorError, match=r"^Replication factor: 3 larger than available brokers: 2\.$"
    ):
        plan_kafka({("t", 0): [1, 2, 3]}, [1, 2], seed=1)


def test_report_figures():
    current = {("a", 0): [1, 2], ("a", 1): [1, 2], ("b", 0): [2, 1]}
    proposed = {("a", 0): [3, 2], ("a", 1): [1, 2], ("b", 0): [1, 3]}
    report = plan_report(current, proposed, [1, 2, 3])
    assert report.replicas_moved == 2
    assert report.leader_changes == 2
    assert report.partitions_changed == 2
    by_broker = {b.broker: b for b in report.brokers}
    assert (by_broker[3].replicas_before, by_broker[3].replicas_after) == (0, 2)
    assert (by_broker[1].leaders_before, by_broker[1].leaders_after) == (2, 2)
    assert report.replicas_before.spread == 3 and report.replicas_after.spread == 0
    assert report.topic_spreads == {"a": (2, 1), "b": (1, 1)}
    document = report.as_dict()
    assert document["replicas_moved"] == 2 and document["lower_bound"] == report.lower_bound.total
    assert [b["broker"] for b in document["brokers"]] == [1, 2, 3]


def test_report_counts_rack_violations_with_the_racks_of_removed_brokers():
    current = {("t", 0): [1, 2]}
    racks = {1: "a", 2: "a", 3: "b"}
    report = plan_report(current, {("t", 0): [1, 3]}, [1, 3], {1: "a", 3: "b"}, all_racks=racks)
    assert (report.rack_violations_before, report.rack_violations_after) == (1, 0)
    assert [b.target for b in report.brokers] == [True, False, True]


def test_batches_cover_every_change_and_keep_the_cluster_balanced_in_between():
    current = kafka_cluster(list(range(8)), topics=10, partitions=24)
    proposed = plan_balanced(current, range(10)).proposed
    batches = split_batches(current, proposed, 25)
    changed = {k for k in current if current[k] != proposed[k]}
    assert sorted(k for batch in batches for k in batch) == sorted(changed)
    assert all(len(batch) <= 25 for batch in batches)
    figures = planner.batch_figures(current, batches, range(10))
    assert sum(f["replicas_moved"] for f in figures) == moved(current, proposed)
    # new brokers fill up batch by batch instead of all at once at the end
    spreads = [f["replica_spread_after"] for f in figures]
    assert spreads == sorted(spreads, reverse=True) or max(spreads[1:]) <= spreads[0]
    assert figures[-1]["replica_spread_after"] <= 1


def test_batch_size_must_be_positive():
    with pytest.raises(InvalidArgumentError):
        split_batches({}, {}, 0)


def test_sizes_balance_bytes():
    # broker 0 holds the two big partitions; a size-blind plan would keep them together
    current = {("t", 0): [0], ("t", 1): [0], ("t", 2): [1], ("t", 3): [1], ("t", 4): [1], ("t", 5): [1]}
    sizes = {("t", 0): 100, ("t", 1): 100, ("t", 2): 10, ("t", 3): 10, ("t", 4): 10, ("t", 5): 10}
    plan = plan_balanced(current, [0, 1, 2], sizes=sizes)
    load = Counter()
    for key, replicas in plan.proposed.items():
        for b in replicas:
            load[b] += sizes[key]
    assert max(load.values()) - min(load.values()) <= 100
    assert load[0] == 100  # one big partition moved, the other kept
    report = plan_report(current, plan.proposed, [0, 1, 2], sizes=sizes)
    assert report.bytes_moved is not None and report.bytes_moved <= 120


def test_leaders_are_balanced_by_reordering_only():
    # every broker holds every partition: no data may move, only leaders
    current = {("t", p): [0, 1, 2] for p in range(9)}
    plan = plan_balanced(current, [0, 1, 2])
    assert moved(current, plan.proposed) == 0
    assert sorted(leaders(plan.proposed).values()) == [3, 3, 3]


def test_bound_stays_a_bound_when_unequal_racks_forbid_counts_within_one() -> None:
    # two brokers in rack-0, four in rack-1: every partition needs one replica in each rack, so
    # rack-0's brokers hold 3 replicas between them and counts within 1 are out of reach
    current = {("topic-0", p): [0, 1] for p in range(3)}
    racks = {0: "rack-0", 1: "rack-0", 2: "rack-1", 3: "rack-1", 4: "rack-1", 5: "rack-1"}
    plan = plan_balanced(current, list(range(6)), racks, seed=0)
    report = plan_report(current, plan.proposed, list(range(6)), racks)
    assert report.rack_violations_after == 0
    assert report.replicas_moved >= report.lower_bound.total == 3
