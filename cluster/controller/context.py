"""The controller's in-memory view of the cluster (Kafka 2.8 `ControllerContext`, reference §5.2).

Owned by the controller's single event loop: only the loop's thread mutates it (STYLE 3), so nothing
here locks. Plain methods over plain data, no I/O: failover fills a new one from ZooKeeper (a
controller that resigns drops its context rather than resetting it), the handlers keep it in step with
what they write, and the elections read their inputs from it.

Beyond Kafka's fields it keeps two indexes, broker → partitions it holds a replica of and broker →
partitions it leads, so that a broker failure or a controlled shutdown costs time in proportion to
that broker's partitions rather than to the whole cluster's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType

from kafkaops.cluster.controller.state_machines import (
    PartitionReplica,
    PartitionState,
    ReplicaState,
    TransitionSplit,
    split_partition_transitions,
    split_replica_transitions,
)
from kafkaops.cluster.zk.values import (
    BrokerRegistration,
    LeaderIsrAndControllerEpoch,
    ReplicaAssignment,
    TopicPartition,
)

EMPTY_ASSIGNMENT = ReplicaAssignment(())


class ControllerContext:
    """Live brokers, topics, assignments, leaders, states and the pending work of the controller."""

    def __init__(self) -> None:
        self.epoch = 0
        """The controller epoch this controller was elected with (`/controller_epoch`)."""
        self.epoch_zk_version = 0
        """The data version of `/controller_epoch`: every controller write checks it (§5.1)."""
        self.shutting_down_broker_ids: set[int] = set()
        self.all_topics: set[str] = set()
        self.topic_ids: dict[str, str] = {}
        self.partitions_being_reassigned: set[TopicPartition] = set()
        self.partition_states: dict[TopicPartition, PartitionState] = {}
        self.replica_states: dict[PartitionReplica, ReplicaState] = {}
        self.replicas_on_offline_dirs: dict[int, set[TopicPartition]] = {}
        self.topics_to_be_deleted: set[str] = set()
        self.topics_with_deletion_started: set[str] = set()
        self.topics_ineligible_for_deletion: set[str] = set()
        self._live_brokers: dict[int, BrokerRegistration] = {}
        self._broker_epochs: dict[int, int] = {}
        self._assignments: dict[str, dict[int, ReplicaAssignment]] = {}
        self._leadership: dict[TopicPartition, LeaderIsrAndControllerEpoch] = {}
        self._preferred_elections: dict[TopicPartition, None] = {}  # an ordered set
        self._replicas_by_broker: dict[int, set[TopicPartition]] = {}
        self._led_by_broker: dict[int, set[TopicPartition]] = {}

    # --- brokers ---------------------------------------------------------------------------------

    def set_live_brokers(self, brokers: Iterable[tuple[BrokerRegistration, int]]) -> None:
        """Replace the live brokers with these (registration, broker epoch = czxid) pairs."""
        self._live_brokers.clear()
        self._broker_epochs.clear()
        self.add_live_brokers(brokers)

    def add_live_brokers(self, brokers: Iterable[tuple[BrokerRegistration, int]]) -> None:
        for registration, broker_epoch in brokers:
            self._live_brokers[registration.broker_id] = registration
            self._broker_epochs[registration.broker_id] = broker_epoch

    def remove_live_brokers(self, broker_ids: Iterable[int]) -> None:
        for broker_id in broker_ids:
            self._live_brokers.pop(broker_id, None)
            self._broker_epochs.pop(broker_id, None)

    def update_broker_registration(self, registration: BrokerRegistration) -> None:
        """A live broker rewrote its registration (new endpoints or rack); its epoch is unchanged."""
        self._live_brokers[registration.broker_id] = registration

    @property
    def live_broker_ids(self) -> frozenset[int]:
        """Live brokers that are not shutting down: the ones that may lead."""
        return frozenset(self._live_brokers.keys() - self.shutting_down_broker_ids)

    @property
    def live_or_shutting_down_broker_ids(self) -> frozenset[int]:
        """Every registered broker: the ones requests are sent to."""
        return frozenset(self._live_brokers)

    @property
    def live_or_shutting_down_brokers(self) -> tuple[BrokerRegistration, ...]:
        return tuple(self._live_brokers.values())

    @property
    def live_broker_epochs(self) -> Mapping[int, int]:
        return MappingProxyType(self._broker_epochs)

    def live_broker(self, broker_id: int) -> BrokerRegistration | None:
        """The registration of a live (or shutting-down) broker."""
        return self._live_brokers.get(broker_id)

    def broker_epoch(self, broker_id: int) -> int | None:
        return self._broker_epochs.get(broker_id)

    def is_replica_online(self, broker_id: int, partition: TopicPartition, include_shutting_down: bool = False) -> bool:
        """Kafka's `isReplicaOnline`: the broker is live (shutting-down counts only if asked) and this
        partition is not in one of its offline log dirs."""
        if include_shutting_down:
            online = broker_id in self._live_brokers
        else:
            online = broker_id in self._live_brokers and broker_id not in self.shutting_down_broker_ids
        return online and partition not in self.replicas_on_offline_dirs.get(broker_id, ())

    def online_replicas(self, partition: TopicPartition, include_shutting_down: bool = False) -> frozenset[int]:
        """The partition's assigned replicas that are online: the `live` argument of the elections."""
        return frozenset(
            r
            for r in self.partition_replica_assignment(partition)
            if self.is_replica_online(r, partition, include_shutting_down)
        )

    # --- topics and assignments ------------------------------------------------------------------

    def set_all_topics(self, topics: Iterable[str]) -> None:
        self.all_topics = set(topics)

    def partition_replica_assignment(self, partition: TopicPartition) -> tuple[int, ...]:
        """The replicas of a partition (adding and removing ones included); () if unknown."""
        return self.partition_full_replica_assignment(partition).replicas

    def partition_full_replica_assignment(self, partition: TopicPartition) -> ReplicaAssignment:
        return self._assignments.get(partition.topic, {}).get(partition.partition, EMPTY_ASSIGNMENT)

    def update_partition_full_replica_assignment(
        self, partition: TopicPartition, assignment: ReplicaAssignment
    ) -> None:
        previous = self.partition_full_replica_assignment(partition)
        self._assignments.setdefault(partition.topic, {})[partition.partition] = assignment
        for broker in set(previous.replicas) - set(assignment.replicas):
            self._discard(self._replicas_by_broker, broker, partition)
        for broker in assignment.replicas:
            self._replicas_by_broker.setdefault(broker, set()).add(partition)

    def partition_replica_assignment_for_topic(self, topic: str) -> dict[TopicPartition, tuple[int, ...]]:
        return {TopicPartition(topic, p): a.replicas for p, a in self._assignments.get(topic, {}).items()}

    def partition_full_replica_assignment_for_topic(self, topic: str) -> dict[TopicPartition, ReplicaAssignment]:
        return {TopicPartition(topic, p): a for p, a in self._assignments.get(topic, {}).items()}

    def all_partitions(self) -> list[TopicPartition]:
        return [TopicPartition(topic, p) for topic, partitions in self._assignments.items() for p in partitions]

    def partitions_for_topic(self, topic: str) -> list[TopicPartition]:
        return [TopicPartition(topic, p) for p in self._assignments.get(topic, {})]

    def partitions_on_broker(self, broker_id: int) -> frozenset[TopicPartition]:
        """Partitions that have a replica on the broker (Kafka's `partitionsOnBroker`)."""
        return frozenset(self._replicas_by_broker.get(broker_id, ()))

    def replicas_on_brokers(self, broker_ids: Iterable[int]) -> set[PartitionReplica]:
        return {PartitionReplica(p, b) for b in broker_ids for p in self._replicas_by_broker.get(b, ())}

    def replicas_for_topic(self, topic: str) -> set[PartitionReplica]:
        return {
            PartitionReplica(TopicPartition(topic, p), r)
            for p, assignment in self._assignments.get(topic, {}).items()
            for r in assignment.replicas
        }

    def replicas_for_partitions(self, partitions: Iterable[TopicPartition]) -> set[PartitionReplica]:
        return {PartitionReplica(p, r) for p in partitions for r in self.partition_replica_assignment(p)}

    def remove_topic(self, topic: str) -> None:
        """Drop every trace of a deleted topic, its partition and replica states included (they are
        NonExistent by then, which is also what an unknown partition or replica reads as)."""
        self.topics_to_be_deleted.discard(topic)
        self.topics_with_deletion_started.discard(topic)
        self.topics_ineligible_for_deletion.discard(topic)
        self.all_topics.discard(topic)
        self.topic_ids.pop(topic, None)
        for p, assignment in self._assignments.pop(topic, {}).items():
            partition = TopicPartition(topic, p)
            for broker in assignment.replicas:
                self._discard(self._replicas_by_broker, broker, partition)
                self.replica_states.pop(PartitionReplica(partition, broker), None)
            self._remove_leadership(partition)
            self.partition_states.pop(partition, None)
            self.partitions_being_reassigned.discard(partition)
            self._preferred_elections.pop(partition, None)

    # --- leaders ---------------------------------------------------------------------------------

    def put_partition_leadership_info(self, partition: TopicPartition, state: LeaderIsrAndControllerEpoch) -> None:
        self._remove_leadership(partition)
        self._leadership[partition] = state
        self._led_by_broker.setdefault(state.leader_and_isr.leader, set()).add(partition)

    def partition_leadership_info(self, partition: TopicPartition) -> LeaderIsrAndControllerEpoch | None:
        return self._leadership.get(partition)

    @property
    def partitions_leadership_info(self) -> Mapping[TopicPartition, LeaderIsrAndControllerEpoch]:
        return MappingProxyType(self._leadership)

    def clear_partition_leadership_info(self) -> None:
        self._leadership.clear()
        self._led_by_broker.clear()

    def partitions_with_leaders(self) -> set[TopicPartition]:
        """Partitions with a known leader and ISR, topics queued for deletion excepted."""
        return {p for p in self._leadership if p.topic not in self.topics_to_be_deleted}

    def partitions_with_offline_leader(self) -> set[TopicPartition]:
        """Partitions whose leader is not online (dead, shutting down, -1, or an offline log dir),
        topics queued for deletion excepted: the ones a broker change must move to OfflinePartition."""
        result: set[TopicPartition] = set()
        live = self.live_broker_ids
        for broker, partitions in self._led_by_broker.items():
            if broker not in live:
                result.update(partitions)
            elif broker in self.replicas_on_offline_dirs:
                result.update(partitions & self.replicas_on_offline_dirs[broker])
        return {p for p in result if p.topic not in self.topics_to_be_deleted}

    def partitions_led_by(self, broker_id: int, *, replicated_only: bool = False) -> set[TopicPartition]:
        """Partitions the broker leads, topics queued for deletion excepted. `replicated_only` keeps
        those with more than one replica (Kafka's `partitionLeadersOnBroker`, what a controlled
        shutdown must move away before the broker may stop)."""
        return {
            p
            for p in self._led_by_broker.get(broker_id, ())
            if p.topic not in self.topics_to_be_deleted
            and (not replicated_only or len(self.partition_replica_assignment(p)) > 1)
        }

    def _remove_leadership(self, partition: TopicPartition) -> None:
        previous = self._leadership.pop(partition, None)
        if previous is not None:
            self._discard(self._led_by_broker, previous.leader_and_isr.leader, partition)

    @staticmethod
    def _discard(index: dict[int, set[TopicPartition]], broker: int, partition: TopicPartition) -> None:
        partitions = index.get(broker)
        if partitions is not None:
            partitions.discard(partition)
            if not partitions:
                del index[broker]

    # --- partition and replica states ------------------------------------------------------------

    def partition_state(self, partition: TopicPartition) -> PartitionState:
        return self.partition_states.get(partition, PartitionState.NON_EXISTENT)

    def put_partition_state(self, partition: TopicPartition, state: PartitionState) -> None:
        self.partition_states[partition] = state

    def partitions_in_states(self, *states: PartitionState, topic: str | None = None) -> set[TopicPartition]:
        if topic is None:  # every broker change scans all partitions: no call per partition
            return {p for p, state in self.partition_states.items() if state in states}
        return {p for p in self.partitions_for_topic(topic) if self.partition_state(p) in states}

    def offline_partitions(self) -> set[TopicPartition]:
        """Partitions in OfflinePartition, except those of topics being deleted (Kafka's
        OfflinePartitionsCount)."""
        return {
            p
            for p, s in self.partition_states.items()
            if s is PartitionState.OFFLINE and p.topic not in self.topics_with_deletion_started
        }

    def split_partition_transitions(
        self, partitions: Iterable[TopicPartition], target: PartitionState
    ) -> TransitionSplit[TopicPartition, PartitionState]:
        return split_partition_transitions(partitions, self.partition_states, target)

    def replica_state(self, replica: PartitionReplica) -> ReplicaState:
        return self.replica_states.get(replica, ReplicaState.NON_EXISTENT)

    def put_replica_state(self, replica: PartitionReplica, state: ReplicaState) -> None:
        self.replica_states[replica] = state

    def remove_replica_state(self, replica: PartitionReplica) -> None:
        self.replica_states.pop(replica, None)

    def replicas_in_state(self, topic: str, state: ReplicaState) -> set[PartitionReplica]:
        return {r for r in self.replicas_for_topic(topic) if self.replica_state(r) is state}

    def are_all_replicas_in_state(self, topic: str, state: ReplicaState) -> bool:
        return all(self.replica_state(r) is state for r in self.replicas_for_topic(topic))

    def is_any_replica_in_state(self, topic: str, state: ReplicaState) -> bool:
        return any(self.replica_state(r) is state for r in self.replicas_for_topic(topic))

    def split_replica_transitions(
        self, replicas: Iterable[PartitionReplica], target: ReplicaState
    ) -> TransitionSplit[PartitionReplica, ReplicaState]:
        return split_replica_transitions(replicas, self.replica_states, target)

    # --- topic deletion (§5.9) ---------------------------------------------------------------------

    def queue_topic_deletion(self, topics: Iterable[str]) -> None:
        self.topics_to_be_deleted.update(topics)

    def begin_topic_deletion(self, topics: Iterable[str]) -> None:
        self.topics_with_deletion_started.update(topics)

    def is_topic_queued_up_for_deletion(self, topic: str) -> bool:
        return topic in self.topics_to_be_deleted

    def is_topic_deletion_in_progress(self, topic: str) -> bool:
        return topic in self.topics_with_deletion_started

    def is_topic_eligible_for_deletion(self, topic: str) -> bool:
        return topic in self.topics_to_be_deleted and topic not in self.topics_ineligible_for_deletion

    def mark_topics_ineligible_for_deletion(self, topics: Iterable[str]) -> set[str]:
        """Topics with offline replicas or a reassignment in progress wait; only queued topics are
        marked. Returns the topics newly marked."""
        marked = {t for t in topics if t in self.topics_to_be_deleted and t not in self.topics_ineligible_for_deletion}
        self.topics_ineligible_for_deletion |= marked
        return marked

    def resume_deletion_for_topics(self, topics: Iterable[str]) -> None:
        """Make the topics eligible again, except those with a partition still being reassigned: Kafka
        resumes those too (a broker coming back, or one of several partitions finishing its move) and
        then deletes the topic under a reassignment still going on."""
        reassigning = {p.topic for p in self.partitions_being_reassigned}
        self.topics_ineligible_for_deletion.difference_update(t for t in topics if t not in reassigning)

    # --- reassignment and preferred elections ------------------------------------------------------

    @property
    def reassignment_in_progress(self) -> bool:
        """Any partition being reassigned anywhere blocks auto rebalance (§5.6)."""
        return bool(self.partitions_being_reassigned)

    def queue_preferred_elections(self, partitions: Iterable[TopicPartition]) -> None:
        """Partitions from `/admin/preferred_replica_election` waiting for the loop, in arrival order."""
        self._preferred_elections.update(dict.fromkeys(partitions))

    @property
    def pending_preferred_elections(self) -> tuple[TopicPartition, ...]:
        return tuple(self._preferred_elections)

    def take_preferred_elections(self) -> tuple[TopicPartition, ...]:
        """The queued partitions, removed from the queue."""
        taken = tuple(self._preferred_elections)
        self._preferred_elections.clear()
        return taken
