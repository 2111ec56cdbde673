"""One partition on this broker, leader or follower (Kafka 2.8's `Partition`, ZooKeeper ISR path).

It joins the partition's log with what the controller said (leader, leader epoch, ISR, replicas,
zk_version) and, as leader, what it knows of each follower. The ISR and high-watermark decisions are
the pure rules of `isr.py`; this class applies them and reports what changed, and the replica manager
does the I/O: it writes ISR changes to ZooKeeper (conditionally on `zk_version`), wakes parked
produces and fetches, and starts or stops fetchers.

Owned by the replica manager and touched only on its event loop, so it has no lock of its own (the
log has one, for the flush and checkpoint threads).

While an ISR change is being written, the high watermark counts the union of the current and the
proposed ISR (Kafka's "maximal ISR"): a follower being added may be elected once the write lands, so
nothing it lacks may be acknowledged, and a follower being removed still counts until it is gone.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass

from kafkaops.cluster.broker import isr as rules
from kafkaops.cluster.broker.producer_state import BatchMetadata, ProducerStateManager
from kafkaops.cluster.common.errors import (
    LogDirFailureError,
    NotEnoughReplicasError,
    NotLeaderOrFollowerError,
    OffsetOutOfRangeError,
    PolicyViolationError,
    UnexpectedAppendOffsetError,
)
from kafkaops.cluster.log import Log, LogAppendInfo
from kafkaops.cluster.protocol.records import BatchHeader, iter_batches
from kafkaops.cluster.state_change_log import LeaderAndIsrPartitionState
from kafkaops.cluster.zk.values import LeaderAndIsr, TopicPartition

HIGH_WATERMARK = -1
"""DeleteRecords' offset meaning "up to the high watermark" (Kafka's `DeleteRecordsRequest.HIGH_WATERMARK`)."""


@dataclass(frozen=True, slots=True)
class LeaderAppend:
    """Where a producer's batch landed (or, for a retried duplicate, had landed)."""

    first_offset: int
    last_offset: int
    log_start_offset: int
    duplicate: bool = False


