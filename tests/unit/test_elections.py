"""Election files, the result model and its Kafka texts (admin/elections.py, the election CLIs' renderings)."""

from __future__ import annotations

import pytest

from kafkaops.admin import elections
from kafkaops.admin.kafka_text import topic_partition_hash
from kafkaops.cli import leader_election, preferred_replica_election
from kafkaops.cluster.common.errors import (
    AdminOperationError,
    ElectionNotNeededError,
    InvalidArgumentError,
    InvalidTopicError,
    PreferredLeaderNotAvailableError,
    UnknownTopicOrPartitionError,
)
from kafkaops.cluster.common.jvm_text import java_string_hash, scala_hash_set_order
from kafkaops.cluster.zk.values import ReplicaAssignment, TopicPartition

LEADER = elections.LEADER_ELECTION_FILE
PREFERRED = elections.PREFERRED_REPLICA_FILE


def tp(topic: str, partition: int) -> TopicPartition:
    return TopicPartition(topic, partition)


@pytest.mark.parametrize(
    ("text", "texts", "message"),
    [
        ("", LEADER, "Replica election data is empty"),
        ("{", LEADER, "Replica election data is empty"),
        ("\n", LEADER, "Expected JSON object, received "),
        ("[]", LEADER, "Expected JSON object, received []"),
        ("{}", LEADER, 'Replica election data is missing "partitions" field'),
        ('{"partitions": {}}', LEADER, "Expected JSON array, received {}"),
        ('{"partitions": [{"topic": "foo"}]}', LEADER, "No such field exists: `partition`"),
        ('{"partitions": [{"topic": "foo", "partition": "1"}]}', LEADER, 'Expected `Int` value, received "1"'),
        (
            '{"partitions": [{"topic": "foo", "partition": 1}, {"topic": "foo", "partition": 1}]}',
            LEADER,
            "Replica election data contains duplicate partitions: foo-1",
        ),
        ("", PREFERRED, "Preferred replica election data is empty"),
        ("nope", PREFERRED, "Preferred replica election data is empty"),
        ('{"version":1}', PREFERRED, "Preferred replica election data is empty"),
        (
            '{"partitions":[{"topic":"a","partition":0},{"topic":"a","partition":0}]}',
            PREFERRED,
            "Preferred replica election data contains duplicate partitions: a-0",
        ),
    ],
)
def test_election_file_errors_are_kafkas(text, texts, message):
    with pytest.raises((AdminOperationError, InvalidArgumentError)) as caught:
        elections.parse_election_json(text, texts)
    assert str(caught.value) == message


def test_election_file_is_a_scala_set():
    small = elections.parse_election_json(
        '{"partitions": [{"topic": "foo", "partition": 1}, {"topic": "bar", "partition": 0}]}', LEADER
    )
    assert small.items == (tp("foo", 1), tp("bar", 0)) and str(small) == "Set(foo-1, bar-0)"
    assert str(elections.parse_election_json('{"partitions": []}', LEADER)) == "Set()"
    wide = elections.PartitionSet.of([tp("t", p) for p in range(5)])
    assert str(wide).startswith("HashSet(") and sorted(wide.items) == [tp("t", p) for p in range(5)]
    kept, dropped = wide.partition(lambda x: x.partition < 2)
    assert kept.hashed and str(kept) == f"HashSet({', '.join(str(x) for x in wide.items if x.partition < 2)})"


def test_options_convert_as_jopt_does():
    assert elections.parse_election_type("Preferred") is elections.ElectionType.PREFERRED
    assert str(elections.parse_election_type("UNCLEAN")) == "UNCLEAN"
    with pytest.raises(InvalidArgumentError, match="^Cannot parse argument 'bogus' of option election-type$"):
        elections.parse_election_type("bogus")
    assert elections.parse_partition_option("-3") == -3
    for bad in ("x", "1.0", "2147483648", ""):
        with pytest.raises(InvalidArgumentError, match="^Cannot parse argument '.*' of option partition$"):
            elections.parse_partition_option(bad)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((None, None, None, True, None), "Missing required option(s): election-type"),
        (("preferred", None, None, False, None), leader_election.ONE_SELECTION),
        (("preferred", "foo", None, True, None), leader_election.ONE_SELECTION),
        (("preferred", "foo", None, False, None), "Missing required option(s): partition"),
        (("preferred", None, "1", True, None), "Option partition is only allowed if topic is used"),
        (("bogus", None, None, True, None), "Cannot parse argument 'bogus' of option election-type"),
    ],
)
def test_leader_election_validation_order(args, message):
    with pytest.raises(InvalidArgumentError) as caught:
        leader_election.check_args(*args)
    assert str(caught.value) == message


