"""`__consumer_offsets` (Kafka 2.8's `GroupMetadataManager`): committed offsets and group metadata as records
of the offsets topic, an in-memory cache of them, loading on leadership and expiry.

A group belongs to partition `Utils.abs(groupId.hashCode) % partitions` (Java's `String.hashCode`); this
broker coordinates the groups of the offsets partitions it leads. On becoming their leader (LeaderAndIsr,
`on_election`) it loads their groups and offsets from the log in the background and answers
COORDINATOR_LOAD_IN_PROGRESS meanwhile; on becoming a follower or being stopped (`on_resignation`) it
drops them (NOT_COORDINATOR). Both are fenced by the coordinator epoch (the partition's leader epoch), as
Kafka 2.8.1+ does: an older epoch's load or unload is ignored.

Offsets and group metadata are appended through the replica manager's produce path with acks=all (the
produce purgatory answers once the ISR has them, within `offsets.commit.timeout.ms`) and enter the cache
only once acknowledged; the append's error becomes the coordinator's (`storeOffsets`/`storeGroup`).
Tombstones of expired or deleted offsets are appended with acks=0, as Kafka's `cleanupGroupMetadata` does:
a lost tombstone is written again at the next round.

The membership state machine is the group coordinator's (group_coordinator.py): it sets the callbacks
`on_group_loaded`, `on_group_unloaded`, `group_is_empty_or_absent` and `validate_commit`. Without one, the
defaults accept standalone commits (generation -1) of groups without members, as `GroupCoordinator.
handleCommitOffsets` does for a group that does not use Kafka's group management.

Everything runs on the broker's event loop; only reading the log while loading goes to the executor.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kafkaops.cluster.broker.config import BrokerConfig
from kafkaops.cluster.broker.metadata_cache import MetadataCache
from kafkaops.cluster.broker.replica_manager import ReplicaManager
from kafkaops.cluster.broker.requests import ProducePartitionData, ProduceRequest
from kafkaops.cluster.common import errors
from kafkaops.cluster.log import Log
from kafkaops.cluster.protocol.group_coordinator_records import (
    GroupMetadataKey,
    OffsetAndMetadata,
    OffsetKey,
    group_metadata_key,
    group_metadata_value,
    offset_commit_key,
    offset_commit_value,
    read_group_message_value,
    read_message_key,
    read_offset_message_value,
)
from kafkaops.cluster.protocol.records import ControlType, Record, build_batch, iter_batches, iter_records
from kafkaops.cluster.zk.values import TopicPartition

__all__ = [
    "GROUP_METADATA_TOPIC_NAME",
    "CommitRecordMetadataAndOffset",
    "GroupMetadataManager",
    "OffsetAndMetadata",
    "java_string_hash_code",
    "partition_for",
]

log = logging.getLogger("kafkaops.broker.group_metadata_manager")

GROUP_METADATA_TOPIC_NAME = "__consumer_offsets"
NONE = errors.NONE
_PRODUCE_VERSION = 8


# --- pure parts -------------------------------------------------------------------------------------------


def java_string_hash_code(text: str) -> int:
    """Java's `String.hashCode`: over UTF-16 code units, as a signed 32-bit int."""
    data = text.encode("utf-16-be", "surrogatepass")
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def utils_abs(n: int) -> int:
    """Kafka's `Utils.abs`: `Math.abs`, except that Integer.MIN_VALUE is 0."""
    return 0 if n == -(1 << 31) else abs(n)


def partition_for(group_id: str, partitions: int) -> int:
    """`GroupMetadataManager.partitionFor`."""
    return utils_abs(java_string_hash_code(group_id)) % partitions


@dataclass(frozen=True, slots=True)
class CommitRecordMetadataAndOffset:
    """An offset with the base offset of the batch it was appended in (Kafka's class of the same name)."""

    append_offset: int | None
    offset_and_metadata: OffsetAndMetadata

    def older_than(self, that: CommitRecordMetadataAndOffset) -> bool:
        return (self.append_offset or 0) < (that.append_offset or 0)