class Partition:
    def __init__(self, tp: TopicPartition, broker_id: int, log: Log) -> None:
        self.tp = tp
        self.broker_id = broker_id
        self.log = log
        self.leader = -1
        self.leader_epoch = -1
        self.controller_epoch = 0
        self.isr: tuple[int, ...] = ()
        self.replicas: tuple[int, ...] = ()
        self.adding_replicas: tuple[int, ...] = ()
        self.removing_replicas: tuple[int, ...] = ()
        self.zk_version = 0
        self.leader_epoch_start_offset = -1
        self.followers: dict[int, rules.FollowerState] = {}
        self.pending_isr: tuple[int, ...] | None = None
        self.producers = ProducerStateManager()
        self.producers.rebuild(log.batch_headers())
        self.future_log: Log | None = None
        """The copy growing in another log dir while AlterReplicaLogDirs moves this replica (Kafka's
        `futureLog`), filled by replica_alter_log_dirs.py and swapped in once it has caught up."""

    def __repr__(self) -> str:
        role = "leader" if self.is_leader else f"follower of {self.leader}"
        return f"Partition({self.tp}, {role}, epoch {self.leader_epoch}, isr {self.isr})"

    @property
    def is_leader(self) -> bool:
        return self.leader == self.broker_id

    @property
    def high_watermark(self) -> int:
        return self.log.high_watermark

    @property
    def log_end_offset(self) -> int:
        return self.log.log_end_offset

    def leader_and_isr(self) -> LeaderAndIsr:
        return LeaderAndIsr(self.leader, self.leader_epoch, self.isr, self.zk_version)

    # --- roles -----------------------------------------------------------------------------------------

    def _take_state(self, state: LeaderAndIsrPartitionState) -> None:
        self.leader = state.leader
        self.leader_epoch = state.leader_epoch
        self.controller_epoch = state.controller_epoch
        self.isr = state.isr
        self.replicas = state.replicas
        self.adding_replicas = state.adding_replicas
        self.removing_replicas = state.removing_replicas
        self.zk_version = state.zk_version
        self.pending_isr = None

    def make_leader(self, state: LeaderAndIsrPartitionState, now_ms: int) -> None:
        """Kafka's `makeLeader`: open the new epoch at our LEO, reset the followers' lag clocks; our HW
        stays until the followers report (it may move at once when the ISR is just us)."""
        self._take_state(state)
        leo = self.log.log_end_offset
        self.log.assign_epoch_start_offset(self.leader_epoch, leo)
        self.leader_epoch_start_offset = leo
        self.followers = rules.reset_followers_on_become_leader(
            self.replicas, self.broker_id, set(self.isr), leader_log_end_offset=leo, now_ms=now_ms
        )
        self.maybe_increment_high_watermark()

    def make_follower(self, state: LeaderAndIsrPartitionState) -> None:
        self._take_state(state)
        self.followers = {}
        self.leader_epoch_start_offset = -1

    def stop_leading(self) -> None:
        """A StopReplica without deletion: we keep the log but are no longer anyone's leader."""
        if self.is_leader:
            self.leader = -1
        self.followers = {}

    # --- leader: appends -------------------------------------------------------------------------------

    def append_as_leader(self, records: memoryview, header: BatchHeader, acks: int, min_insync: int) -> LeaderAppend:
        """`appendRecordsToLeader`. Raises NotLeaderOrFollowerError, NotEnoughReplicasError (acks=all
        with the ISR below `min.insync.replicas`, nothing appended) and the log's errors."""
        if not self.is_leader:
            raise NotLeaderOrFollowerError(f"Leader not local for partition {self.tp} on broker {self.broker_id}")
        if acks == -1 and len(self.isr) < min_insync:
            raise NotEnoughReplicasError(
                f"The size of the current ISR {set(self.isr)} is insufficient to satisfy the min.isr requirement "
                f"of {min_insync} for partition {self.tp}"
            )
        duplicate: BatchMetadata | None = self.producers.find_duplicate(header)
        if duplicate is not None:
            return LeaderAppend(duplicate.first_offset, duplicate.last_offset, self.log.log_start_offset, True)
        info: LogAppendInfo = self.log.append_as_leader(records, self.leader_epoch)
        if header.is_idempotent:
            self.producers.update(header.replace(base_offset=info.first_offset))
        return LeaderAppend(info.first_offset, info.last_offset, info.log_start_offset)

    def enough_replicas_reached(self, required_offset: int, min_insync: int) -> bool | None:
        """Kafka's `checkEnoughReplicasReachOffset` for acks=all: None while the HW is below the offset,
        else whether the ISR still has `min.insync.replicas` members."""
        if self.high_watermark < required_offset:
            return None
        return len(self.isr) >= min_insync

    # --- leader: followers' fetches and the ISR --------------------------------------------------------

    def follower_fetched(
        self, replica_id: int, fetch_offset: int, now_ms: int, log_start_offset: int | None = None
    ) -> tuple[int, ...] | None:
        """`updateFollowerFetchState`: record the follower's position (and log start offset); returns the
        ISR to write if it may join (`maybeExpandIsr`), else None. The caller then calls
        `maybe_increment_high_watermark`."""
        state = self.followers.get(replica_id) or rules.FollowerState(replica_id)
        state = rules.follower_fetched(
            state,
            fetch_offset=fetch_offset,
            leader_log_end_offset=self.log.log_end_offset,
            fetch_time_ms=now_ms,
            log_start_offset=log_start_offset,
        )
        self.followers[replica_id] = state
        return self.isr_to_expand()

    def follower_fetched_at_end(
        self, replica_id: int, fetch_offset: int, now_ms: int, log_start_offset: int | None = None
    ) -> bool:
        """Record a fetch that moves nothing but the follower's clocks, and say so: an ISR follower asking
        again at the leader's end offset, where it asked last time, with the same log start offset (most
        fetches of a follower session: its idle partitions, every fetch). Nothing else can follow from it,
        so the caller skips the rest of `follower_fetched`'s work: no ISR expansion (it is in), no high
        watermark move (no LEO moved), no low watermark move. False, nothing recorded, for any other fetch."""
        state = self.followers.get(replica_id)
        if (
            state is None
            or fetch_offset != state.log_end_offset
            or fetch_offset != self.log.log_end_offset
            or replica_id not in self.isr
            or (log_start_offset is not None and log_start_offset != state.log_start_offset)
        ):
            return False
        self.followers[replica_id] = rules.follower_fetched(
            state, fetch_offset=fetch_offset, leader_log_end_offset=fetch_offset, fetch_time_ms=now_ms
        )
        return True

    def isr_to_expand(self) -> tuple[int, ...] | None:
        """`maybeExpandIsr` over every follower at once: the ISR with each follower that may join now
        appended (in replica order), or None if none may or a change is in flight. Kafka adds the fetching
        follower only; taking the others whose last fetch already qualified them saves a write (and a
        fetch round) per follower when many catch up together, as after a reassignment starts."""
        if not self.is_leader or self.pending_isr is not None:
            return None
        isr = self.isr
        for replica_id in self.replicas:
            state = self.followers.get(replica_id)
            if state is not None and rules.may_join_isr(
                state,
                isr=isr,
                replicas=self.replicas,
                high_watermark=self.high_watermark,
                leader_epoch_start_offset=self.leader_epoch_start_offset,
            ):
                isr = rules.expand_isr(isr, replica_id)
        return isr if isr != self.isr else None

    def isr_to_shrink(self, now_ms: int, max_lag_ms: int) -> tuple[int, ...] | None:
        """`maybeShrinkIsr`: the ISR without followers lagging more than `replica.lag.time.max.ms`."""
        if not self.is_leader or self.pending_isr is not None:
            return None
        out = rules.out_of_sync_replicas(
            self.isr,
            self.broker_id,
            self.followers,
            leader_log_end_offset=self.log.log_end_offset,
            now_ms=now_ms,
            max_lag_ms=max_lag_ms,
        )
        return rules.shrink_isr(self.isr, out) if out else None

    def isr_written(self, isr: tuple[int, ...], zk_version: int) -> None:
        self.isr = isr
        self.zk_version = zk_version
        self.pending_isr = None

    def maybe_increment_high_watermark(self) -> bool:
        """HW := min LEO over the (maximal) ISR; returns whether it moved."""
        if not self.is_leader:
            return False
        members = self.isr if self.pending_isr is None else tuple({*self.isr, *self.pending_isr})
        current = self.log.high_watermark
        target = rules.high_watermark(
            current,
            leader=self.broker_id,
            leader_log_end_offset=self.log.log_end_offset,
            isr=members,
            followers=self.followers,
        )
        return target > current and self.log.update_high_watermark(target) > current

    # --- leader: DeleteRecords -------------------------------------------------------------------------

    def delete_records_on_leader(self, offset: int) -> int:
        """Kafka's `deleteRecordsOnLeader`: move the log start offset up to `offset` (-1: the high
        watermark); returns the offset asked for. Raises NotLeaderOrFollowerError, PolicyViolationError
        (`cleanup.policy` without delete), OffsetOutOfRangeError (negative, or past the high watermark)."""
        if not self.is_leader:
            raise NotLeaderOrFollowerError(f"Leader not local for partition {self.tp} on broker {self.broker_id}")
        if not self.log.config.delete_enabled:
            raise PolicyViolationError(
                f"Records of partition {self.tp} can not be deleted due to the configured policy"
            )
        requested = self.log.high_watermark if offset == HIGH_WATERMARK else offset
        if requested < 0:
            raise OffsetOutOfRangeError(f"The offset {requested} for partition {self.tp} is not valid")
        self.log.maybe_increment_log_start_offset(requested)
        return requested

    def low_watermark(self, alive: Callable[[int], bool]) -> int:
        """Kafka's `lowWatermarkIfLeader` (see isr.low_watermark). Raises NotLeaderOrFollowerError."""
        if not self.is_leader:
            raise NotLeaderOrFollowerError(f"Leader not local for partition {self.tp} on broker {self.broker_id}")
        future = self.future_log
        return rules.low_watermark(
            self.log.log_start_offset,
            self.followers,
            alive=alive,
            future_log_start_offset=future.log_start_offset if future is not None else None,
        )

    # --- follower --------------------------------------------------------------------------------------

    def append_as_follower(self, records: bytes, leader_high_watermark: int, leader_log_start_offset: int) -> int:
        """Append the leader's batches byte for byte, then follow its HW (never past our LEO) and log start
        offset. Returns the number of bytes appended."""
        log = self.log
        if not records and leader_log_start_offset <= log.log_start_offset:
            # an idle round (most of a follower's partitions, twice a second): only the HW may move
            if leader_high_watermark > log.high_watermark and log.high_watermark < log.log_end_offset:
                log.update_high_watermark(leader_high_watermark)
            return 0
        info = append_as_follower(self.log, records)
        if info.batch_count:
            for batch in iter_batches(records, allow_truncated_tail=True, verify_crc=False):
                if batch.header.base_offset >= info.first_offset:
                    self.producers.update(batch.header)
        self.log.update_high_watermark(min(leader_high_watermark, self.log.log_end_offset))
        if leader_log_start_offset > self.log.log_start_offset:
            self.log.maybe_increment_log_start_offset(min(leader_log_start_offset, self.log.high_watermark))
        return info.valid_bytes

    def truncate_to(self, offset: int) -> None:
        """Truncate the log, and the future log with it: it is a copy of the log's first batches."""
        if self.log.truncate_to(offset):
            self.producers.rebuild(self.log.batch_headers())
        if self.future_log is not None:
            with contextlib.suppress(LogDirFailureError):  # its dir failed: the move is over, not this replica
                self.future_log.truncate_to(offset)

    def truncate_fully_and_start_at(self, offset: int) -> None:
        self.log.truncate_fully_and_start_at(offset)
        self.producers.rebuild(())
        if self.future_log is not None:
            with contextlib.suppress(LogDirFailureError):
                self.future_log.truncate_fully_and_start_at(offset)


def append_as_follower(log: Log, records: bytes) -> LogAppendInfo:
    """`log.append_as_follower`, and Kafka's way out when the first batch straddles the end of an empty log
    (a log started at a leader's log start offset that a DeleteRecords put inside a batch): the log then
    starts again at that batch's base offset, and the caller raises its log start offset back."""
    try:
        return log.append_as_follower(records)
    except UnexpectedAppendOffsetError as error:
        end = log.log_end_offset
        first = next(iter_batches(records, allow_truncated_tail=True, verify_crc=False)).header
        if end != log.log_start_offset or not first.base_offset < end <= first.last_offset:
            raise
        log.truncate_fully_and_start_at(error.first_offset)
        return log.append_as_follower(records)
