"""Topics appearing, disappearing and growing (Kafka 2.8 `KafkaController.processTopicChange`,
`processPartitionModifications`, `onNewPartitionCreation`; reference §5.2).

New topics and added partitions go NonExistent → New → Online (a leader elected from the live assigned
replicas, each state znode created) and their replicas New → Online. Partitions added to a topic being
deleted are written out of its znode again. Topics created without a topic id (by
`kafka-topics --zookeeper`) get one, as Kafka 2.8 with IBP 2.8 gives them.

Owned by the controller's event thread.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from kafkaops.cluster.common.errors import MalformedZNodeError
from kafkaops.cluster.controller.context import ControllerContext
from kafkaops.cluster.controller.controller_zk_client import TopicAssignmentWrite, TopicChangeZkClient
from kafkaops.cluster.controller.partition_state_machine import OFFLINE_ELECTION, PartitionStateMachine
from kafkaops.cluster.controller.replica_state_machine import ReplicaStateMachine
from kafkaops.cluster.controller.state_machines import PartitionReplica, PartitionState, ReplicaState
from kafkaops.cluster.zk.values import TopicAssignment, TopicPartition, new_kafka_uuid

log = logging.getLogger("kafkaops.controller")


class TopicChangeHandler:
    def __init__(
        self,
        context: ControllerContext,
        zk: TopicChangeZkClient,
        partition_state_machine: PartitionStateMachine,
        replica_state_machine: ReplicaStateMachine,
        watch_topics: Callable[[Sequence[str]], None],
    ) -> None:
        """`watch_topics` sets the watches on topic znodes whose changes become PartitionModifications."""
        self.context = context
        self.zk = zk
        self.partition_state_machine = partition_state_machine
        self.replica_state_machine = replica_state_machine
        self.watch_topics = watch_topics

    def process_topic_change(self) -> None:
        """The children of `/brokers/topics` changed: forget deleted topics, bring new ones online.

        A new topic whose znode is malformed is logged and left without partitions, watched like the others:
        once its znode is repaired, the change creates them (`process_partition_modifications`). Kafka 2.8
        throws there, after it has recorded every new topic as known, so the well-formed topics created
        alongside it are never brought online either."""
        ctx = self.context
        topics = set(self.zk.get_all_topics())
        new_topics = sorted(topics - ctx.all_topics)
        deleted = ctx.all_topics - topics
        for topic in deleted:
            ctx.remove_topic(topic)
        ctx.set_all_topics(topics)
        if not new_topics:
            return
        self.watch_topics(new_topics)  # before the read: a change after it fires
        found = self.zk.get_topic_znodes(new_topics)
        assignments: dict[str, TopicAssignment] = {}
        for topic in new_topics:
            entry = found.get(topic)
            if entry is None:
                continue
            if isinstance(entry[0], MalformedZNodeError):
                log.error("Ignoring new topic %s until its znode changes: %s", topic, entry[0])
                continue
            assignments[topic] = entry[0]
        new_partitions = []
        for topic, assignment in assignments.items():
            for partition, replica_assignment in sorted(assignment.partitions.items()):
                tp = TopicPartition(topic, partition)
                ctx.update_partition_full_replica_assignment(tp, replica_assignment)
                new_partitions.append(tp)
        self.assign_topic_ids(new_topics)
        self.on_new_partition_creation(new_partitions)

    def on_new_partition_creation(self, partitions: Sequence[TopicPartition]) -> None:
        if not partitions:
            return
        ctx = self.context
        replicas = [PartitionReplica(tp, r) for tp in partitions for r in ctx.partition_replica_assignment(tp)]
        self.partition_state_machine.handle_state_changes(partitions, PartitionState.NEW)
        self.replica_state_machine.handle_state_changes(replicas, ReplicaState.NEW)
        self.partition_state_machine.handle_state_changes(partitions, PartitionState.ONLINE, OFFLINE_ELECTION)
        self.replica_state_machine.handle_state_changes(replicas, ReplicaState.ONLINE)

    def process_partition_modifications(self, topic: str) -> None:
        """`/brokers/topics/<topic>` changed: partitions it names that the controller does not know are
        created (or, for a topic being deleted, written out of the znode again)."""
        ctx = self.context
        if topic not in ctx.all_topics:
            return
        entry = self.zk.get_topic_znodes([topic])[topic]
        if entry is None:
            return
        assignment, version = entry
        if isinstance(assignment, MalformedZNodeError):
            log.error("Ignoring a change of topic %s: %s", topic, assignment)
            return
        known = {tp.partition for tp in ctx.partitions_for_topic(topic)}
        added = sorted(p for p in assignment.partitions if p not in known)
        if not added:
            return
        if ctx.is_topic_queued_up_for_deletion(topic):
            log.warning(
                "Skipping adding partitions %s for topic %s since it is currently being deleted",
                ",".join(map(str, added)),
                topic,
            )
            self._restore_partition_replica_assignment(topic, assignment, version, known)
            return
        new_partitions = []
        for partition in added:
            tp = TopicPartition(topic, partition)
            ctx.update_partition_full_replica_assignment(tp, assignment.partitions[partition])
            new_partitions.append(tp)
        if not known:  # a topic whose znode was malformed when it appeared, repaired since
            self.assign_topic_ids([topic])
        self.on_new_partition_creation(new_partitions)

    def _restore_partition_replica_assignment(
        self, topic: str, assignment: TopicAssignment, version: int, known: set[int]
    ) -> None:
        """Kafka's `restorePartitionReplicaAssignment`: partitions added to a topic being deleted are
        written out of its znode again (conditionally on the version read, fenced on the epoch)."""
        log.info("Restoring the partition replica assignment for topic %s", topic)
        restored = {p: a for p, a in assignment.partitions.items() if p in known}
        outcome = self.zk.set_topic_assignments(
            [TopicAssignmentWrite(topic, restored, assignment.topic_id, version)], self.context.epoch_zk_version
        )[0]
        if outcome is not None:
            log.warning("Could not restore the assignment of topic %s: %r", topic, outcome)

    def assign_topic_ids(self, topics: Sequence[str]) -> None:
        """Kafka 2.8 (IBP 2.8) gives every topic a topic id; `kafka-topics --zookeeper` creates none. A
        topic whose znode changed or went away meanwhile keeps none (its own event comes next)."""
        ctx = self.context
        for topic in topics:
            if topic in ctx.topic_ids:
                continue
            entry = self.zk.get_topic_znodes([topic])[topic]
            if entry is None:
                continue
            assignment, version = entry
            if isinstance(assignment, MalformedZNodeError):
                continue
            if assignment.topic_id:  # written at creation (a broker's CreateTopics, as Kafka 2.8's)
                ctx.topic_ids[topic] = assignment.topic_id
                continue
            topic_id = new_kafka_uuid()
            outcome = self.zk.set_topic_assignments(
                [TopicAssignmentWrite(topic, assignment.partitions, topic_id, version)], ctx.epoch_zk_version
            )[0]
            if outcome is None:
                ctx.topic_ids[topic] = topic_id
