"""Brokers coming, going and shutting down, and brokers losing log dirs (Kafka 2.8 `KafkaController`'s
`processBrokerChange`, `onBrokerStartup`, `onBrokerFailure`, `processControlledShutdown`,
`processLogDirEventNotification`, `onReplicasBecomeOffline`; reference §5.4).

A failure costs time in proportion to the failed brokers' partitions (the context's broker indexes),
and reaches each broker as one LeaderAndIsr and one UpdateMetadata: new leaders, then the dead
replicas leaving the ISR, go into one request batch.

Owned by the controller's event thread.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from kafkaops.cluster.common import errors
from kafkaops.cluster.common.errors import BrokerNotAvailableError, MalformedZNodeError, StaleBrokerEpochError
from kafkaops.cluster.controller.channel import ControllerBrokerRequestBatch, ControllerChannel
from kafkaops.cluster.controller.context import ControllerContext
from kafkaops.cluster.controller.controller_zk_client import BrokerChangeZkClient, BrokersReader
from kafkaops.cluster.controller.elections import ControlledShutdownPartitionLeaderElectionStrategy
from kafkaops.cluster.controller.events import ControlledShutdown, LeaderAndIsrResponseReceived
from kafkaops.cluster.controller.partition_state_machine import PartitionStateMachine
from kafkaops.cluster.controller.reassignment_handler import ReassignmentHandler
from kafkaops.cluster.controller.replica_state_machine import ReplicaStateMachine
from kafkaops.cluster.controller.state_machines import PartitionReplica, PartitionState, ReplicaState
from kafkaops.cluster.controller.topic_deletion import TopicDeletionManager
from kafkaops.cluster.zk.values import BrokerRegistration, TopicPartition

log = logging.getLogger("kafkaops.controller")

CONTROLLED_SHUTDOWN_ELECTION = ControlledShutdownPartitionLeaderElectionStrategy()


def read_live_brokers(zk: BrokersReader) -> list[tuple[BrokerRegistration, int]]:
    """The registered brokers and their epochs, by id; an unreadable registration is logged and left out."""
    result: list[tuple[BrokerRegistration, int]] = []
    for broker_id, entry in zk.get_all_broker_and_epochs().items():
        if isinstance(entry, MalformedZNodeError):
            log.error("Ignoring broker %s: %s", broker_id, entry)
            continue
        result.append(entry)
    return result


class BrokerChangeHandler:
    def __init__(
        self,
        context: ControllerContext,
        zk: BrokerChangeZkClient,
        channel: ControllerChannel,
        partition_state_machine: PartitionStateMachine,
        replica_state_machine: ReplicaStateMachine,
        topic_deletion: TopicDeletionManager,
        reassignments: ReassignmentHandler,
    ) -> None:
        self.context = context
        self.zk = zk
        self.channel = channel
        self.partition_state_machine = partition_state_machine
        self.replica_state_machine = replica_state_machine
        self.topic_deletion = topic_deletion
        self.reassignments = reassignments

    # --- /brokers/ids ----------------------------------------------------------------------------------

    def process_broker_change(self) -> None:
        """New, dead and bounced brokers (a bounced one registered again with a newer epoch: both)."""
        ctx = self.context
        registered = {b.broker_id: (b, epoch) for b, epoch in read_live_brokers(self.zk)}
        known = ctx.live_broker_epochs
        new = sorted(b for b in registered if b not in known)
        dead = sorted(b for b in known if b not in registered)
        bounced = sorted(b for b in registered if b in known and registered[b][1] > known[b])
        if dead or bounced:
            for broker_id in dead + bounced:
                self.channel.remove_broker(broker_id)
            ctx.remove_live_brokers(dead + bounced)
            self.on_broker_failure(dead + bounced)
        if new or bounced:
            ctx.add_live_brokers(registered[b] for b in new + bounced)
            for broker_id in new + bounced:
                self.channel.add_broker(registered[broker_id][0])
            self.on_broker_startup(new + bounced)

    def on_broker_startup(self, broker_ids: Sequence[int]) -> None:
        ctx = self.context
        batch = self.channel.new_batch()
        batch.add_update_metadata(ctx.live_broker_ids, ctx.all_partitions())
        self.channel.send(batch)
        replicas = list(ctx.replicas_on_brokers(broker_ids))
        self.replica_state_machine.handle_state_changes(sorted(replicas), ReplicaState.ONLINE)
        self.partition_state_machine.trigger_online_partition_state_change()
        # reassignments waiting for a target replica on a broker that just came (back)
        started = set(broker_ids)
        self.reassignments.maybe_resume_reassignments(
            lambda tp, assignment: any(r in started for r in assignment.target_replicas)
        )
        topics_to_retry = {
            r.partition.topic for r in replicas if ctx.is_topic_queued_up_for_deletion(r.partition.topic)
        }
        if topics_to_retry:
            self.topic_deletion.resume_deletion_for_topics(topics_to_retry)

    def on_broker_failure(self, broker_ids: Sequence[int]) -> None:
        ctx = self.context
        ctx.shutting_down_broker_ids.difference_update(broker_ids)
        led = [
            tp
            for b in broker_ids
            for tp in ctx.partitions_led_by(b)
            if not ctx.is_topic_queued_up_for_deletion(tp.topic)
        ]
        # One batch for the whole failure: new leaders, then the dead replicas leaving the ISR, reach
        # each broker as one LeaderAndIsr and one UpdateMetadata (Kafka sends a round per step).
        batch = self.channel.new_batch()
        self.partition_state_machine.handle_state_changes(sorted(set(led)), PartitionState.OFFLINE, batch=batch)
        self.partition_state_machine.trigger_online_partition_state_change(batch=batch)
        self._replicas_offline(sorted(ctx.replicas_on_brokers(broker_ids)), batch)
        batch.add_update_metadata(ctx.live_broker_ids, [])
        self.channel.send(batch)

    def _replicas_offline(self, replicas: Sequence[PartitionReplica], batch: ControllerBrokerRequestBatch) -> None:
        """Replicas → OfflineReplica, those of topics being deleted → ReplicaDeletionIneligible (and their
        topics wait)."""
        ctx = self.context
        deleting = [r for r in replicas if ctx.is_topic_queued_up_for_deletion(r.partition.topic)]
        excluded = set(deleting)
        self.replica_state_machine.handle_state_changes(
            [r for r in replicas if r not in excluded], ReplicaState.OFFLINE, batch
        )
        if deleting:
            self.replica_state_machine.handle_state_changes(deleting, ReplicaState.DELETION_INELIGIBLE, batch)
            ctx.mark_topics_ineligible_for_deletion({r.partition.topic for r in deleting})

    # --- controlled shutdown ---------------------------------------------------------------------------

    def process_controlled_shutdown(self, event: ControlledShutdown) -> None:
        """Kafka's `doControlledShutdown`: the broker's leaderships move to other ISR members and its other
        replicas go offline; `event.result` gets the partitions it still leads (or the error)."""
        ctx = self.context
        if event.broker_id not in ctx.live_broker_ids and event.broker_id not in ctx.shutting_down_broker_ids:
            event.result.set_exception(BrokerNotAvailableError(f"Broker id {event.broker_id} does not exist."))
            return
        epoch = ctx.broker_epoch(event.broker_id)
        if event.broker_epoch >= 0 and epoch is not None and event.broker_epoch < epoch:
            event.result.set_exception(
                StaleBrokerEpochError(f"Broker epoch {event.broker_epoch} of broker {event.broker_id} is stale")
            )
            return
        ctx.shutting_down_broker_ids.add(event.broker_id)
        led = sorted(
            tp
            for tp in ctx.partitions_led_by(event.broker_id, replicated_only=True)
            if not ctx.is_topic_queued_up_for_deletion(tp.topic)
        )
        # split before the election, as Kafka does: a partition it led leaves its ISR in the election's
        # write, and must not go through OfflineReplica for a second write and LeaderAndIsr
        followed = sorted(
            PartitionReplica(tp, event.broker_id)
            for tp in ctx.partitions_on_broker(event.broker_id)
            if self._follows(tp, event.broker_id)
        )
        if led:
            self.partition_state_machine.handle_state_changes(led, PartitionState.ONLINE, CONTROLLED_SHUTDOWN_ELECTION)
        if followed:
            # Kafka's order: the leaving broker is told to stop fetching before the ISR writes, so that a
            # leader which learns the shrunk ISR is less likely to see one more fetch and take it back
            stop = self.channel.new_batch()
            for replica in followed:
                stop.add_stop_replica([replica.replica], replica.partition, delete=False)
            self.channel.send(stop)
            self.replica_state_machine.handle_state_changes(followed, ReplicaState.OFFLINE)
        event.result.set_result(set(ctx.partitions_led_by(event.broker_id)))

    def _follows(self, tp: TopicPartition, broker_id: int) -> bool:
        """Whether the broker holds a follower replica of a replicated partition not being deleted."""
        ctx = self.context
        info = ctx.partition_leadership_info(tp)
        return (
            len(ctx.partition_replica_assignment(tp)) > 1
            and info is not None
            and info.leader_and_isr.leader != broker_id
            and not ctx.is_topic_queued_up_for_deletion(tp.topic)
        )

    # --- log dir failures (Kafka's `processLogDirEventNotification`) -------------------------------------

    def process_log_dir_event_notification(self) -> None:
        """A broker reported a failed log dir: send LeaderAndIsr for all its replicas; its answers
        (KAFKA_STORAGE_ERROR per replica on the dead dir) tell which replicas went offline."""
        children = self.zk.get_all_log_dir_event_notifications()
        if not children:
            return
        brokers: set[int] = set()
        for path, broker in self.zk.get_broker_ids_from_log_dir_events(children).items():
            if isinstance(broker, MalformedZNodeError):
                log.error("Ignoring log dir event notification %s: %s", path, broker)
                continue
            brokers.add(broker)
        ctx = self.context
        live = sorted(b for b in brokers if b in ctx.live_broker_ids)
        if live:
            log.info("Sending LeaderAndIsr to broker(s) %s to find the replicas on failed log dirs", live)
            replicas = sorted(ctx.replicas_on_brokers(live))
            self.replica_state_machine.handle_state_changes(replicas, ReplicaState.ONLINE)
        self.zk.delete_log_dir_event_notifications(children, ctx.epoch_zk_version)

    def process_leader_and_isr_response(self, event: LeaderAndIsrResponseReceived) -> None:
        ctx = self.context
        if event.broker_id not in ctx.live_broker_ids:
            return
        offline = {tp for tp, code in event.partition_errors if code == errors.KafkaStorageError.code}
        online = {tp for tp, code in event.partition_errors if code == errors.NONE}
        previous = ctx.replicas_on_offline_dirs.get(event.broker_id, set())
        current = (previous - online) | offline
        if current:
            ctx.replicas_on_offline_dirs[event.broker_id] = current
        else:
            ctx.replicas_on_offline_dirs.pop(event.broker_id, None)
        newly_offline = sorted(current - previous)
        if newly_offline:
            log.error(
                "Replicas of broker %s on offline log dirs: %s",
                event.broker_id,
                ",".join(map(str, newly_offline)),
            )
            self.on_replicas_become_offline([PartitionReplica(tp, event.broker_id) for tp in newly_offline])

    def on_replicas_become_offline(self, replicas: Sequence[PartitionReplica]) -> None:
        """Kafka's `onReplicasBecomeOffline`: partitions whose leader is now offline elect another, and the
        offline replicas leave the ISR (topics being deleted: their replicas become ineligible)."""
        ctx = self.context
        batch = self.channel.new_batch()
        offline_leader = sorted(ctx.partitions_with_offline_leader())
        self.partition_state_machine.handle_state_changes(offline_leader, PartitionState.OFFLINE, batch=batch)
        self.partition_state_machine.trigger_online_partition_state_change(batch=batch)
        self._replicas_offline(replicas, batch)
        batch.add_update_metadata(ctx.live_broker_ids, [])
        self.channel.send(batch)
