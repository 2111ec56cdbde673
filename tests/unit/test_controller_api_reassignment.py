"""KIP-455's AlterPartitionReassignments and ListPartitionReassignments in the controller's reassignment
handler (Kafka's `processApiPartitionReassignment` / `processListPartitionReassignments`), over fakes."""

from __future__ import annotations

from kafkaops.cluster.common import errors
from kafkaops.cluster.zk.values import ReplicaAssignment, TopicPartition
from tests.unit.controller_fakes import Harness

T0, T1 = TopicPartition("t", 0), TopicPartition("t", 1)


def test_api_reassignment_starts_lists_and_cancels() -> None:
    h = Harness()
    h.live_brokers(1, 2, 3)
    h.topic("t", {0: [1, 2], 1: [2, 3]})
    h.zk.reassignment = ({T0: (1, 2), T1: (3, 1)}, 0)  # a --zookeeper request the API call supersedes for T0
    reassignments = h.handlers.reassignments
    results = reassignments.process_api_partition_reassignment({T0: [2, 3]})
    assert results == {T0: None}
    moving = ReplicaAssignment((2, 3, 1), (3,), (1,))
    assert h.context.partition_full_replica_assignment(T0) == moving
    assert h.zk.reassignment is not None and T0 not in h.zk.reassignment[0]
    assert reassignments.list_partition_reassignments(None) == {T0: moving}
    assert reassignments.list_partition_reassignments([T1]) == {}

    cancelled = reassignments.process_api_partition_reassignment({T0: None, T1: None})
    assert cancelled[T0] is None
    error = cancelled[T1]
    assert error is not None and error.error is errors.NoReassignmentInProgressError
    # Kafka: the origin replicas in the order of the moving set (RS = TRS ++ ORS, then RS minus AR)
    assert h.context.partition_full_replica_assignment(T0).target_replicas == (2, 1)


def test_api_reassignment_refusals() -> None:
    h = Harness()
    h.live_brokers(1, 2)
    h.topic("t", {0: [1, 2]})
    results = h.handlers.reassignments.process_api_partition_reassignment(
        {T0: [1, 1], TopicPartition("t", 9): [1], TopicPartition("nope", 0): None}
    )
    assert results[T0] is not None and results[T0].error is errors.InvalidReplicaAssignmentError
    missing = results[TopicPartition("t", 9)]
    assert missing is not None and missing.error is errors.UnknownTopicOrPartitionError
    nothing = results[TopicPartition("nope", 0)]
    assert nothing is not None and nothing.error is errors.NoReassignmentInProgressError
