"""Pure rules of reassign-partitions --execute/--verify/--cancel/--list, with Kafka 2.8's own known answers
(`ReassignPartitionsUnitTest`), and the CLI's renderings of them."""

from __future__ import annotations

import pytest
from rich.console import Console

from kafkaops.admin import reassignment_ops as ops
from kafkaops.admin.kafka_text import topic_partition_hash
from kafkaops.admin.reassignment import parse_reassignment_json
from kafkaops.cli import reassign_partitions as cli
from kafkaops.cluster.common.jvm_text import scala_mutable_hash_order, scala_set_order, scala_set_text
from kafkaops.cluster.zk.values import ReplicaAssignment, TopicPartition


def tp(topic: str, partition: int) -> TopicPartition:
    return TopicPartition(topic, partition)


def test_move_map_and_throttles_are_kafkas():
    # ReassignPartitionsUnitTest.testMoveMap: PartitionReassignment(replicas, adding, removing)
    active = {
        tp("foo", 0): ReplicaAssignment((1, 2, 3, 4), (4,), (3,)),
        tp("foo", 1): ReplicaAssignment((4, 5, 6, 7, 8), (7, 8), (4, 5)),
        tp("foo", 2): ReplicaAssignment((1, 2, 3, 4), (3, 4), (1, 2)),
        tp("foo", 3): ReplicaAssignment((1, 2, 3, 4), (3, 4), (1, 2)),
        tp("foo", 4): ReplicaAssignment((1, 2, 3, 4), (3, 4), (1, 2)),
        tp("foo", 5): ReplicaAssignment((1, 2, 3, 4), (3, 4), (1, 2)),
    }
    proposed = {
        tp("foo", 0): [1, 2, 5],
        tp("foo", 2): [3, 4],
        tp("foo", 3): [5, 6],
        tp("foo", 4): [3],
        tp("foo", 5): [3, 4, 5, 6],
        tp("bar", 0): [1, 2, 3],
    }
    current = {
        tp("foo", 0): [1, 2, 3, 4],
        tp("foo", 1): [4, 5, 6, 7, 8],
        tp("foo", 2): [1, 2, 3, 4],
        tp("foo", 3): [1, 2, 3, 4],
        tp("foo", 4): [1, 2, 3, 4],
        tp("foo", 5): [1, 2, 3, 4],
        tp("bar", 0): [2, 3, 4],
        tp("baz", 0): [1, 2, 3],
    }
    moves = ops.proposed_move_map(active, proposed, current)
    as_sets = {t: {p: (set(m.sources), set(m.destinations)) for p, m in ms.items()} for t, ms in moves.items()}
    assert as_sets == {
        "foo": {
            0: ({1, 2, 3}, {5}),
            1: ({4, 5, 6}, {7, 8}),
            2: ({1, 2}, {3, 4}),
            3: ({1, 2}, {5, 6}),
            4: ({1, 2}, {3}),
            5: ({1, 2}, {3, 4, 5, 6}),
        },
        "bar": {0: ({2, 3, 4}, {1})},
    }
    assert ops.leader_throttles(moves) == {
        "foo": "0:1,0:2,0:3,1:4,1:5,1:6,2:1,2:2,3:1,3:2,4:1,4:2,5:1,5:2",
        "bar": "0:2,0:3,0:4",
    }
    assert ops.follower_throttles(moves) == {"foo": "0:5,1:7,1:8,2:3,2:4,3:5,3:6,4:3,5:3,5:4,5:5,5:6", "bar": "0:1"}
    assert ops.reassigning_brokers(moves) == [1, 2, 3, 4, 5, 6, 7, 8]


def test_throttle_lists_sort_as_strings():
    moves = ops.proposed_move_map({}, {tp("t", 10): [3], tp("t", 2): [3]}, {tp("t", 10): [1], tp("t", 2): [12]})
    assert ops.leader_throttles(moves) == {"t": "10:1,2:12"}  # TreeSet[String]: "10:1" < "2:12"
    assert ops.follower_throttles(moves) == {"t": "10:3,2:3"}


def test_states_render_as_kafkas_status_lines():
    # ReassignPartitionsUnitTest.testPartitionReassignStatesToString, plus the "rather than" line
    states = ops.partition_states(
        {tp("foo", 0): [1, 2, 3], tp("foo", 1): [1, 2, 4], tp("bar", 0): [1, 2, 4], tp("baz", 0): [3, 2, 1]},
        {
            tp("foo", 0): ReplicaAssignment((1, 2, 3)),
            tp("foo", 1): ReplicaAssignment((1, 2, 4, 3), (4,), (3,)),
            tp("bar", 0): ReplicaAssignment((1, 2, 3)),
            tp("baz", 0): ReplicaAssignment((1, 2, 3)),
        },
        pending={tp("bar", 0)},
    )
    assert cli.status_lines(states) == [
        "Status of partition reassignment:",
        "Reassignment of partition bar-0 is still in progress.",
        "There is no active reassignment of partition baz-0, but replica set is 1,2,3 rather than 3,2,1.",
        "Reassignment of partition foo-0 is complete.",
        "Reassignment of partition foo-1 is still in progress.",
    ]


def test_active_view_and_list_lines():
    assignments = {
        tp("foo", 0): ReplicaAssignment((4, 0, 1, 2), (4,), ()),
        tp("foo", 1): ReplicaAssignment((1, 2, 3)),
        tp("bar", 0): ReplicaAssignment((2, 3, 0)),
    }
    active = ops.active_reassignments(
        assignments, {tp("bar", 0): [2, 3], tp("foo", 0): [4, 0, 1, 2], tp("gone", 0): [1]}
    )
    assert list(active) == [tp("bar", 0), tp("foo", 0)]
    assert cli.list_lines(active) == [
        "Current partition reassignments:",
        "bar-0: replicas: 2,3,0. removing: 0.",
        "foo-0: replicas: 4,0,1,2. adding: 4.",
    ]
    assert cli.list_lines({}) == ["No partition reassignments found."]