@dataclass
class LoadedPartition:
    """What `doLoadGroupsAndOffsets` gathers from an offsets partition's log, batch by batch."""

    offsets: dict[tuple[str, TopicPartition], CommitRecordMetadataAndOffset] = field(default_factory=dict)
    pending: dict[int, dict[tuple[str, TopicPartition], CommitRecordMetadataAndOffset]] = field(default_factory=dict)
    groups: dict[str, dict[str, Any]] = field(default_factory=dict)
    removed_groups: set[str] = field(default_factory=set)

    def add_batches(self, data: bytes) -> int | None:
        """Fold the batches of `data` in; returns the offset after the last one (None: no batch)."""
        next_offset = None
        for batch in iter_batches(data, allow_truncated_tail=True):
            header = batch.header
            records = list(iter_records(batch))
            if header.is_control:
                self._control(header.producer_id, records)
            else:
                base = records[0].offset if records else header.base_offset
                for record in records:
                    self._record(record, base, header.producer_id if header.is_transactional else None)
            next_offset = header.next_offset
        return next_offset

    def _control(self, producer_id: int, records: list[Record]) -> None:
        if not records or records[0].key is None:
            return
        if int.from_bytes(records[0].key[2:4], "big") == ControlType.COMMIT:
            for key, offset in self.pending.get(producer_id, {}).items():
                current = self.offsets.get(key)
                if current is None or current.older_than(offset):
                    self.offsets[key] = offset
        self.pending.pop(producer_id, None)

    def _record(self, record: Record, base_offset: int, producer_id: int | None) -> None:
        if record.key is None:
            raise errors.CorruptMessageError("Group metadata/offset entry key should not be null")
        key = read_message_key(record.key)
        if isinstance(key, OffsetKey):
            where = (key.group, TopicPartition(key.topic, key.partition))
            target = self.offsets if producer_id is None else self.pending.setdefault(producer_id, {})
            value = read_offset_message_value(record.value)
            if value is None:
                target.pop(where, None)
            else:
                target[where] = CommitRecordMetadataAndOffset(base_offset, value)
        elif isinstance(key, GroupMetadataKey):
            group = read_group_message_value(record.value)
            if group is not None:
                self.removed_groups.discard(key.group)
                self.groups[key.group] = group
            else:
                self.groups.pop(key.group, None)
                self.removed_groups.add(key.group)

    def offsets_by_group(self) -> dict[str, dict[TopicPartition, CommitRecordMetadataAndOffset]]:
        by_group: dict[str, dict[TopicPartition, CommitRecordMetadataAndOffset]] = {}
        for (group, tp), offset in self.offsets.items():
            by_group.setdefault(group, {})[tp] = offset
        return by_group


def expired_offsets(
    offsets: Mapping[TopicPartition, CommitRecordMetadataAndOffset],
    now_ms: int,
    retention_ms: int,
    base_timestamp: int | None = None,
    subscribed_topics: Iterable[str] = (),
) -> list[TopicPartition]:
    """`GroupMetadata.removeExpiredOffsets`' selection (KIP-211): an offset with an explicit expire timestamp
    (written by OffsetCommit v1-v4) expires then; any other once `retention_ms` have passed since
    `base_timestamp` (the time an empty group became empty) or, without one, since it was committed.
    Offsets of subscribed topics never expire."""
    subscribed = set(subscribed_topics)
    expired = []
    for tp, commit in offsets.items():
        if tp.topic in subscribed:
            continue
        offset = commit.offset_and_metadata
        if offset.expire_timestamp is not None:
            if now_ms >= offset.expire_timestamp:
                expired.append(tp)
        elif now_ms - (offset.commit_timestamp if base_timestamp is None else base_timestamp) >= retention_ms:
            expired.append(tp)
    return expired


_COORDINATOR_NOT_AVAILABLE = frozenset(
    {
        errors.UnknownTopicOrPartitionError.code,
        errors.NotEnoughReplicasError.code,
        errors.NotEnoughReplicasAfterAppendError.code,
    }
)
_NOT_COORDINATOR = frozenset({errors.NotLeaderOrFollowerError.code, errors.KafkaStorageError.code})
_TOO_LARGE = frozenset(
    {errors.MessageTooLargeError.code, errors.RecordListTooLargeError.code, errors.InvalidFetchSizeError.code}
)


def _append_error(code: int, too_large: int) -> int:
    """The cases `storeOffsets` and `storeGroup` map alike: the offsets partition gone or short of replicas,
    its leadership lost, and a record too large (each names its own code for that)."""
    if code in _COORDINATOR_NOT_AVAILABLE:
        return errors.CoordinatorNotAvailableError.code
    if code in _NOT_COORDINATOR:
        return errors.NotCoordinatorError.code
    if code in _TOO_LARGE:
        return too_large
    return code