def test_results_render_as_kafka_prints_them():
    result = elections.ElectionResult(
        elections.ElectionType.PREFERRED,
        {
            tp("foo", 0): None,
            tp("bar", 1): None,
            tp("foo", 1): ElectionNotNeededError(),
            tp("nope", 0): UnknownTopicOrPartitionError("The partition does not exist."),
            tp("gone", 0): InvalidTopicError("The topic is being deleted"),
        },
    )
    succeeded = [tp("foo", 0), tp("bar", 1)]
    hashes = {topic_partition_hash(x): x for x in succeeded}
    assert result.succeeded == sorted(succeeded, key=lambda x: _mutable_key(topic_partition_hash(x)))
    assert set(result.failed) == {tp("nope", 0), tp("gone", 0)} and len(hashes) == 2
    lines = leader_election.result_lines(result)
    assert (
        lines[0]
        == f"Successfully completed leader election (PREFERRED) for partitions {', '.join(map(str, result.succeeded))}"
    )
    assert lines[1] == "Valid replica already elected for partitions foo-1"
    assert sorted(lines[2:]) == [
        "Error completing leader election (PREFERRED) for partition: gone-0: "
        "org.apache.kafka.common.errors.InvalidTopicException: The topic is being deleted",
        "Error completing leader election (PREFERRED) for partition: nope-0: "
        "org.apache.kafka.common.errors.UnknownTopicOrPartitionException: The partition does not exist.",
    ]
    assert (
        preferred_replica_election.result_lines(result)[1] == "Preferred replica already elected for partitions foo-1"
    )


def _mutable_key(h: int) -> tuple[int, int]:
    """Scala 2.13 mutable.HashSet with a 16-bucket table: bucket of h ^ (h >>> 16), then the hash."""
    u = h & 0xFFFFFFFF
    improved = u ^ (u >> 16)
    signed = improved - (1 << 32) if improved >= 1 << 31 else improved
    return improved & 15, signed


def test_java_exception_texts():
    assert elections.java_exception_text(elections.preferred_election_failure(tp("foo", 0))) == (
        "org.apache.kafka.common.errors.PreferredLeaderNotAvailableException: Failed to elect leader for partition "
        "foo-0 under strategy PreferredReplicaPartitionLeaderElectionStrategy"
    )
    assert elections.java_exception_text(PreferredLeaderNotAvailableError()) == (
        "org.apache.kafka.common.errors.PreferredLeaderNotAvailableException: The preferred leader was not available."
    )


def test_classify_preferred():
    assignments = {
        tp("a", 0): ReplicaAssignment((1, 2)),
        tp("a", 1): ReplicaAssignment((2, 1)),
        tp("d", 0): ReplicaAssignment((1,)),
    }
    decided, electable = elections.classify_preferred(
        [tp("a", 0), tp("a", 1), tp("d", 0), tp("x", 0)], assignments, {tp("a", 0): 2, tp("a", 1): 2}, {"d"}
    )
    assert electable == [tp("a", 0)]
    assert {k: type(v) for k, v in decided.items()} == {
        tp("a", 1): ElectionNotNeededError,
        tp("d", 0): InvalidTopicError,
        tp("x", 0): UnknownTopicOrPartitionError,
    }


def test_election_znode_order():
    small = elections.PartitionSet.of([tp("b", 0), tp("a", 1)])
    assert elections.election_znode_order(small) == [tp("b", 0), tp("a", 1)]
    wide = elections.PartitionSet.of([tp("t", p) for p in range(6)])

    def java_map_hash(x: TopicPartition) -> int:  # {"topic": t, "partition": p} as a java.util.Map
        h = (java_string_hash("topic") ^ java_string_hash(x.topic)) + (java_string_hash("partition") ^ x.partition)
        h &= 0xFFFFFFFF
        return h - (1 << 32) if h >= 1 << 31 else h

    by_hash = {java_map_hash(x): x for x in wide.items}
    assert elections.election_znode_order(wide) == [by_hash[h] for h in scala_hash_set_order(by_hash)]


def test_started_lines():
    started = elections.PreferredElectionStarted(
        elections.PartitionSet((tp("foo", 0), tp("foo", 1)), False), elections.PartitionSet((tp("nope", 0),), False)
    )
    assert preferred_replica_election.started_lines(started) == [
        "Created preferred replica election path with foo-0,foo-1",
        "Successfully started preferred replica election for partitions Set(foo-0, foo-1)",
        "Skipping preferred replica leader election for partition nope-0 since it doesn't exist.",
    ]
