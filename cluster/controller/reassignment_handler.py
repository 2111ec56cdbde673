"""Partition reassignment's I/O (Kafka 2.8 KIP-455 in `KafkaController`; reference §5.7, §5.8).

What it decides on is pure and lives beside it (`reassignment.py`); this does Kafka's
`onPartitionReassignment` and what feeds it: the entries of `/admin/reassign_partitions` at failover
and when the znode changes, the reassignments a failover finds half done in the topic znodes, and their
completion once the target replicas have joined the ISR. Each KIP-455 step runs once for every
partition of a batch: one pipelined round of ZooKeeper writes, one topic znode write per topic, one
rewrite of `/admin/reassign_partitions`, one request per broker.

Owned by the controller's event thread, except `_on_isr_watch` (kazoo's thread, which only records the
partition and enqueues one event).
"""

from __future__ import annotations

import logging
import threading
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence

from kazoo.exceptions import BadVersionError, NoNodeError

from kafkaops.cluster.common.errors import (
    ControllerMovedError,
    KafkaOpsError,
    MalformedZNodeError,
    NoReassignmentInProgressError,
)
from kafkaops.cluster.controller import reassignment as reassign
from kafkaops.cluster.controller.channel import ControllerBrokerRequestBatch, ControllerChannel, StateChangeSink
from kafkaops.cluster.controller.context import ControllerContext
from kafkaops.cluster.controller.controller_zk_client import ReassignmentZkClient, TopicAssignmentWrite
from kafkaops.cluster.controller.elections import ReassignPartitionLeaderElectionStrategy
from kafkaops.cluster.controller.partition_state_machine import PartitionStateMachine
from kafkaops.cluster.controller.replica_state_machine import ReplicaStateMachine
from kafkaops.cluster.controller.state_machines import PartitionReplica, PartitionState, ReplicaState
from kafkaops.cluster.controller.topic_deletion import TopicDeletionManager
from kafkaops.cluster.state_change_log import ControllerLog
from kafkaops.cluster.zk import znodes
from kafkaops.cluster.zk.client import PartitionStateRead
from kafkaops.cluster.zk.values import (
    NO_LEADER,
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    ReplicaAssignment,
    TopicPartition,
)

log = logging.getLogger("kafkaops.controller")

REASSIGN_ELECTION = ReassignPartitionLeaderElectionStrategy()