def store_offsets_error(code: int) -> int:
    """`storeOffsets`: an append's error as the commit's."""
    return _append_error(code, errors.InvalidCommitOffsetSizeError.code)


def store_group_error(code: int) -> int:
    """`storeGroup`: an append's error as the group's (a timed-out append: the rebalance goes on)."""
    if code == errors.RequestTimedOutError.code:
        return errors.RebalanceInProgressError.code
    return _append_error(code, errors.UnknownServerError.code)


def maybe_update_coordinator_epoch(epochs: dict[int, int], partition: int, epoch: int | None) -> bool:
    """Kafka 2.8.1's `maybeUpdateCoordinatorEpoch`: raise the partition's epoch to `epoch` when newer; true
    when `epoch` is None or is now the partition's epoch (an older one is fenced)."""
    current = epochs.get(partition)
    if current is None:
        if epoch is not None:
            epochs[partition] = epoch
    elif epoch is not None and epoch > current:
        epochs[partition] = epoch
    return epoch is None or epochs.get(partition) == epoch


# --- the manager ------------------------------------------------------------------------------------------


GroupLoaded = Callable[[str, "dict[str, Any] | None"], None]
CommitValidator = Callable[[str, str, int, "str | None"], "int | None"]
OffsetDeleteCheck = Callable[[str, "list[TopicPartition]"], "tuple[int, dict[TopicPartition, int]]"]


