"""Moving replicas between this broker's log dirs (KIP-113; Kafka's `ReplicaAlterLogDirsManager` and
`ReplicaAlterLogDirsThread`).

AlterReplicaLogDirs gives a partition a future log in the target dir (LogManager.get_or_create_future_log);
this mover fills it from the partition's current log, batch for batch and byte for byte (same offsets, same
leader epochs, so the epoch cache is rebuilt the same way), follows the current log's high watermark and log
start offset, and once the future log has caught up swaps it in (LogManager.replace_current_with_future_log)
and deletes the old dir. Kafka's thread fetches from the local replica manager as replica -3; reading the
current log directly is the same data without the request round trip.

The current log may be truncated meanwhile (this broker follows a new leader): Partition.truncate_to cuts
the future log at the same offset, and a future log found on disk at startup is first reconciled with the
current log by their leader epochs, as a follower with its leader (replica_fetcher.truncation_offset).

Threads: one asyncio task on the broker's event loop, like the replica fetchers, so that the last copy
and the swap happen with no append in between (appends run on the loop too). A step copies at most
`max_bytes` of one partition, then the task yields to the loop. The broker's dynamic config
`replica.alter.log.dirs.io.max.bytes.per.second` throttles the copying as Kafka's thread does: no copy
while the rate measured over the quota window is above it.
"""

from __future__ import annotations

import asyncio
import enum
import logging
import os
import time
from collections.abc import Callable, Mapping, Set
from pathlib import Path

from kafkaops.cluster.broker.partition import Partition, append_as_follower
from kafkaops.cluster.broker.quota import ReplicationQuota
from kafkaops.cluster.broker.replica_fetcher import truncation_offset
from kafkaops.cluster.broker.responses import LogDirDescription, ReplicaDescription
from kafkaops.cluster.common import errors
from kafkaops.cluster.common.errors import BrokerError, LogDirFailureError, LogError
from kafkaops.cluster.log import UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET, Log, LogManager, remove_log_dir
from kafkaops.cluster.zk.values import TopicPartition

log = logging.getLogger("kafkaops.broker.alter_log_dirs")

NONE = errors.NONE
KAFKA_STORAGE_ERROR = errors.KafkaStorageError.code

MAX_BYTES_PER_STEP = 1 << 20
IDLE_BACKOFF_S = 0.05
"""How long the mover waits when no partition had anything to copy (their current logs are idle, but a
producer may append any moment)."""


class Step(enum.Enum):
    IDLE = "idle"
    COPIED = "copied"
    SWAPPED = "swapped"


def reconcile(current: Log, future: Log) -> None:
    """Cut the future log where it stops being a prefix of the current one (a restart after the current
    log was truncated but not its copy): by leader epochs, then by length."""
    for _ in range(8):  # each round goes back at least one epoch
        epoch = future.latest_epoch
        if epoch is None:
            break
        current_epoch, end = current.end_offset_for_epoch(epoch)
        offset, done = truncation_offset(
            leader_epoch=current_epoch,
            leader_end_offset=end,
            follower_end_for_epoch=future.end_offset_for_epoch(current_epoch)
            if current_epoch != UNDEFINED_EPOCH
            else (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET),
            follower_log_end_offset=future.log_end_offset,
            high_watermark=future.high_watermark,
        )
        if offset < future.log_end_offset:
            future.truncate_to(offset)
        if done:
            break
    if future.log_end_offset > current.log_end_offset:
        future.truncate_to(current.log_end_offset)


def copy_step(current: Log, future: Log, max_bytes: int) -> int:
    """Copy the current log's next batches (at most about `max_bytes`) to the future log and let it follow
    the current log's high watermark and log start offset; returns the bytes copied."""
    if future.log_end_offset > current.log_end_offset:  # never, while truncations cut both: but cheap to mend
        future.truncate_to(current.log_end_offset)
    if future.log_end_offset < current.log_start_offset:
        future.truncate_fully_and_start_at(current.log_start_offset)
    copied = 0
    if future.log_end_offset < current.log_end_offset:
        records = current.read(future.log_end_offset, max_bytes).records
        if records:
            copied = append_as_follower(future, records).valid_bytes
    future.update_high_watermark(current.high_watermark)
    if current.log_start_offset > future.log_start_offset:
        future.maybe_increment_log_start_offset(min(current.log_start_offset, future.high_watermark))
    return copied


