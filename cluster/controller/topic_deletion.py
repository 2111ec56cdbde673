"""Topic deletion (Kafka 2.8 `TopicDeletionManager`, reference §5.9).

A topic named under `/admin/delete_topics` is queued; while any of its replicas is offline or any of its
partitions is being reassigned it is ineligible and waits. An eligible topic starts: UpdateMetadata to
every broker, its partitions Offline → NonExistent, its replicas Offline → ReplicaDeletionStarted
(StopReplica delete=true; those on dead brokers ReplicaDeletionIneligible). The StopReplica answers
move each replica to ReplicaDeletionSuccessful or ReplicaDeletionIneligible; once every replica has
succeeded, the topic's znodes are deleted and the controller forgets it. An ineligible topic is
retried when a broker comes back or its reassignment completes (`resume_deletion_for_topics`).

Owned by the controller's event thread.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence

from kafkaops.cluster.controller.channel import ControllerChannel
from kafkaops.cluster.controller.context import ControllerContext
from kafkaops.cluster.controller.controller_zk_client import TopicDeletionZkClient
from kafkaops.cluster.controller.events import TopicDeletionStopReplicaResponseReceived
from kafkaops.cluster.controller.partition_state_machine import PartitionStateMachine
from kafkaops.cluster.controller.replica_state_machine import ReplicaStateMachine
from kafkaops.cluster.controller.state_machines import PartitionReplica, PartitionState, ReplicaState

log = logging.getLogger("kafkaops.controller")


class TopicDeletionManager:
    def __init__(
        self,
        context: ControllerContext,
        zk: TopicDeletionZkClient,
        channel: ControllerChannel,
        partition_state_machine: PartitionStateMachine,
        replica_state_machine: ReplicaStateMachine,
        *,
        delete_topic_enable: bool = True,
    ) -> None:
        self.context = context
        self.zk = zk
        self.channel = channel
        self.partition_state_machine = partition_state_machine
        self.replica_state_machine = replica_state_machine
        self.is_delete_topic_enabled = delete_topic_enable
        """The brokers' `delete.topic.enable`: when false, deletion intents are removed and nothing else."""

    def init(
        self, initial_topics_to_be_deleted: Iterable[str], initial_topics_ineligible_for_deletion: Iterable[str]
    ) -> None:
        """At failover: queue the topics the intents name (the caller keeps those that exist) and mark the
        ones that must wait."""
        if not self.is_delete_topic_enabled:
            return
        ctx = self.context
        ctx.queue_topic_deletion(initial_topics_to_be_deleted)
        ineligible = set(initial_topics_ineligible_for_deletion)
        ctx.mark_topics_ineligible_for_deletion(t for t in ctx.topics_to_be_deleted if t in ineligible)

    def halted_topics(self, topics: Iterable[str]) -> set[str]:
        """Those of `topics` whose deletion must wait: a replica offline, or a partition being reassigned
        ("topic reassignment in progress"). Only their replicas are looked at, as Kafka's
        `fetchTopicDeletionsInProgress` does: all of the cluster's cost 0.2 s of a failover at 100,000
        partitions, with no topic to delete."""
        ctx = self.context
        reassigning = {tp.topic for tp in ctx.partitions_being_reassigned}
        return {
            topic
            for topic in topics
            if topic in reassigning
            or any(not ctx.is_replica_online(r.replica, r.partition) for r in ctx.replicas_for_topic(topic))
        }

    # --- events ------------------------------------------------------------------------------------

    def process_topic_deletion(self) -> None:
        """The children of `/admin/delete_topics` changed (Kafka's `processTopicDeletion`): intents for
        unknown topics are removed (all of them when deletion is disabled), the others queued."""
        ctx = self.context
        requested = set(self.zk.get_topic_deletions())
        unknown = sorted(t for t in requested if t not in ctx.all_topics)
        if not self.is_delete_topic_enabled:
            unknown = sorted(requested)  # delete.topic.enable=false: drop the intents, do nothing
        if unknown:
            self.zk.delete_topic_deletions(unknown, ctx.epoch_zk_version)
        if not self.is_delete_topic_enabled:
            return
        to_delete = sorted(t for t in requested if t in ctx.all_topics)
        if not to_delete:
            return
        halted = self.halted_topics(to_delete)
        self.enqueue_topics_for_deletion(to_delete, [t for t in to_delete if t in halted])

    def process_stop_replica_response(self, event: TopicDeletionStopReplicaResponseReceived) -> None:
        """A broker answered StopReplica(delete=true): its replicas still being deleted succeeded or
        became ineligible, partition by partition (all of them if the whole request failed)."""
        ctx = self.context
        failed = (
            {tp for tp, code in event.partition_errors if code != 0}
            if event.error_code == 0
            else {tp for tp, _ in event.partition_errors}
        )
        replicas = [PartitionReplica(tp, event.broker_id) for tp, _ in event.partition_errors]
        ineligible = [
            r for r in replicas if r.partition in failed and ctx.replica_state(r) is ReplicaState.DELETION_STARTED
        ]
        succeeded = [
            r for r in replicas if r.partition not in failed and ctx.replica_state(r) is ReplicaState.DELETION_STARTED
        ]
        if ineligible:
            self._mark_replica_deletion_failed(ineligible)
        if succeeded:
            self.replica_state_machine.handle_state_changes(succeeded, ReplicaState.DELETION_SUCCESSFUL)
        self.resume_deletions()

    # --- Kafka's TopicDeletionManager API -------------------------------------------------------------

    def enqueue_topics_for_deletion(self, topics: Iterable[str], ineligible: Iterable[str] = ()) -> None:
        """Queue `topics`; those of them in `ineligible` wait (offline replicas, a reassignment)."""
        if not self.is_delete_topic_enabled:
            return
        self.context.queue_topic_deletion(topics)
        self.context.mark_topics_ineligible_for_deletion(ineligible)
        self.resume_deletions()

    def resume_deletion_for_topics(self, topics: Iterable[str]) -> None:
        """Make the topics eligible again (a broker came back, a reassignment completed) and go on."""
        self.context.resume_deletion_for_topics(topics)
        self.resume_deletions()

    def fail_replica_deletion(self, replicas: Sequence[PartitionReplica]) -> None:
        """The replicas could not be deleted: they, and their topics, become ineligible."""
        self._mark_replica_deletion_failed(replicas)
        self.resume_deletions()

    def complete_replica_deletion(self, replicas: Sequence[PartitionReplica]) -> None:
        self.replica_state_machine.handle_state_changes(replicas, ReplicaState.DELETION_SUCCESSFUL)
        self.resume_deletions()

    def resume_deletions(self) -> None:
        """Every queued topic, in name order: complete it if all its replicas are deleted, wait if some
        are being deleted, start it if it is eligible, else wait for a broker to come back."""
        ctx = self.context
        for topic in sorted(ctx.topics_to_be_deleted):
            if ctx.are_all_replicas_in_state(topic, ReplicaState.DELETION_SUCCESSFUL):
                self._complete_delete_topic(topic)
            elif ctx.is_any_replica_in_state(topic, ReplicaState.DELETION_STARTED):
                continue  # StopReplica responses will come
            elif ctx.is_topic_eligible_for_deletion(topic):
                self._on_topic_deletion(topic)
            elif ctx.is_any_replica_in_state(topic, ReplicaState.DELETION_INELIGIBLE):
                continue  # retried when a broker comes back

    # --- the steps -------------------------------------------------------------------------------------

    def _mark_replica_deletion_failed(self, replicas: Sequence[PartitionReplica]) -> None:
        self.replica_state_machine.handle_state_changes(replicas, ReplicaState.DELETION_INELIGIBLE)
        self.context.mark_topics_ineligible_for_deletion({r.partition.topic for r in replicas})

    def _on_topic_deletion(self, topic: str) -> None:
        """Kafka's `onTopicDeletion` for one topic."""
        ctx = self.context
        ctx.begin_topic_deletion([topic])
        partitions = sorted(ctx.partitions_for_topic(topic))
        batch = self.channel.new_batch()
        batch.add_update_metadata(ctx.live_broker_ids, partitions)
        self.channel.send(batch)
        self.partition_state_machine.handle_state_changes(partitions, PartitionState.OFFLINE)
        self.partition_state_machine.handle_state_changes(partitions, PartitionState.NON_EXISTENT)
        replicas = sorted(ctx.replicas_for_topic(topic))
        live = ctx.live_broker_ids
        dead = [r for r in replicas if r.replica not in live]
        alive = [r for r in replicas if r.replica in live]
        if dead:
            self.replica_state_machine.handle_state_changes(dead, ReplicaState.DELETION_INELIGIBLE)
        self.replica_state_machine.handle_state_changes(alive, ReplicaState.OFFLINE)
        self.replica_state_machine.handle_state_changes(alive, ReplicaState.DELETION_STARTED)
        if dead:
            ctx.mark_topics_ineligible_for_deletion([topic])

    def _complete_delete_topic(self, topic: str) -> None:
        ctx = self.context
        replicas = sorted(ctx.replicas_in_state(topic, ReplicaState.DELETION_SUCCESSFUL))
        self.replica_state_machine.handle_state_changes(replicas, ReplicaState.NON_EXISTENT)
        self.zk.delete_topic(topic, ctx.epoch_zk_version)
        ctx.remove_topic(topic)
        log.info("Deletion of topic %s successfully completed", topic)