class GroupMetadataManager:
    def __init__(
        self,
        broker_id: int,
        config: BrokerConfig,
        replica_manager: ReplicaManager,
        metadata_cache: MetadataCache,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.broker_id = broker_id
        self.config = config
        self.replica_manager = replica_manager
        self.metadata_cache = metadata_cache
        self.clock = clock
        self.offsets_retention_ms = config.offsets_retention_minutes * 60_000
        self._partition_count: int | None = None
        self._owned: set[int] = set()
        self._loading: set[int] = set()
        self._epochs: dict[int, int] = {}
        self._offsets: dict[str, dict[TopicPartition, CommitRecordMetadataAndOffset]] = {}
        self._groups: dict[str, dict[str, Any]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._expiry: asyncio.Task[None] | None = None
        self._shutting_down = False
        # set by the group coordinator
        self.on_group_loaded: GroupLoaded = lambda group_id, value: None
        """Called for each group loaded: its GroupMetadataValue dict, or None for a group with offsets only."""
        self.on_group_unloaded: Callable[[str], None] = lambda group_id: None
        self.group_is_empty_or_absent: Callable[[str], bool] = lambda group_id: True
        self.validate_commit: CommitValidator = self._validate_standalone_commit
        self.offset_delete_check: OffsetDeleteCheck = self._offset_delete_check
        """`handleDeleteOffsets`' group check: (group error, errors of partitions refused, e.g.
        GROUP_SUBSCRIBED_TO_TOPIC)."""

    # --- partitions -------------------------------------------------------------------------------------

    @property
    def partition_count(self) -> int:
        """Kafka fixes it at startup from ZooKeeper (else the config): here, the first time the topic is
        known, else `offsets.topic.num.partitions`."""
        if self._partition_count is None:
            known = self.metadata_cache.partitions(GROUP_METADATA_TOPIC_NAME)
            if known:
                self._partition_count = len(known)
            return len(known) if known else self.config.offsets_topic_num_partitions
        return self._partition_count

    def partition_for(self, group_id: str) -> int:
        return partition_for(group_id, self.partition_count)

    def is_partition_owned(self, partition: int) -> bool:
        return partition in self._owned

    def is_partition_loading(self, partition: int) -> bool:
        return partition in self._loading

    def is_group_local(self, group_id: str) -> bool:
        return self.partition_for(group_id) in self._owned

    def is_group_loading(self, group_id: str) -> bool:
        return self.partition_for(group_id) in self._loading

    @property
    def is_loading(self) -> bool:
        return bool(self._loading)

    def group_status_error(self, group_id: str | None, empty_allowed: bool = True) -> int | None:
        """`GroupCoordinator.validateGroupStatus` as far as storage goes."""
        if group_id is None or (not empty_allowed and not group_id):
            return errors.InvalidGroupIdError.code
        if self._shutting_down:
            return errors.CoordinatorNotAvailableError.code
        if self.is_group_loading(group_id):
            return errors.CoordinatorLoadInProgressError.code
        if not self.is_group_local(group_id):
            return errors.NotCoordinatorError.code
        return None

    def current_groups(self) -> list[str]:
        """The groups this broker holds (with offsets or metadata), for ListGroups."""
        return sorted(set(self._groups) | set(self._offsets))

    def group_value(self, group_id: str) -> dict[str, Any] | None:
        """The GroupMetadataValue dict last stored or loaded for the group."""
        return self._groups.get(group_id)

    def group_not_exists(self, group_id: str) -> bool:
        """`groupNotExists`: a local, loaded partition without the group."""
        return self.is_group_local(group_id) and group_id not in self._groups and group_id not in self._offsets

    # --- leadership (LeaderAndIsr, StopReplica) ---------------------------------------------------------

    def on_election(self, partition: int, coordinator_epoch: int) -> None:
        """`GroupCoordinator.onElection` → `scheduleLoadGroupAndOffsets`."""
        log.info("Elected as the group coordinator for partition %s in epoch %s", partition, coordinator_epoch)
        if not maybe_update_coordinator_epoch(self._epochs, partition, coordinator_epoch):
            log.info(
                "Not loading offsets and group metadata for %s-%s in epoch %s since current epoch is %s",
                GROUP_METADATA_TOPIC_NAME,
                partition,
                coordinator_epoch,
                self._epochs.get(partition),
            )
            return
        if partition in self._loading:
            log.info("Already loading offsets and group metadata from %s-%s", GROUP_METADATA_TOPIC_NAME, partition)
            return
        self._loading.add(partition)
        self._spawn(self._load(partition, coordinator_epoch))
        self._start_expiry()

    def on_resignation(self, partition: int, coordinator_epoch: int | None) -> None:
        """`GroupCoordinator.onResignation` → `removeGroupsAndOffsets`."""
        log.info("Resigned as the group coordinator for partition %s in epoch %s", partition, coordinator_epoch)
        if not maybe_update_coordinator_epoch(self._epochs, partition, coordinator_epoch):
            log.info(
                "Not removing offsets for %s-%s in epoch %s since current epoch is %s",
                GROUP_METADATA_TOPIC_NAME,
                partition,
                coordinator_epoch,
                self._epochs.get(partition),
            )
            return
        self._owned.discard(partition)
        self._loading.discard(partition)
        groups = [g for g in self.current_groups() if self.partition_for(g) == partition]
        removed_offsets = 0
        for group_id in groups:
            self.on_group_unloaded(group_id)
            removed_offsets += len(self._offsets.pop(group_id, {}))
            self._groups.pop(group_id, None)
        log.info(
            "Finished unloading %s-%s for coordinator epoch %s. Removed %s cached offsets and %s cached groups.",
            GROUP_METADATA_TOPIC_NAME,
            partition,
            coordinator_epoch,
            removed_offsets,
            len(groups),
        )

    async def _load(self, partition: int, coordinator_epoch: int) -> None:
        tp = TopicPartition(GROUP_METADATA_TOPIC_NAME, partition)
        started = time.monotonic()
        try:
            hosted = self.replica_manager.partitions.get(tp)
            if hosted is None:
                log.warning("Attempted to load offsets and group metadata from %s, but found no log", tp)
                return
            loaded = await asyncio.get_running_loop().run_in_executor(None, self._read_log, hosted.log)
            if partition not in self._loading or self._epochs.get(partition) != coordinator_epoch:
                return  # resigned meanwhile
            self._install(loaded)
            log.info(
                "Finished loading offsets and group metadata from %s in %s milliseconds for epoch %s",
                tp,
                int((time.monotonic() - started) * 1000),
                coordinator_epoch,
            )
        except Exception:
            log.exception("Error loading offsets from %s", tp)
        finally:
            if partition in self._loading and self._epochs.get(partition) == coordinator_epoch:
                self._owned.add(partition)
                self._loading.discard(partition)

    def _read_log(self, log_: Log) -> LoadedPartition:
        """The whole log, start to end, in reads of `offsets.load.buffer.size` (executor thread)."""
        loaded = LoadedPartition()
        offset = log_.log_start_offset
        while offset < log_.log_end_offset and not self._shutting_down:
            data = log_.read(offset, self.config.offsets_load_buffer_size, None, min_one_batch=True).records
            next_offset = loaded.add_batches(bytes(data)) if data else None
            if next_offset is None:
                break
            offset = next_offset
        return loaded

    def _install(self, loaded: LoadedPartition) -> None:
        """`loadGroup` of every group found: offsets first, then the group, then the coordinator is told."""
        by_group = loaded.offsets_by_group()
        for group_id, value in loaded.groups.items():
            self._offsets[group_id] = by_group.get(group_id, {})
            self._groups[group_id] = value
            self.on_group_loaded(group_id, value)
        for group_id, offsets in by_group.items():
            if group_id not in loaded.groups:
                self._offsets[group_id] = offsets
                self._groups.pop(group_id, None)
                self.on_group_loaded(group_id, None)

    # --- offsets ----------------------------------------------------------------------------------------

    def _validate_standalone_commit(
        self, group_id: str, member_id: str, generation_id: int, group_instance_id: str | None
    ) -> int | None:
        """`doCommitOffsets` for a group without the coordinator's members: a commit with generation < 0
        stores offsets only; any other generation is from a group this broker does not know."""
        value = self._groups.get(group_id)
        has_members = bool(value and value.get("members"))
        if generation_id < 0 and not has_members:
            return None
        if value is None and group_id not in self._offsets:
            return errors.IllegalGenerationError.code
        return errors.UnknownMemberIdError.code

    def _offset_delete_check(
        self, group_id: str, partitions: list[TopicPartition]
    ) -> tuple[int, dict[TopicPartition, int]]:
        """Without the coordinator's members: a group with stored members refuses (NON_EMPTY_GROUP)."""
        if group_id not in self._groups and group_id not in self._offsets:
            missing = errors.GroupIdNotFoundError if self.group_not_exists(group_id) else errors.NotCoordinatorError
            return missing.code, {}
        value = self._groups.get(group_id)
        if value is not None and value.get("members"):
            return errors.NonEmptyGroupError.code, {}
        return NONE, {}

    def get_offsets(
        self, group_id: str, partitions: Iterable[TopicPartition] | None = None
    ) -> dict[TopicPartition, OffsetAndMetadata | None]:
        """`getOffsets`: the committed offset of each partition (None: none), or every committed offset."""
        committed = self._offsets.get(group_id, {})
        wanted = list(committed) if partitions is None else [TopicPartition(*tp) for tp in partitions]
        return {tp: (committed[tp].offset_and_metadata if tp in committed else None) for tp in wanted}

    def _metadata_fits(self, offset: OffsetAndMetadata) -> bool:
        return len(offset.metadata) <= self.config.offset_metadata_max_bytes

    async def store_offsets(
        self, group_id: str, offsets: Mapping[TopicPartition, OffsetAndMetadata]
    ) -> dict[TopicPartition, int]:
        """`storeOffsets`: the offsets whose metadata fits are appended (acks=all) and cached once
        acknowledged; one error code per partition."""
        offsets = {TopicPartition(*tp): o for tp, o in offsets.items()}  # plain (topic, partition) pairs too
        fitting = {tp: o for tp, o in offsets.items() if self._metadata_fits(o)}
        too_large = errors.OffsetMetadataTooLargeError.code
        if not fitting:
            return dict.fromkeys(offsets, too_large)
        now = self._now_ms()
        records = [
            Record(i, now, offset_commit_key(group_id, tp.topic, tp.partition), offset_commit_value(o))
            for i, (tp, o) in enumerate(fitting.items())
        ]
        code, base_offset = await self._append(group_id, records, acks=-1)
        if code == NONE:
            cached = self._offsets.setdefault(group_id, {})
            for tp, offset in fitting.items():
                cached[tp] = CommitRecordMetadataAndOffset(base_offset, offset)
        else:
            log.debug("Offset commit of group %s failed with error %s", group_id, code)
        result = store_offsets_error(code)
        return {tp: (result if tp in fitting else too_large) for tp in offsets}

    async def store_group(self, group_id: str, value: dict[str, Any]) -> int:
        """`storeGroup`: the group's metadata appended (acks=all); the error code of the store."""
        record = Record(0, self._now_ms(), group_metadata_key(group_id), group_metadata_value(value))
        code, _ = await self._append(group_id, [record], acks=-1)
        if code == NONE:
            self._groups[group_id] = value
            return NONE
        mapped = store_group_error(code)
        log.log(
            logging.DEBUG if mapped != errors.UnknownServerError.code else logging.ERROR,
            "Appending metadata of group %s failed with error %s",
            group_id,
            code,
        )
        return mapped

    async def delete_offsets(self, group_id: str, partitions: Iterable[TopicPartition]) -> int:
        """`deleteOffsets`: tombstones of the group's offsets of `partitions`; the number removed."""
        committed = self._offsets.get(group_id, {})
        removed = [TopicPartition(*tp) for tp in partitions if tp in committed]
        return await self._cleanup(group_id, removed, remove_group=False)

    async def delete_group(self, group_id: str) -> int:
        """DeleteGroups' `cleanupGroupMetadata(_.removeAllOffsets())` for a group the coordinator made Dead:
        tombstones of every offset and of its metadata (when it had a generation)."""
        return await self._cleanup(group_id, list(self._offsets.get(group_id, {})), remove_group=True)

    async def _cleanup(self, group_id: str, removed: list[TopicPartition], remove_group: bool) -> int:
        now = self._now_ms()
        committed = self._offsets.get(group_id, {})
        keys = [offset_commit_key(group_id, tp.topic, tp.partition) for tp in removed]
        for tp in removed:
            committed.pop(tp, None)
        if not committed:
            self._offsets.pop(group_id, None)
        value = self._groups.pop(group_id, None) if remove_group else None
        if value is not None and value.get("generation", 0) > 0:
            # no tombstone for a generation-0 group: it only stored offsets, it wrote no metadata
            keys.append(group_metadata_key(group_id))
        if keys:
            code, _ = await self._append(group_id, [Record(i, now, k, None) for i, k in enumerate(keys)], acks=0)
            if code != NONE:
                log.warning("Failed to append %s tombstones for group %s: error %s", len(keys), group_id, code)
        return len(removed)

    # --- expiry -----------------------------------------------------------------------------------------

    def _start_expiry(self) -> None:
        if self._expiry is None and not self._shutting_down:
            self._expiry = asyncio.get_running_loop().create_task(self._expire_periodically())

    async def _expire_periodically(self) -> None:
        interval_s = self.config.offsets_retention_check_interval_ms / 1000
        while True:
            await asyncio.sleep(interval_s)
            try:
                await self.cleanup_group_metadata()
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - a periodic task must survive one failed round
                log.exception("Offsets expiration failed")

    async def cleanup_group_metadata(self) -> int:
        """`cleanupGroupMetadata` with `removeExpiredOffsets`: offsets of empty groups (and standalone
        consumers) past `offsets.retention.minutes` get tombstones; an empty group left with no offsets is
        dead, and its metadata gets one too."""
        now = self._now_ms()
        removed_total = 0
        for group_id in self.current_groups():
            if not self.is_group_local(group_id) or not self.group_is_empty_or_absent(group_id):
                continue
            value = self._groups.get(group_id)
            state_timestamp = value.get("current_state_timestamp", -1) if value is not None else -1
            base = state_timestamp if value is not None and state_timestamp >= 0 else None
            offsets = self._offsets.get(group_id, {})
            expired = expired_offsets(offsets, now, self.offsets_retention_ms, base)
            dead = len(expired) == len(offsets)
            if expired or (dead and value is not None):
                removed_total += await self._cleanup(group_id, expired, remove_group=dead)
                if dead:
                    self.on_group_unloaded(group_id)
                    log.info(
                        "Group %s transitioned to Dead in generation %s", group_id, (value or {}).get("generation")
                    )
        if removed_total:
            log.info("Removed %s expired offsets in %s milliseconds.", removed_total, self._now_ms() - now)
        return removed_total

    # --- appends ----------------------------------------------------------------------------------------

    async def _append(self, group_id: str, records: list[Record], acks: int) -> tuple[int, int]:
        """Append to the group's offsets partition through the produce path; (error code, base offset)."""
        tp = TopicPartition(GROUP_METADATA_TOPIC_NAME, self.partition_for(group_id))
        request = ProduceRequest(
            _PRODUCE_VERSION,
            None,
            acks,
            self.config.offsets_commit_timeout_ms,
            (ProducePartitionData(tp, build_batch(records)),),
        )
        (result,) = await self.replica_manager.append_records(request, internal_topics_allowed=True)
        return result.error_code, result.base_offset

    def _now_ms(self) -> int:
        return int(self.clock() * 1000)

    def _spawn(self, work: Any) -> None:
        task: asyncio.Task[None] = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def shutdown(self) -> None:
        """Kafka's `shutdown`: loads stop, the expiry stops, the cache is dropped."""
        self._shutting_down = True
        if self._expiry is not None:
            self._expiry.cancel()
        for task in list(self._tasks):
            task.cancel()
        self._owned.clear()
        self._loading.clear()
        self._offsets.clear()
        self._groups.clear()