class ReplicaAlterLogDirsManager:
    """Serves AlterReplicaLogDirs and DescribeLogDirs for the replica manager, whose `partitions` (those hosted
    here) it reads, with `unknown_code(tp)` the error for one not hosted; and moves the partitions given to
    it. `swapped(tp)` hears of each completed move (the old dir, renamed `...-delete`, is deleted here, off
    the loop)."""

    def __init__(
        self,
        log_manager: LogManager,
        partitions: Mapping[TopicPartition, Partition],
        unknown_code: Callable[[TopicPartition], int],
        *,
        max_bytes: int = MAX_BYTES_PER_STEP,
        swapped: Callable[[TopicPartition], None] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.log_manager = log_manager
        self.hosted = partitions
        """The replica manager's partitions (read only here)."""
        self._unknown_code = unknown_code
        self.max_bytes = max_bytes
        self._moving: dict[TopicPartition, Partition] = {}
        self._swapped = swapped
        self._clock = clock
        self.quota = ReplicationQuota()
        """`replica.alter.log.dirs.io.max.bytes.per.second` (unlimited unless the broker's config sets it)."""
        self._task: asyncio.Task[None] | None = None
        self._changed = asyncio.Event()

    def __repr__(self) -> str:
        return f"ReplicaAlterLogDirsManager({len(self._moving)} moving)"

    # --- membership (on the loop) ----------------------------------------------------------------------

    def add_partition(self, partition: Partition) -> None:
        """Start (or resume, after a restart) moving `partition` into its future log."""
        future = partition.future_log
        if future is None:
            raise ValueError(f"{partition.tp} has no future log to move into")
        reconcile(partition.log, future)
        self._moving[partition.tp] = partition
        self._changed.set()
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name=repr(self))

    def remove_partition(self, tp: TopicPartition) -> None:
        self._moving.pop(tp, None)

    def moving(self, tp: TopicPartition) -> bool:
        return tp in self._moving

    async def shutdown(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.wait({self._task}, timeout=5)
            self._task = None

    # --- the loop --------------------------------------------------------------------------------------

    async def _run(self) -> None:
        while True:
            if not self._moving:
                self._changed.clear()
                await self._changed.wait()
                continue
            if self.quota.exceeded(self._clock()):
                await asyncio.sleep(IDLE_BACKOFF_S)
                continue
            busy = False
            for tp, partition in list(self._moving.items()):
                if self._moving.get(tp) is not partition:
                    continue  # removed or replaced during this round
                step = self._step(partition)
                busy |= step is not Step.IDLE
                await asyncio.sleep(0)  # one partition's chunk at a time: requests go on meanwhile
            if not busy:
                await asyncio.sleep(IDLE_BACKOFF_S)

    def _step(self, partition: Partition) -> Step:
        tp, future = partition.tp, partition.future_log
        if future is None:
            self._moving.pop(tp, None)
            return Step.IDLE
        try:
            copied = copy_step(partition.log, future, self.max_bytes)
            self.quota.record(copied, self._clock())
            if future.log_end_offset != partition.log.log_end_offset:
                return Step.COPIED if copied else Step.IDLE
            self._swap(partition, future)
            return Step.SWAPPED
        except LogDirFailureError as error:
            # Kafka stops moving a replica whose current or future dir failed; the dir's failure handling
            # (ReplicaManager.handle_log_dir_failure) does the rest.
            log.error("Stopped moving %s to another log dir: %s", tp, error)
            self._moving.pop(tp, None)
            return Step.IDLE
        except Exception:  # noqa: BLE001 - one partition's trouble must not stop the other moves
            log.exception("Moving %s to another log dir failed; will retry", tp)
            return Step.IDLE

    def _swap(self, partition: Partition, future: Log) -> None:
        """Kafka's `maybeReplaceCurrentWithFutureReplica`: on the loop, with no await since the last copy,
        so the two logs end at the same offset."""
        tp = partition.tp
        doomed = self.log_manager.replace_current_with_future_log(tp.topic, tp.partition)
        partition.log, partition.future_log = future, None
        self._moving.pop(tp, None)
        log.info("Moved %s to log dir %s", tp, future.parent_dir)
        asyncio.get_running_loop().run_in_executor(None, _delete_dir, doomed)
        if self._swapped is not None:
            self._swapped(tp)

    # --- AlterReplicaLogDirs and DescribeLogDirs -------------------------------------------------------

    def alter_replica_log_dirs(self, partition_dirs: Mapping[TopicPartition, str]) -> dict[TopicPartition, int]:
        """Kafka's `alterReplicaLogDirs`: per partition, start moving its replica to the named log dir (a
        future log there, which this manager fills), or remember the dir for when the partition is
        created here (answered REPLICA_NOT_AVAILABLE meanwhile); a move to another dir replaces the one in
        progress, a move back to the current dir cancels it. Returns an error code per partition:
        LOG_DIR_NOT_FOUND, KAFKA_STORAGE_ERROR, REPLICA_NOT_AVAILABLE, UNKNOWN_TOPIC_OR_PARTITION,
        INVALID_TOPIC_EXCEPTION (a name too long for a future dir)."""
        results: dict[TopicPartition, int] = {}
        for tp, destination in partition_dirs.items():
            try:
                self._alter_replica_log_dir(tp, destination)
                results[tp] = NONE
            except errors.NotLeaderOrFollowerError:
                results[tp] = errors.ReplicaNotAvailableError.code  # kept from older versions, as Kafka
            except BrokerError as error:
                log.warning("Unable to alter log dirs for %s: %s", tp, error)
                results[tp] = error.code
            except (LogDirFailureError, LogError) as error:
                log.warning("Unable to alter log dirs for %s: %s", tp, error)
                results[tp] = KAFKA_STORAGE_ERROR
        return results

    def _alter_replica_log_dir(self, tp: TopicPartition, destination: str) -> None:
        if len(f"{tp.topic}-{tp.partition}.{'0' * 32}-future") > 255:
            raise errors.InvalidTopicError("The topic name is too long.")
        directory = self.log_manager.log_dir(destination)  # LogDirNotFoundError
        if directory in self.log_manager.offline_dirs:
            raise errors.KafkaStorageError(f"Log directory {destination} is offline")
        partition = self.hosted.get(tp)
        if partition is not None and partition.log.offline:
            raise errors.KafkaStorageError(f"Partition {tp} is offline")
        if partition is not None and partition.future_log is not None and partition.future_log.parent_dir != directory:
            self.remove_partition(tp)
            partition.future_log = None
            self.log_manager.remove_future_log(tp.topic, tp.partition)
        self.log_manager.maybe_update_preferred_log_dir(tp.topic, tp.partition, directory)
        if partition is None:
            raise errors.from_code(self._unknown_code(tp), f"Error while fetching partition state for {tp}")
        if partition.log.parent_dir == directory or partition.future_log is not None:
            return
        if self.log_manager.offline_dirs:
            raise errors.KafkaStorageError(
                f"Can not create log for {tp} because log directories "
                f"{','.join(map(str, sorted(self.log_manager.offline_dirs)))} are offline"
            )
        partition.future_log = self.log_manager.get_or_create_future_log(tp.topic, tp.partition)
        self.add_partition(partition)

    def describe_log_dirs(self, partitions: Set[TopicPartition] | None) -> list[LogDirDescription]:
        """Kafka's `describeLogDirs`: every configured log dir (absolute path) with its error and, for the
        partitions asked for (None: all), each current and future log's size and offset lag."""
        descriptions = []
        for directory, logs in self.log_manager.logs_by_dir().items():
            path = os.path.abspath(directory)
            if directory in self.log_manager.offline_dirs:
                descriptions.append(LogDirDescription(path, KAFKA_STORAGE_ERROR, {}))
                continue
            topics: dict[str, list[ReplicaDescription]] = {}
            for entry in logs:
                replicas = topics.setdefault(entry.topic, [])
                tp = TopicPartition(entry.topic, entry.partition)
                if partitions is not None and tp not in partitions:
                    continue
                try:
                    size = entry.size_in_bytes
                except LogDirFailureError:
                    continue
                lag = self._offset_lag(tp, entry.log_end_offset, entry.is_future)
                replicas.append(ReplicaDescription(entry.partition, size, lag, entry.is_future))
            descriptions.append(LogDirDescription(path, NONE, topics))
        return descriptions

    def _offset_lag(self, tp: TopicPartition, log_end_offset: int, is_future: bool) -> int:
        """Kafka's `getLogEndOffsetLag`: a future log's distance to the current log's end, a current log's
        to its high watermark; -1 when the partition is not served here."""
        partition = self.hosted.get(tp)
        if partition is None or partition.log.offline:
            return -1
        if is_future:
            return partition.log.log_end_offset - log_end_offset
        return max(partition.high_watermark - log_end_offset, 0)


def _delete_dir(path: Path) -> None:
    try:
        remove_log_dir(path)
    except OSError as error:  # left for the next startup, which deletes `-delete` dirs
        log.warning("Could not delete %s: %s", path, error)
