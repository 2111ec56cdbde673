"""The replica state machine (Kafka 2.8 `ReplicaStateMachine` / `ZkReplicaStateMachine`, §4.3).

The states and the table of valid previous states are in `state_machines.py`. A batch of requested
transitions is split into valid and invalid ones before any I/O; each invalid one is logged; the only
ZooKeeper writes, replicas leaving the ISR when they go offline, go out in one pipelined round, and
the brokers hear of every change through one request batch.

Owned by the controller's event thread, like the context it changes.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Mapping, Sequence

from kafkaops.cluster.common.errors import MalformedZNodeError
from kafkaops.cluster.controller import elections
from kafkaops.cluster.controller.channel import ControllerBrokerRequestBatch, ControllerChannel, StateChangeSink
from kafkaops.cluster.controller.context import ControllerContext
from kafkaops.cluster.controller.controller_zk_client import ReplicaStateZkClient
from kafkaops.cluster.controller.state_machines import PartitionReplica, ReplicaState, TransitionSplit
from kafkaops.cluster.state_change_log import ControllerLog, ErrorTrace, Level, StateChangeEntry
from kafkaops.cluster.zk.client import PartitionStateRead
from kafkaops.cluster.zk.values import LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition

log = logging.getLogger("kafkaops.controller")

Split = TransitionSplit[PartitionReplica, ReplicaState]


class ReplicaStateMachine:
    """Moves replicas between NewReplica, OnlineReplica, OfflineReplica, the three deletion states and
    NonExistentReplica."""

    def __init__(
        self,
        context: ControllerContext,
        zk: ReplicaStateZkClient,
        channel: ControllerChannel,
        log: ControllerLog,
        sink: StateChangeSink,
    ) -> None:
        self.context = context
        self.zk = zk
        self.channel = channel
        self.log = log
        self.sink = sink

    def startup(self, batch: ControllerBrokerRequestBatch | None = None) -> None:
        """Kafka's `startup` at failover: replicas on live brokers → OnlineReplica (a LeaderAndIsr to each),
        the others → OfflineReplica (out of every ISR), topics queued for deletion excepted.

        Kafka sets every replica's state, then moves the online ones OnlineReplica → OnlineReplica through
        `handleStateChanges`. That transition is always valid and writes nothing, so it is done here in the
        same pass, partition by partition: one PartitionReplica per replica instead of four passes over
        them (0.5 s of a failover at 100,000 partitions, RF 2)."""
        ctx = self.context
        own_batch = batch is None
        if batch is None:
            batch = self.channel.new_batch()
        live = ctx.live_broker_ids
        put = ctx.put_replica_state
        online_state, ineligible = ReplicaState.ONLINE, ReplicaState.DELETION_INELIGIBLE
        trace = self.sink.enabled(Level.TRACE)  # one TRACE line per online replica: only when it is kept
        offline: list[PartitionReplica] = []
        for tp in ctx.all_partitions():
            assignment = ctx.partition_full_replica_assignment(tp)
            online: list[int] = []
            for broker in assignment.replicas:
                replica = PartitionReplica(tp, broker)
                if broker in live:
                    put(replica, online_state)
                    online.append(broker)
                else:
                    put(replica, ineligible)
                    # Kafka's "Triggering offline replica state changes": a broker that died with the previous
                    # controller must still leave every ISR, or acks=all waits for it until the leaders shrink it.
                    if not ctx.is_topic_queued_up_for_deletion(tp.topic):
                        offline.append(replica)
            if not online:
                continue
            if trace:
                for broker in online:
                    self._write(self.log.replica_state_changed(broker, tp, online_state, online_state))
            info = ctx.partition_leadership_info(tp)
            if info is not None:
                batch.add_leader_and_isr(online, tp, info, assignment)
        if offline:
            self.handle_state_changes(offline, ReplicaState.OFFLINE, batch)
        if own_batch:
            self.channel.send(batch)

    def handle_state_changes(
        self,
        replicas: Sequence[PartitionReplica],
        target: ReplicaState,
        batch: ControllerBrokerRequestBatch | None = None,
    ) -> None:
        """Move `replicas` to `target`; sends the batch unless the caller passed its own. Raises what
        ZooKeeper raises (ControllerMovedError when a newer controller exists)."""
        ctx = self.context
        own_batch = batch is None
        if batch is None:
            batch = self.channel.new_batch()
        split = ctx.split_replica_transitions(replicas, target)
        for invalid in split.invalid:
            self._write(
                self.log.replica_state_change_failed(
                    invalid.key.replica,
                    invalid.key.partition,
                    invalid.current,
                    target,
                    ErrorTrace.illegal_state(invalid.reason),
                )
            )
        valid = list(split.valid)
        match target:
            case ReplicaState.ONLINE:
                self._to_online(split, batch)
            case ReplicaState.NEW:
                self._to_new(split, batch)
            case ReplicaState.OFFLINE:
                self._remove_replicas_from_isr(valid, batch)
            case ReplicaState.DELETION_STARTED:
                for replica in valid:
                    batch.add_stop_replica([replica.replica], replica.partition, delete=True)
        trace = self.sink.enabled(Level.TRACE)  # one TRACE line per replica: only when it is kept
        for replica in valid:
            if target is ReplicaState.NON_EXISTENT:
                ctx.remove_replica_state(replica)
            else:
                ctx.put_replica_state(replica, target)
            if trace:
                self._write(
                    self.log.replica_state_changed(replica.replica, replica.partition, split.current[replica], target)
                )
        if own_batch:
            self.channel.send(batch)

    def _to_online(self, split: Split, batch: ControllerBrokerRequestBatch) -> None:
        """A LeaderAndIsr to each replica that was not new, one batch entry per partition."""
        ctx = self.context
        recipients: dict[TopicPartition, list[int]] = defaultdict(list)
        for replica in split.valid:
            if split.current[replica] is not ReplicaState.NEW:
                recipients[replica.partition].append(replica.replica)
        for tp, brokers in recipients.items():
            info = ctx.partition_leadership_info(tp)
            if info is not None:
                batch.add_leader_and_isr(brokers, tp, info, ctx.partition_full_replica_assignment(tp))

    def _to_new(self, split: Split, batch: ControllerBrokerRequestBatch) -> None:
        """A LeaderAndIsr(isNew) to each new replica of a partition that has a leader; a replica asked to
        lead cannot be new (logged as failed; its state still becomes NewReplica, as it always has)."""
        ctx = self.context
        for replica in split.valid:
            info = ctx.partition_leadership_info(replica.partition)
            if info is not None and info.leader_and_isr.leader == replica.replica:
                self._write(
                    self.log.replica_state_change_failed(
                        replica.replica,
                        replica.partition,
                        split.current[replica],
                        ReplicaState.NEW,
                        ErrorTrace.state_change_failed(
                            f"Replica {replica.replica} for partition {replica.partition} cannot be moved to "
                            "NewReplica state as it is being requested to become leader"
                        ),
                    )
                )
                continue
            if info is not None:
                batch.add_leader_and_isr(
                    [replica.replica],
                    replica.partition,
                    info,
                    ctx.partition_full_replica_assignment(replica.partition),
                    is_new=True,
                )

    def _remove_replicas_from_isr(
        self, replicas: Sequence[PartitionReplica], batch: ControllerBrokerRequestBatch
    ) -> None:
        """StopReplica(delete=false), then each replica leaves its partition's ISR (conditional writes)."""
        ctx = self.context
        by_partition: dict[TopicPartition, list[int]] = defaultdict(list)
        for replica in replicas:
            batch.add_stop_replica([replica.replica], replica.partition, delete=False)
            by_partition[replica.partition].append(replica.replica)
        remaining = dict(by_partition)
        first = True
        while remaining:
            # First try with what the controller knows (it has just written many of these states);
            # a lost race (BADVERSION, e.g. a leader changed the ISR) re-reads from ZooKeeper.
            current: Mapping[TopicPartition, PartitionStateRead]
            if first:
                current = {tp: ctx.partition_leadership_info(tp) for tp in remaining}
            else:
                current = self.zk.get_topic_partition_states(list(remaining), fresh=True)
            first = False
            writes: list[tuple[TopicPartition, LeaderAndIsr]] = []
            # Kafka removes one replica at a time (a write each) and logs each step's state; one write
            # here, with the same final state, and each step logged as Kafka would have
            steps: dict[TopicPartition, list[tuple[int, LeaderAndIsr]]] = {}
            for tp, removed in remaining.items():
                state = current.get(tp)
                if state is None:
                    continue
                if isinstance(state, MalformedZNodeError):
                    log.error("Unreadable state of %s: %s", tp, state)
                    continue
                new = state.leader_and_isr
                steps[tp] = []
                for replica_id in removed:
                    new = elections.remove_replica_from_isr(new, replica_id) or new
                    steps[tp].append((replica_id, new))
                if new != state.leader_and_isr:
                    writes.append((tp, new))  # conditional on the version read: `new` carries it
            remaining = self._written_isr_removals(writes, steps, remaining, batch)

    def _written_isr_removals(
        self,
        writes: Sequence[tuple[TopicPartition, LeaderAndIsr]],
        steps: dict[TopicPartition, list[tuple[int, LeaderAndIsr]]],
        removed: dict[TopicPartition, list[int]],
        batch: ControllerBrokerRequestBatch,
    ) -> dict[TopicPartition, list[int]]:
        """Write the ISR removals; log and tell the other replicas of each written one; returns the
        partitions to retry (a lost race)."""
        ctx = self.context
        written = self.zk.update_leader_and_isr(writes, ctx.epoch, ctx.epoch_zk_version)
        retry: dict[TopicPartition, list[int]] = {}
        for tp, _ in writes:
            outcome = written.finished.get(tp)
            if outcome is None:
                retry[tp] = removed[tp]
                continue
            if isinstance(outcome, Exception):
                continue
            state = LeaderIsrAndControllerEpoch(outcome, ctx.epoch)
            ctx.put_partition_leadership_info(tp, state)
            for replica_id, step in steps[tp]:
                self._write(
                    self.log.replica_removed_from_isr(tp, LeaderIsrAndControllerEpoch(step, ctx.epoch), replica_id)
                )
            if not ctx.is_topic_queued_up_for_deletion(tp.topic):
                others = [r for r in ctx.partition_replica_assignment(tp) if r not in removed[tp]]
                batch.add_leader_and_isr(others, tp, state, ctx.partition_full_replica_assignment(tp))
        return retry

    def _write(self, entry: StateChangeEntry) -> None:
        self.sink.write(entry)