class ReassignmentHandler:
    """One controller incarnation's partition reassignments."""

    def __init__(
        self,
        context: ControllerContext,
        zk: ReassignmentZkClient,
        channel: ControllerChannel,
        log: ControllerLog,
        sink: StateChangeSink,
        partition_state_machine: PartitionStateMachine,
        replica_state_machine: ReplicaStateMachine,
        topic_deletion: TopicDeletionManager,
        on_isr_change: Callable[[], None],
    ) -> None:
        """`on_isr_change` (kazoo's thread) enqueues a PartitionReassignmentIsrChange event."""
        self.context = context
        self.zk = zk
        self.channel = channel
        self.log = log
        self.sink = sink
        self.partition_state_machine = partition_state_machine
        self.replica_state_machine = replica_state_machine
        self.topic_deletion = topic_deletion
        self._on_isr_change = on_isr_change
        self._isr_watch_lock = threading.Lock()
        self._isr_changed: set[TopicPartition] = set()
        """Partitions being reassigned whose state znode changed since the last look (filled on kazoo's
        thread, hence the lock)."""

    # --- what starts reassignments -----------------------------------------------------------------

    def initialize_partition_reassignments(self) -> None:
        """Kafka's `initializePartitionReassignments` at failover: the entries of the znode first (they
        supersede what the topic znodes hold), then every partition whose topic znode still lists
        adding or removing replicas."""
        resumed = self.process_zk_partition_reassignment(resume=True)
        self.maybe_resume_reassignments(lambda tp, assignment: tp not in resumed)

    def maybe_resume_reassignments(self, should_resume: Callable[[TopicPartition, ReplicaAssignment], bool]) -> None:
        ctx = self.context
        to_resume: dict[TopicPartition, ReplicaAssignment] = {}
        for tp in sorted(ctx.partitions_being_reassigned):
            assignment = ctx.partition_full_replica_assignment(tp)
            if should_resume(tp, assignment):
                to_resume[tp] = assignment
        self.trigger_reassignments(to_resume)

    def process_zk_partition_reassignment(self, resume: bool = False) -> set[TopicPartition]:
        """`processZkPartitionReassignment`: start (or supersede, or cancel) the reassignment of every
        entry, remove the refused ones from the znode; returns the partitions started. A znode that
        cannot be read as Kafka's JSON is logged and deleted (Kafka 2.8 ignores it and leaves it, which
        blocks every later reassignment)."""
        ctx = self.context
        found = self.zk.get_partition_reassignment()
        if found is None:
            return set()
        requested, version = found
        if isinstance(requested, MalformedZNodeError):
            log.warning("Ignoring partition reassignment due to invalid json: %s", requested)
            self._write_zk_reassignment({}, version)
            return set()
        plan = reassign.plan_zk_reassignments(
            requested,
            ctx.partition_full_replica_assignment,
            ctx.is_topic_queued_up_for_deletion,
            ctx.live_broker_ids,
            resume=resume,
        )
        for tp in plan.being_deleted:
            log.info("Skipping reassignment of %s since the topic is currently being deleted", tp)
        failed = dict(plan.failed)
        refused = self.trigger_reassignments(plan.to_start)
        failed.update(refused)
        if failed:
            log.warning(
                "Failed reassignment through zk with the following errors: %s", reassign.format_failures(failed)
            )
            self._remove_from_zk_reassignment(lambda tp, _: tp in failed)
        elif not requested:
            self._remove_from_zk_reassignment(lambda tp, _: False)  # an empty list: nothing left to do
        return set(plan.to_start) - set(refused)

    def process_api_partition_reassignment(
        self, requested: Mapping[TopicPartition, Sequence[int] | None]
    ) -> dict[TopicPartition, reassign.ApiError | None]:
        """Kafka's `processApiPartitionReassignment` (KIP-455): each partition's new target, or None to
        cancel (its original replicas come back); a cancel of a partition not being reassigned is
        NO_REASSIGNMENT_IN_PROGRESS. The latest request wins over `/admin/reassign_partitions`: the
        partitions started leave the znode. Per partition None (done) or its error."""
        ctx = self.context
        results: dict[TopicPartition, reassign.ApiError | None] = {}
        to_start: dict[TopicPartition, ReplicaAssignment] = {}
        for tp, target in requested.items():
            current = ctx.partition_full_replica_assignment(tp)
            error = reassign.validate_replicas(target, current, ctx.live_broker_ids) if target is not None else None
            if error is not None:
                results[tp] = error
            elif target is None and not current.is_being_reassigned:
                results[tp] = reassign.ApiError(NoReassignmentInProgressError)
            else:
                to_start[tp] = current.reassign_to(target if target is not None else current.original_replicas)
        self._remove_from_zk_reassignment(lambda tp, _: tp in to_start)
        startable = {}
        for tp, assignment in to_start.items():
            if ctx.is_topic_queued_up_for_deletion(tp.topic) or not ctx.partition_full_replica_assignment(tp).replicas:
                results[tp] = reassign.PARTITION_DOES_NOT_EXIST
            else:
                startable[tp] = assignment
        results.update(dict.fromkeys(startable))
        results.update(self.trigger_reassignments(startable))
        return results

    def list_partition_reassignments(
        self, partitions: Sequence[TopicPartition] | None
    ) -> dict[TopicPartition, ReplicaAssignment]:
        """Kafka's `processListPartitionReassignments`: the partitions (asked, or all) being reassigned."""
        ctx = self.context
        asked = sorted(ctx.partitions_being_reassigned) if partitions is None else partitions
        found = {tp: ctx.partition_full_replica_assignment(tp) for tp in asked}
        return {tp: assignment for tp, assignment in found.items() if assignment.is_being_reassigned}

    def trigger_reassignments(
        self,
        reassignments: Mapping[TopicPartition, ReplicaAssignment],
        states: Mapping[TopicPartition, PartitionStateRead] | None = None,
    ) -> dict[TopicPartition, reassign.ApiError]:
        """`maybeTriggerPartitionReassignment` for many partitions at once; returns the refused ones. A
        failure other than the controller moving is logged and reported, never raised: the batch is then
        retried one partition at a time, so that one bad partition does not stop the others (every step
        can be repeated, as a new controller resuming a reassignment repeats them)."""
        if not reassignments:
            return {}
        try:
            self._on_partition_reassignments(reassignments, states)
        except ControllerMovedError:
            log.info(
                "Failed completing reassignment of partitions %s because controller has moved to another broker",
                ",".join(str(tp) for tp in reassignments),
            )
            raise
        except Exception:
            if len(reassignments) == 1:
                tp = next(iter(reassignments))
                log.exception("Error completing reassignment of partition %s", tp)
                return {tp: reassign.UNKNOWN_SERVER_ERROR}
            log.exception("Error completing the reassignment of %d partitions: retrying one by one", len(reassignments))
            refused: dict[TopicPartition, reassign.ApiError] = {}
            for tp, assignment in reassignments.items():
                refused.update(self.trigger_reassignments({tp: assignment}))
            return refused
        return {}

    # --- KIP-455 ---------------------------------------------------------------------------------------

    def _on_partition_reassignments(
        self,
        reassignments: Mapping[TopicPartition, ReplicaAssignment],
        states: Mapping[TopicPartition, PartitionStateRead] | None = None,
    ) -> None:
        """Kafka's `onPartitionReassignment`, for many partitions: each step once for all of them (one
        pipelined round of ZooKeeper writes, one request per broker), in Kafka's order for each partition.
        RS = replicas, AR/RR = adding/removing, TRS = target. `states`: the partitions' state znodes if
        the caller has just read them with the completion watch set.

        Phase U: ZooKeeper then memory get RS = TRS ++ ORS with AR and RR; replicas a superseded
        reassignment was adding and the new one does not hold are stopped. Phase A (TRS ⊄ ISR): bump
        the leader epoch, LeaderAndIsr to the origin and adding replicas, AR → NewReplica. Phase B
        (TRS ⊆ ISR): AR → OnlineReplica, RS = TRS in memory, leader moved if it is leaving (or dead),
        RR → Offline → deleted, UpdateMetadata (the requests of these steps in one batch), RS = TRS in
        ZooKeeper, the entry leaves `/admin/reassign_partitions`. The topic znode holds ORS until the
        very end, so a new controller can resume.
        """
        ctx = self.context
        # no deletion while a partition moves
        ctx.mark_topics_ineligible_for_deletion({tp.topic for tp in reassignments})
        changed = self._update_current_reassignments(reassignments)
        # The completion watch goes on after A1's write: set before it, it fires on this controller's own
        # write, and that event reads every moving partition's state again for nothing.
        watch_after_start = changed or states is None
        if watch_after_start:
            states = self.zk.get_topic_partition_states(list(reassignments))
            _log_unreadable(states)
        assert states is not None
        complete = {
            tp: assignment
            for tp, assignment in reassignments.items()
            if _is_reassignment_complete(assignment, states.get(tp))
        }
        incomplete = {tp: assignment for tp, assignment in reassignments.items() if tp not in complete}
        if incomplete:
            self._start_reassignments(incomplete, states)
        if complete:
            self._complete_reassignments(complete)
        if incomplete and watch_after_start:
            # what changed since the first read (a target replica that joined the ISR meanwhile) shows here
            self.maybe_complete_reassignments(list(incomplete), self._watch_reassignment_isr(list(incomplete)))

    def _start_reassignments(
        self,
        reassignments: Mapping[TopicPartition, ReplicaAssignment],
        states: Mapping[TopicPartition, PartitionStateRead],
    ) -> None:
        """Phase A. A1 and A2 share one batch: A2 gives each adding replica the entry A1 has just given it
        (same leader epoch, isNew), which a broker holding that epoch ignores. Kafka sends both, in two
        requests; one batch keeps one entry per broker and partition, so each adding replica's broker
        gets one LeaderAndIsr (and every broker one UpdateMetadata) instead of two."""
        batch = self.channel.new_batch()
        sent = self._add_leader_epoch_bumps(reassignments, batch, states)  # A1
        self.replica_state_machine.handle_state_changes(  # A2
            [PartitionReplica(tp, r) for tp, a in reassignments.items() for r in a.adding_replicas],
            ReplicaState.NEW,
            batch,
        )
        self.channel.send(batch)
        self._log_reassignment_requests(reassignments, sent)

    def _complete_reassignments(self, reassignments: Mapping[TopicPartition, ReplicaAssignment]) -> None:
        """Phase B (see `_on_partition_reassignments`)."""
        ctx = self.context
        self.replica_state_machine.handle_state_changes(  # B1
            [PartitionReplica(tp, r) for tp, a in reassignments.items() for r in a.adding_replicas],
            ReplicaState.ONLINE,
        )
        completed = {tp: ReplicaAssignment(a.target_replicas) for tp, a in reassignments.items()}
        for tp, assignment in completed.items():
            ctx.update_partition_full_replica_assignment(tp, assignment)  # B2
        # B3, B4, B5 and B8 share one batch. Kafka sends B3's LeaderAndIsr (the moved leader), B4's (the
        # ISR without the removing replicas: the same partitions to the same target replicas, a later
        # leader epoch), B4's and B5's StopReplica (delete false, then true) and B8's UpdateMetadata (what
        # B4's already carried: B6 and B7 change no leadership) as four rounds of requests. One batch keeps
        # the last entry per broker and partition: each target replica's broker gets one LeaderAndIsr with
        # the final state, each removing replica's one StopReplica with delete, every broker one
        # UpdateMetadata. ZooKeeper is written step by step, as Kafka writes it.
        batch = self.channel.new_batch()
        try:
            resent = self._move_reassigned_partition_leaders_if_required(completed, batch)  # B3
            self._stop_removed_replicas_of_reassigned_partitions(  # B4, B5
                [PartitionReplica(tp, r) for tp, a in reassignments.items() for r in a.removing_replicas], batch
            )
        except ControllerMovedError:
            raise
        except Exception:
            self.channel.send(batch)  # what the steps before the failure decided goes out, as in Kafka
            raise
        batch.add_update_metadata(ctx.live_or_shutting_down_broker_ids, list(completed))  # B8
        self.channel.send(batch)
        self._log_reassignment_requests(completed, resent)
        self._update_replica_assignments(completed)  # B6
        self._remove_partitions_from_reassigning_partitions(completed)  # B7
        # a topic's deletion waits for its last partition to move (`resume_deletion_for_topics`)
        queued = sorted({tp.topic for tp in completed if ctx.is_topic_queued_up_for_deletion(tp.topic)})
        if queued:
            self.topic_deletion.resume_deletion_for_topics(queued)

    def _update_current_reassignments(self, reassignments: Mapping[TopicPartition, ReplicaAssignment]) -> bool:
        """Phase U; True if any assignment changed."""
        ctx = self.context
        current = {tp: ctx.partition_full_replica_assignment(tp) for tp in reassignments}
        changed = {tp: a for tp, a in reassignments.items() if current[tp] != a}
        for tp, assignment in changed.items():
            log.debug("Updating assignment of partition %s from %s to %s", tp, current[tp], assignment)
        if changed:
            self._update_replica_assignments(changed)  # U1
            for tp, assignment in changed.items():
                ctx.update_partition_full_replica_assignment(tp, assignment)  # U2
            self._stop_removed_replicas_of_reassigned_partitions(  # U3
                [
                    PartitionReplica(tp, r)
                    for tp, assignment in changed.items()
                    for r in reassign.unneeded_replicas(current[tp], assignment)
                ]
            )
        ctx.partitions_being_reassigned.update(reassignments)
        return bool(changed)

    def _add_leader_epoch_bumps(
        self,
        reassignments: Mapping[TopicPartition, ReplicaAssignment],
        batch: ControllerBrokerRequestBatch,
        states: Mapping[TopicPartition, PartitionStateRead] | None = None,
    ) -> dict[TopicPartition, LeaderIsrAndControllerEpoch]:
        """Same leader and ISR, next leader epoch, so that the replicas take the new replica set; the
        origin replicas get it as they are, the adding ones with isNew (they may start on any log dir).
        Returns the states written (`states`: just read, saves reading them again)."""
        updated = self._update_leader_epochs(list(reassignments), states)
        for tp, assignment in reassignments.items():
            state = updated.get(tp)
            if state is not None:
                batch.add_leader_and_isr(assignment.original_replicas, tp, state, assignment, is_new=False)
                batch.add_leader_and_isr(assignment.adding_replicas, tp, state, assignment, is_new=True)
        return updated

    def _log_reassignment_requests(
        self,
        reassignments: Mapping[TopicPartition, ReplicaAssignment],
        sent: Mapping[TopicPartition, LeaderIsrAndControllerEpoch],
    ) -> None:
        for tp, assignment in reassignments.items():
            state = sent.get(tp)
            if state is None:
                self.sink.write(self.log.reassignment_request_failed(tp, assignment))
            else:
                self.sink.write(self.log.reassignment_request_sent(tp, state, assignment))

    def _update_leader_epochs(
        self,
        partitions: Sequence[TopicPartition],
        states: Mapping[TopicPartition, PartitionStateRead] | None = None,
    ) -> dict[TopicPartition, LeaderIsrAndControllerEpoch]:
        """Kafka's `updateLeaderEpoch` for many partitions: read the state znodes (or take `states`, just
        read), write them back with the next leader epoch (conditionally, in one pipelined round; a
        leader's ISR write in between means read that one again). A partition whose state znode went away
        is left out. Raises if a state znode is missing or malformed at the first read, or was written by a
        newer controller."""
        ctx = self.context
        updated: dict[TopicPartition, LeaderIsrAndControllerEpoch] = {}
        remaining = list(partitions)
        fresh = False
        while remaining:
            if states is not None:
                current, states = states, None
            else:
                current = self.zk.get_topic_partition_states(remaining, fresh=fresh)
            fresh = True  # after a BADVERSION, read on the session that writes
            writes: list[tuple[TopicPartition, LeaderAndIsr]] = []
            for tp in remaining:
                state = current[tp]
                if isinstance(state, MalformedZNodeError):
                    raise state
                if state is None:
                    raise KafkaOpsError(
                        f"Cannot update leader epoch for partition {tp} as leaderAndIsr path is empty. This could "
                        "mean we somehow tried to reassign a partition that doesn't exist"
                    )
                if state.controller_epoch > ctx.epoch:
                    raise KafkaOpsError(
                        "Leader and isr path written by another controller. This probably means the current "
                        f"controller with epoch {ctx.epoch} went through a soft failure and another controller was "
                        f"elected with epoch {state.controller_epoch}. Aborting state change by this controller"
                    )
                writes.append((tp, state.leader_and_isr.new_epoch()))
            written = self.zk.update_leader_and_isr(writes, ctx.epoch, ctx.epoch_zk_version)
            remaining = written.partitions_to_retry
            for tp, _ in writes:
                outcome = written.finished.get(tp)
                if outcome is None or isinstance(outcome, NoNodeError):
                    continue
                if isinstance(outcome, Exception):
                    raise KafkaOpsError(f"Failed to update the leader epoch of partition {tp}: {outcome!r}")
                state = LeaderIsrAndControllerEpoch(outcome, ctx.epoch)
                ctx.put_partition_leadership_info(tp, state)
                updated[tp] = state
                log.info(
                    "Updated leader epoch for partition %s to %s, zkVersion=%s",
                    tp,
                    state.leader_and_isr.leader_epoch,
                    state.leader_and_isr.zk_version,
                )
        return updated

    def _move_reassigned_partition_leaders_if_required(
        self, completed: Mapping[TopicPartition, ReplicaAssignment], batch: ControllerBrokerRequestBatch
    ) -> dict[TopicPartition, LeaderIsrAndControllerEpoch]:
        """B3 into `batch`; returns the states of the partitions whose leader stays (their epoch bumped),
        for the caller to log once the batch is sent."""
        ctx = self.context
        resend: dict[TopicPartition, ReplicaAssignment] = {}
        elect: list[TopicPartition] = []
        for tp, assignment in completed.items():
            info = ctx.partition_leadership_info(tp)
            leader = info.leader_and_isr.leader if info is not None else NO_LEADER
            move = reassign.leader_move(assignment, leader, ctx.is_replica_online(leader, tp))
            log.info(move.message(leader, tp, assignment.replicas))
            if move is reassign.LeaderMove.RESEND:
                resend[tp] = assignment
            else:
                elect.append(tp)
        resent = self._add_leader_epoch_bumps(resend, batch) if resend else {}
        if elect:
            self.partition_state_machine.handle_state_changes(elect, PartitionState.ONLINE, REASSIGN_ELECTION, batch)
        return resent

    def _stop_removed_replicas_of_reassigned_partitions(
        self, replicas: Sequence[PartitionReplica], batch: ControllerBrokerRequestBatch | None = None
    ) -> None:
        """Offline (out of the ISR, StopReplica) → DeletionStarted (StopReplica delete=true) →
        DeletionSuccessful → NonExistent: as Kafka, without waiting for the deletion's answer."""
        if not replicas:
            return
        for target in (
            ReplicaState.OFFLINE,
            ReplicaState.DELETION_STARTED,
            ReplicaState.DELETION_SUCCESSFUL,
            ReplicaState.NON_EXISTENT,
        ):
            self.replica_state_machine.handle_state_changes(replicas, target, batch)

    def _update_replica_assignments(self, assignments: Mapping[TopicPartition, ReplicaAssignment]) -> None:
        """Write these partitions' assignments into their `/brokers/topics/<t>` znodes (fenced): one
        conditional write per topic, all in one pipelined round. Kafka rewrites each node from its memory
        once per partition; this reads it and writes it back conditionally, so that partitions added to a
        topic meanwhile are not lost (a lost race re-reads that topic)."""
        ctx = self.context
        by_topic: dict[str, dict[int, ReplicaAssignment]] = defaultdict(dict)
        for tp, assignment in assignments.items():
            by_topic[tp.topic][tp.partition] = assignment
        remaining = sorted(by_topic)
        while remaining:
            found = self.zk.get_topic_znodes(remaining)
            writes: list[TopicAssignmentWrite] = []
            for topic in remaining:
                entry = found[topic]
                if entry is None:
                    first = min(by_topic[topic])
                    raise KafkaOpsError(
                        f"Failed to update assignment for {TopicPartition(topic, first)} since the topic has no "
                        "current assignment"
                    )
                current, version = entry
                if isinstance(current, MalformedZNodeError):
                    raise current
                partitions = {**current.partitions, **by_topic[topic]}
                topic_id = current.topic_id or ctx.topic_ids.get(topic)
                writes.append(TopicAssignmentWrite(topic, partitions, topic_id, version))
            outcomes = self.zk.set_topic_assignments(writes, ctx.epoch_zk_version)
            remaining = []
            for write, outcome in zip(writes, outcomes, strict=True):
                if isinstance(outcome, BadVersionError):
                    remaining.append(write.topic)
                    continue
                if outcome is not None:
                    raise KafkaOpsError(f"Failed to update the assignment of topic {write.topic}: {outcome!r}")
                for partition, assignment in sorted(by_topic[write.topic].items()):
                    log.info(
                        "Successfully updated assignment of partition %s to %s",
                        TopicPartition(write.topic, partition),
                        assignment,
                    )

    # --- /admin/reassign_partitions --------------------------------------------------------------------

    def _remove_partitions_from_reassigning_partitions(
        self, completed: Mapping[TopicPartition, ReplicaAssignment]
    ) -> None:
        ctx = self.context
        for tp in completed:
            if tp not in ctx.partitions_being_reassigned:
                raise KafkaOpsError("Cannot remove a reassigning partition because it is not present in memory")
        self._remove_from_zk_reassignment(reassign.completed_entries(completed))
        ctx.partitions_being_reassigned.difference_update(completed)

    def _remove_from_zk_reassignment(self, remove: Callable[[TopicPartition, tuple[int, ...]], bool]) -> None:
        """`maybeRemoveFromZkReassignment`: rewrite `/admin/reassign_partitions` without the entries
        `remove` picks, or delete it when none is left. Conditional on the version read: an operator's
        write in between is re-read, not overwritten (Kafka writes over it)."""
        while True:
            found = self.zk.get_partition_reassignment()
            if found is None:
                return
            requested, version = found
            if isinstance(requested, MalformedZNodeError):
                log.warning("Ignoring partition reassignment due to invalid json: %s", requested)
                requested = {}
            kept, removed = reassign.remaining_entries(requested, remove)
            if requested and not removed:
                return
            log.info(
                "Removing partitions %s from the list of reassigned partitions in zookeeper",
                ",".join(str(tp) for tp in removed),
            )
            if self._write_zk_reassignment(kept, version):
                return

    def _write_zk_reassignment(self, kept: dict[TopicPartition, tuple[int, ...]], version: int) -> bool:
        """Replace (or, with nothing left, delete) the znode if it still has `version`; False if it moved."""
        path = znodes.ReassignPartitionsZNode.path()
        if not kept:
            log.info("No more partitions need to be reassigned. Deleting zk path %s", path)
        outcome = self.zk.set_or_delete_partition_reassignment(kept, version, self.context.epoch_zk_version)
        if isinstance(outcome, BadVersionError):
            return False
        if outcome is not None and not isinstance(outcome, NoNodeError):
            raise KafkaOpsError(f"Could not update {path}: {outcome!r}")
        return True

    # --- completion ----------------------------------------------------------------------------------

    def process_partition_reassignment_isr_change(self) -> None:
        """A PartitionReassignmentIsrChange event: the partitions whose state changed since the last one."""
        with self._isr_watch_lock:
            changed, self._isr_changed = self._isr_changed, set()
        self.maybe_complete_reassignments(changed)

    def maybe_complete_reassignments(
        self,
        partitions: Iterable[TopicPartition],
        states: Mapping[TopicPartition, PartitionStateRead] | None = None,
    ) -> None:
        """Complete those of `partitions` still moving whose target replicas are all in the ISR now. Without
        `states` (just read by the caller), reads them and watches them again."""
        ctx = self.context
        moving = sorted(tp for tp in partitions if tp in ctx.partitions_being_reassigned)
        if not moving:
            return
        if states is None:
            states = self._watch_reassignment_isr(moving)
        complete: dict[TopicPartition, ReplicaAssignment] = {}
        for tp in moving:
            assignment = ctx.partition_full_replica_assignment(tp)
            if _is_reassignment_complete(assignment, states.get(tp)):
                log.info(
                    "Target replicas %s have all caught up with the leader for reassigning partition %s",
                    reassign.scala_list(assignment.target_replicas),
                    tp,
                )
                complete[tp] = assignment
        self.trigger_reassignments(complete, states)

    def _watch_reassignment_isr(self, partitions: Sequence[TopicPartition]) -> dict[TopicPartition, PartitionStateRead]:
        """Kafka's `PartitionReassignmentIsrChangeHandler` (IBP < 2.7): the leaders here write ISR changes
        to the state znode, so its changes tell when the target replicas have caught up, without the
        5 s batching of ISR change notifications. Reads the state znodes with a one-shot watch on each
        (pipelined) and returns them; each watch that fires queues its partition for
        `maybe_complete_reassignments`, which watches again while the partition moves. A watch left on a
        partition that finished or whose controller resigned fires once into nothing."""
        states = self.zk.watch_topic_partition_states(partitions, self._on_isr_watch)
        _log_unreadable(states)
        return states

    def _on_isr_watch(self, tp: TopicPartition) -> None:
        """On kazoo's thread: one event for any number of partitions whose watch fires before it runs."""
        with self._isr_watch_lock:
            first = not self._isr_changed
            self._isr_changed.add(tp)
        if first:
            self._on_isr_change()


def _is_reassignment_complete(assignment: ReplicaAssignment, state: PartitionStateRead) -> bool:
    if isinstance(state, MalformedZNodeError):
        return not assignment.is_being_reassigned
    return reassign.is_reassignment_complete(assignment, state.leader_and_isr.isr if state else None)


def _log_unreadable(states: Mapping[TopicPartition, PartitionStateRead]) -> None:
    for tp, state in states.items():
        if isinstance(state, MalformedZNodeError):
            log.error("Unreadable state of %s: %s", tp, state)