def test_throttle_clearing_targets_in_kafkas_set_orders():
    entries = parse_reassignment_json(
        '{"partitions":[{"topic":"b","partition":0,"replicas":[9,1]},{"topic":"a","partition":0,"replicas":[1]}]}'
    )
    assert ops.throttle_clearing_targets([0, 1], entries) == ([0, 1, 9], ["b", "a"])
    brokers, _ = ops.throttle_clearing_targets([0, 1, 2, 3], entries)
    assert brokers == scala_set_order([0, 1, 2, 3, 9], lambda b: b) == [0, 1, 9, 2, 3]  # improved hashes: 0,7,11,14,20
    assert cli.cleared_lines(ops.ClearedThrottles([5], ["a", "b"])) == [
        "Clearing broker-level throttles on broker 5",
        "Clearing topic-level throttles on topics a,b",
    ]


def test_kafka_map_order_keeps_file_order_up_to_four():
    small = [tp("z", 3), tp("a", 1), tp("m", 0), tp("a", 0)]
    assert ops.kafka_map_order(small) == small
    wide = [tp("t", p) for p in range(6)]
    assert sorted(ops.kafka_map_order(wide)) == wide and ops.kafka_map_order(wide) != wide


def test_scala_texts():
    assert scala_set_text([]) == "Set()"
    assert scala_set_text(["foo-0", "foo-1"]) == "Set(foo-0, foo-1)"
    assert scala_set_text(list(range(5))) == "HashSet(0, 1, 2, 3, 4)"
    # TopicPartition.hashCode = 31 * (31 + partition) + topic.hashCode
    assert topic_partition_hash(tp("foo", 0)) == 31 * 31 + 101574
    assert scala_mutable_hash_order([3, 1, 2], lambda i: i) == [1, 2, 3]


def test_execute_lines():
    plan = ops.ExecutePlan(
        proposed={tp("foo", 0): (2, 3)},
        current={tp("foo", 0): (0, 1)},
        active={},
        moves={},
        topic_throttles={},
        broker_throttles={},
        throttle=-1,
        log_dir_throttle=-1,
        additional=False,
    )
    assert cli.execute_lines_after(plan) == ["Successfully started partition reassignment for foo-0"]
    assert cli.execute_lines_before(plan) == [
        "Current partition replica assignment\n\n"
        '{"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":[0,1],"log_dirs":["any","any"]}]}\n\n'
        "Save this to use as the --reassignment-json-file option during rollback"
    ]


def test_cancel_lines():
    result = ops.CancelResult({tp("b", 1): (1,), tp("a", 0): (2,)}, None)
    assert cli.cancel_lines(result) == [
        "Successfully cancelled partition reassignments for: a-0,b-1",
        "None of the specified partition moves are active.",
    ]


class FakeZk:
    """Just the reads `watch_reassignment` makes: one partition listed until the clock passes `done_at`."""

    def __init__(self, clock: list[float], done_at: float) -> None:
        self.clock, self.done_at = clock, done_at

    def get(self, path: str):  # type: ignore[no-untyped-def]
        if self.clock[0] >= self.done_at:
            return None
        return (
            b'{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[2]}]}',
            type("S", (), {"version": 0}),
        )

    def get_topic_assignments(self, topics):  # type: ignore[no-untyped-def]
        from kafkaops.cluster.zk.values import TopicAssignment

        replicas = (2,) if self.clock[0] >= self.done_at else (2, 1)
        return {"t": TopicAssignment({0: ReplicaAssignment(replicas)})}

    def get_partition_states(self, partitions):  # type: ignore[no-untyped-def]
        return dict.fromkeys(partitions)


@pytest.mark.parametrize(("done_at", "timeout", "polls", "timed_out"), [(2.5, None, 4, False), (9.0, 2.0, 3, True)])
def test_watch_polls_until_done_or_timeout(done_at, timeout, polls, timed_out):
    clock = [0.0]
    snapshots = list(
        ops.watch_reassignment(
            FakeZk(clock, done_at),  # type: ignore[arg-type]
            {tp("t", 0): [2]},
            timeout_s=timeout,
            interval_s=1.0,
            clock=lambda: clock[0],
            sleep=lambda s: clock.__setitem__(0, clock[0] + s),
        )
    )
    assert len(snapshots) == polls
    assert snapshots[-1].timed_out is timed_out and snapshots[-1].done is not timed_out
    assert [s.timed_out for s in snapshots[:-1]] == [False] * (polls - 1)


def test_progress_renderings():
    row = ops.PartitionProgress(
        tp("foo", 0), ops.PartitionState((2, 3, 0, 1), (2, 3), False), (2, 3), (0, 1), 0, (0, 1, 2)
    )
    assert cli.progress_line(row) == "foo-0: in progress; replicas: 2,3,0,1; isr: 0,1,2; adding: 2,3; removing: 0,1"
    done = ops.PartitionProgress(tp("foo", 1), ops.PartitionState((1,), (1,), True), (), (), None, None)
    assert cli.progress_line(done) == "foo-1: complete; replicas: 1"
    console = Console(record=True, width=100, force_terminal=True)
    console.print(cli.progress_table(ops.ReassignmentProgress([row, done], 12.0, False)))
    text = console.export_text()
    assert "1/2 partitions done, 12s" in text
    assert "foo-0" in text and "in progress" in text and "2,3,0,1" in text and "0,1,2" in text
    assert "foo-1" in text and "complete" in text
