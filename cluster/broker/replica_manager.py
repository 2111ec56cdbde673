"""The broker's replica manager: the partitions it leads or follows, their logs, and the data plane.

Control (Kafka's `becomeLeaderOrFollower` / `stopReplicas`): a request from an older controller epoch
is refused (STALE_CONTROLLER_EPOCH); a partition state with an older or equal leader epoch is ignored;
a partition this broker is not a replica of is refused. Every decision is written to the state-change
log in Kafka 2.8's words. Leaders open their epoch; followers start fetching (replica_fetcher.py).

Data (kafka-protocol.md §5–§8, §13): Produce appends to leaders, answers `acks=1` at once and parks
`acks=all` in the produce purgatory until the high watermark passes the batch (delayed_produce.py);
Fetch reads up to the HW for consumers and up to the LEO for followers, whose positions move the ISR
and the HW; a fetch that finds too little waits in the fetch purgatory for an append or a HW move
(delayed_fetch.py). The leader writes ISR changes to the partition-state znode itself, conditionally on
its zk_version (Kafka ≤ 2.6), and tells the controller through `/isr_change_notification`.

Requests come in and results go out as typed values (requests.py, responses.py); KafkaApis converts
them from and to the wire.

Threads: everything here runs on the broker's event loop, so partitions and purgatories need no locks;
ZooKeeper writes, flushes and checkpoints go to the loop's executor. Only `accept_controller_epoch` and
`maybe_update_metadata_cache` are called from an executor thread (UpdateMetadata), hence the lock.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence, Set
from pathlib import Path
from typing import Any

from kafkaops.cluster.broker import isr as isr_rules
from kafkaops.cluster.broker import quota as throttles
from kafkaops.cluster.broker.config import BrokerConfig
from kafkaops.cluster.broker.delayed_delete_records import (
    INVALID_LOW_WATERMARK,
    DelayedDeleteRecords,
    DeleteRecordsPartitionStatus,
)
from kafkaops.cluster.broker.delayed_fetch import DelayedFetch, FetchRead
from kafkaops.cluster.broker.delayed_operation import DelayedOperationPurgatory
from kafkaops.cluster.broker.delayed_produce import DelayedProduce, ProducePartitionStatus
from kafkaops.cluster.broker.fetch_session import SESSIONLESS, FetchSession, FetchSessionCache
from kafkaops.cluster.broker.metadata_cache import MetadataCache
from kafkaops.cluster.broker.partition import Partition
from kafkaops.cluster.broker.replica_alter_log_dirs import ReplicaAlterLogDirsManager
from kafkaops.cluster.broker.replica_fetcher import ReplicaFetcher
from kafkaops.cluster.broker.requests import (
    FetchPartition,
    FetchRequest,
    LeaderAndIsrRequest,
    ListOffsetsPartition,
    OffsetForLeaderEpochPartition,
    ProduceRequest,
    StopReplicaRequest,
    UpdateMetadataRequest,
)
from kafkaops.cluster.broker.responses import (
    EpochEndOffset,
    FetchPartitionResult,
    FetchResult,
    ListOffsetsPartitionResult,
    LogDirDescription,
    PartitionErrors,
    ProducePartitionResult,
)
from kafkaops.cluster.common import errors
from kafkaops.cluster.common.client_channel import PLAINTEXT_CHANNEL, ClientChannel
from kafkaops.cluster.common.errors import BrokerError, LogDirFailureError
from kafkaops.cluster.log import UNDEFINED_EPOCH, LogConfig, LogManager
from kafkaops.cluster.log.file_records import FileRecords
from kafkaops.cluster.protocol.records import validate_produce_records
from kafkaops.cluster.state_change_log import (
    BrokerLog,
    LeaderAndIsrPartitionState,
    Level,
    StateChangeEntry,
    StateChangeLogFile,
    StopReplicaPartitionState,
)
from kafkaops.cluster.zk.client import KafkaZkClient
from kafkaops.cluster.zk.values import INTERNAL_TOPICS, LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition

log = logging.getLogger("kafkaops.broker.replica_manager")


NONE = errors.NONE
UNKNOWN_TOPIC_OR_PARTITION = errors.UnknownTopicOrPartitionError.code
NOT_LEADER_OR_FOLLOWER = errors.NotLeaderOrFollowerError.code
STALE_CONTROLLER_EPOCH = errors.StaleControllerEpochError.code
KAFKA_STORAGE_ERROR = errors.KafkaStorageError.code

CONSUMER_REPLICA_ID = -1
DEBUGGING_REPLICA_ID = -2
LATEST_TIMESTAMP = -1
EARLIEST_TIMESTAMP = -2
ISR_CHANGE_PROPAGATION_INTERVAL_S = 2.5
"""Kafka's `isr-change-propagation` schedule."""


class ReplicaManager:
    def __init__(
        self,
        broker_id: int,
        config: BrokerConfig,
        sink: StateChangeLogFile,
        log_manager: LogManager,
        zk: KafkaZkClient,
        metadata_cache: MetadataCache,
        clock: Callable[[], float] = time.time,
        *,
        channel: ClientChannel = PLAINTEXT_CHANNEL,
        is_shutting_down: Callable[[], bool] = lambda: False,
    ) -> None:
        self.broker_id = broker_id
        self.is_shutting_down = is_shutting_down
        """The server's shutdown has begun (Kafka's shared `isShuttingDown`, set before the controlled shutdown)."""
        self.channel = channel
        """How the fetchers reach leaders (on the inter-broker listener the controller's LeaderAndIsr names)."""
        self.config = config
        self.sink = sink
        self.log = BrokerLog(broker_id)
        self.log_manager = log_manager
        self.zk = zk
        self.metadata_cache = metadata_cache
        self.clock = clock
        self.controller_epoch = 0
        self._epoch_lock = threading.Lock()
        self.partitions: dict[TopicPartition, Partition] = {}
        self.fetchers: dict[int, ReplicaFetcher] = {}
        self._topic_configs: dict[str, dict[str, str]] = {}
        self._default_min_isr = config.min_insync_replicas
        """min.insync.replicas of topics without an override: the broker's, dynamic (`apply_broker_config`)."""
        self.leader_quota = throttles.ReplicationQuota()
        self.follower_quota = throttles.ReplicationQuota()
        self._leader_throttled: dict[str, frozenset[int] | None] = {}
        self._follower_throttled: dict[str, frozenset[int] | None] = {}
        self.produce_purgatory: DelayedOperationPurgatory[TopicPartition] = DelayedOperationPurgatory("Produce")
        self.fetch_purgatory: DelayedOperationPurgatory[TopicPartition] = DelayedOperationPurgatory("Fetch")
        self.delete_records_purgatory: DelayedOperationPurgatory[TopicPartition] = DelayedOperationPurgatory(
            "DeleteRecords"
        )
        self.alter_log_dirs = ReplicaAlterLogDirsManager(log_manager, self.partitions, self._unknown_code, clock=clock)
        self._stopped = False
        self.fetch_sessions = FetchSessionCache()
        self._isr_changes: set[TopicPartition] = set()
        self._isr_writes: list[tuple[Partition, LeaderAndIsr]] = []
        """ISR changes of this turn of the loop, not yet sent to ZooKeeper."""
        self._last_isr_change_ms = 0
        self._last_isr_propagation_ms = 0
        self._tasks: list[asyncio.Task[None]] = []

    def now_ms(self) -> int:
        return int(self.clock() * 1000)

    # --- lifecycle (on the loop) -----------------------------------------------------------------------

    def start_background_tasks(self) -> None:
        loop = asyncio.get_running_loop()
        config = self.config
        self._tasks = [
            loop.create_task(self._every(config.replica_lag_time_max_ms / 2000, self._shrink_isrs)),
            loop.create_task(self._every(ISR_CHANGE_PROPAGATION_INTERVAL_S, self._maybe_propagate_isr_changes)),
            loop.create_task(
                self._every(
                    config.replica_high_watermark_checkpoint_interval_ms / 1000,
                    self._in_executor(self.log_manager.checkpoint_high_watermarks),
                )
            ),
            loop.create_task(
                self._every(config.log_flush_offset_checkpoint_interval_ms / 1000, self._in_executor(self._flush))
            ),
            loop.create_task(
                self._every(
                    config.log_retention_check_interval_ms / 1000, self._in_executor(self.log_manager.cleanup_logs)
                )
            ),
        ]

    def _flush(self) -> None:
        self.log_manager.flush_logs()
        self.log_manager.checkpoint_recovery_points()

    @staticmethod
    def _in_executor(work: Callable[[], Any]) -> Callable[[], Any]:
        async def run() -> None:
            await asyncio.get_running_loop().run_in_executor(None, work)

        return run

    @staticmethod
    async def _every(interval_s: float, work: Callable[[], Any]) -> None:
        while True:
            await asyncio.sleep(interval_s)
            try:
                result = work()
                if asyncio.iscoroutine(result):
                    await result
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - a periodic task must survive one failed round
                log.exception("Periodic task %s failed", getattr(work, "__name__", work))

    async def shutdown(self) -> None:
        for task in self._tasks:
            task.cancel()
        for fetcher in list(self.fetchers.values()):
            await fetcher.shutdown()
        self.fetchers.clear()
        await self.alter_log_dirs.shutdown()
        # parked produces answer NOT_LEADER_OR_FOLLOWER: this broker leads nothing any more
        self._stopped = True
        for tp in self.produce_purgatory.watched_keys():
            self.produce_purgatory.check_and_complete(tp)
        for tp in self.delete_records_purgatory.watched_keys():
            self.delete_records_purgatory.check_and_complete(tp)
        self.produce_purgatory.shutdown()
        self.fetch_purgatory.shutdown()
        self.delete_records_purgatory.shutdown()

    # --- controller epoch ------------------------------------------------------------------------------

    def accept_controller_epoch(self, epoch: int, stale: Callable[[int], StateChangeEntry]) -> bool:
        """Kafka's fencing of old controllers: a request from an older controller epoch is refused and
        logged with `stale(latest epoch)`; a newer one raises the epoch this broker knows."""
        with self._epoch_lock:
            if epoch < self.controller_epoch:
                self.sink.write(stale(self.controller_epoch))
                return False
            self.controller_epoch = epoch
            return True

    # --- UpdateMetadata (on an executor thread) --------------------------------------------------------

    def maybe_update_metadata_cache(self, correlation_id: int, request: UpdateMetadataRequest) -> int:
        """Kafka's `maybeUpdateMetadataCache`: refused from an older controller epoch, else the metadata
        cache takes the request and each partition it deletes is logged. Returns the error code."""
        controller_id, controller_epoch = request.controller_id, request.controller_epoch
        if not self.accept_controller_epoch(
            controller_epoch,
            lambda latest: self.log.ignoring_update_metadata_stale_controller(
                correlation_id, controller_id, controller_epoch, latest
            ),
        ):
            return STALE_CONTROLLER_EPOCH
        for tp in self.metadata_cache.update(request):
            self.sink.write(self.log.deleted_from_metadata_cache(tp, controller_id, controller_epoch, correlation_id))
        return NONE

    # --- LeaderAndIsr ----------------------------------------------------------------------------------

    def become_leader_or_follower(self, correlation_id: int, request: LeaderAndIsrRequest) -> PartitionErrors:
        """Apply a LeaderAndIsr request; returns its error, or one error code per partition."""
        started = time.monotonic()
        controller_id, controller_epoch = request.controller_id, request.controller_epoch
        states = request.partition_states
        write = self.sink.write
        write(self.log.handling_leader_and_isr(correlation_id, controller_id, len(states)))
        if not self.accept_controller_epoch(
            controller_epoch,
            lambda latest: self.log.ignoring_leader_and_isr_stale_controller(
                controller_id, correlation_id, controller_epoch, latest
            ),
        ):
            return PartitionErrors(STALE_CONTROLLER_EPOCH)
        leaders = {b.broker_id: (b.host, b.port) for b in request.live_leaders}
        partition_errors = []
        trace = self.sink.enabled(Level.TRACE)
        for state in states:
            tp = state.partition
            if trace:
                write(self.log.received_leader_and_isr(state, correlation_id, controller_id, controller_epoch))
            try:
                code = self._apply(tp, state, leaders, correlation_id, controller_id, controller_epoch)
            except LogDirFailureError as error:
                log.error("Cannot make %s a replica of %s: %s", self.broker_id, tp, error)
                code = KAFKA_STORAGE_ERROR
            partition_errors.append((tp, code))
        elapsed_ms = int((time.monotonic() - started) * 1000)
        write(self.log.finished_leader_and_isr(elapsed_ms, correlation_id, controller_id, len(states)))
        self.sink.flush()
        return PartitionErrors(NONE, partition_errors)

    def _apply(
        self,
        tp: TopicPartition,
        state: LeaderAndIsrPartitionState,
        leaders: dict[int, tuple[str, int]],
        correlation_id: int,
        controller_id: int,
        epoch: int,
    ) -> int:
        write = self.sink.write
        if self.broker_id not in state.replicas:
            write(
                self.log.ignoring_leader_and_isr_not_a_replica(controller_id, correlation_id, epoch, tp, state.replicas)
            )
            return UNKNOWN_TOPIC_OR_PARTITION
        partition = self.partitions.get(tp)
        previous_epoch = partition.leader_epoch if partition is not None else -1
        if partition is not None and partition.log.offline:
            write(self.log.ignoring_leader_and_isr_offline_dir(controller_id, correlation_id, epoch, tp))
            return KAFKA_STORAGE_ERROR
        if partition is not None and state.leader_epoch < partition.leader_epoch:
            write(
                self.log.ignoring_leader_and_isr_stale_leader_epoch(
                    controller_id, correlation_id, epoch, tp, state.leader_epoch, partition.leader_epoch
                )
            )
            return STALE_CONTROLLER_EPOCH
        if partition is not None and state.leader_epoch == partition.leader_epoch:
            write(
                self.log.ignoring_leader_and_isr_same_leader_epoch(
                    controller_id, correlation_id, epoch, tp, state.leader_epoch
                )
            )
            return STALE_CONTROLLER_EPOCH
        if partition is None:
            self._load_topic_config(tp.topic)
            partition = Partition(tp, self.broker_id, self.log_manager.get_or_create_log(tp.topic, tp.partition))
            self.partitions[tp] = partition
            future = self.log_manager.get_future_log(tp.topic, tp.partition)
            if future is not None and not future.offline:  # a move that a restart interrupted goes on
                partition.future_log = future
                self.alter_log_dirs.add_partition(partition)
        if state.leader == self.broker_id:
            self._make_leader(partition, state, correlation_id, controller_id, epoch, previous_epoch)
        else:
            self._make_follower(partition, state, leaders, correlation_id, controller_id, epoch, previous_epoch)
        return NONE

    def _make_leader(
        self,
        partition: Partition,
        state: LeaderAndIsrPartitionState,
        correlation_id: int,
        controller_id: int,
        epoch: int,
        previous_epoch: int,
    ) -> None:
        write, tp = self.sink.write, partition.tp
        # Kafka builds its TRACE lines only when TRACE is on: three a partition cost more than the change
        trace = self.sink.enabled(Level.TRACE)
        if trace:
            write(self.log.starting_become_leader(correlation_id, controller_id, epoch, tp))
        self._remove_from_fetchers(tp)
        partition.make_leader(state, self.now_ms())
        write(
            self.log.leader_starts(
                tp,
                partition.leader_epoch,
                partition.log_end_offset,
                partition.high_watermark,
                partition.isr,
                partition.adding_replicas,
                partition.removing_replicas,
                previous_epoch,
            )
        )
        if trace:
            write(self.log.completed_become_leader(correlation_id, controller_id, epoch, tp))
        self._high_watermark_moved(tp)

    def _make_follower(
        self,
        partition: Partition,
        state: LeaderAndIsrPartitionState,
        leaders: dict[int, tuple[str, int]],
        correlation_id: int,
        controller_id: int,
        epoch: int,
        previous_epoch: int,
    ) -> None:
        write, tp = self.sink.write, partition.tp
        trace = self.sink.enabled(Level.TRACE)
        if trace:
            write(self.log.starting_become_follower(correlation_id, controller_id, epoch, tp, state.leader))
        self._remove_from_fetchers(tp)
        partition.make_follower(state)
        self._leadership_lost(tp)
        write(
            self.log.follower_starts(
                tp, partition.leader_epoch, partition.log_end_offset, partition.high_watermark, previous_epoch
            )
        )
        address = leaders.get(partition.leader)
        if self.is_shutting_down():
            # as Kafka's makeFollowers: made a follower by its own controlled shutdown, a leaving broker that
            # fetched would be taken back into the ISR it has just left (a 2.8 leader knows no shutting down)
            if trace:
                write(
                    self.log.skipped_adding_fetcher_shutting_down(
                        correlation_id, controller_id, epoch, tp, state.leader
                    )
                )
        elif address is not None:
            self._fetcher_for(partition.leader, address).add_partition(partition)
        if trace:
            write(self.log.completed_become_follower(correlation_id, controller_id, epoch, tp, partition.leader))

    def _fetcher_for(self, leader: int, address: tuple[str, int]) -> ReplicaFetcher:
        fetcher = self.fetchers.get(leader)
        if fetcher is not None and fetcher.address == address:
            return fetcher
        if fetcher is not None:  # the leader came back on another address
            asyncio.get_running_loop().create_task(fetcher.shutdown())
        config = self.config
        fetcher = ReplicaFetcher(
            self.broker_id,
            leader,
            address,
            max_wait_ms=config.replica_fetch_wait_max_ms,
            min_bytes=config.replica_fetch_min_bytes,
            max_bytes=config.replica_fetch_response_max_bytes,
            partition_max_bytes=config.replica_fetch_max_bytes,
            backoff_ms=config.replica_fetch_backoff_ms,
            socket_timeout_ms=config.replica_socket_timeout_ms,
            follower_throttled=self._follower_should_throttle,
            record_throttled=lambda size: self.follower_quota.record(size, self.clock()),
            channel=self.channel,
        )
        self.fetchers[leader] = fetcher
        return fetcher

    def _remove_from_fetchers(self, tp: TopicPartition) -> None:
        for fetcher in self.fetchers.values():
            fetcher.remove_partition(tp)

    # --- StopReplica -----------------------------------------------------------------------------------

    def stop_replicas(self, correlation_id: int, request: StopReplicaRequest) -> PartitionErrors:
        controller_id, controller_epoch = request.controller_id, request.controller_epoch
        partitions = request.partitions
        write = self.sink.write
        write(self.log.handling_stop_replica(correlation_id, controller_id, len(partitions)))
        if not self.accept_controller_epoch(
            controller_epoch,
            lambda latest: self.log.ignoring_stop_replica_stale_controller(
                controller_id, correlation_id, controller_epoch, latest
            ),
        ):
            return PartitionErrors(STALE_CONTROLLER_EPOCH)
        delete = request.delete_partitions
        trace = self.sink.enabled(Level.TRACE)
        for tp in partitions:
            partition = self.partitions.get(tp)
            if trace:
                state = StopReplicaPartitionState(tp.partition, partition.leader_epoch if partition else -1, delete)
                write(self.log.received_stop_replica(state, tp, correlation_id, controller_id, controller_epoch))
            self._remove_from_fetchers(tp)
            if delete:
                self.alter_log_dirs.remove_partition(tp)
                self.partitions.pop(tp, None)
            elif partition is not None:
                partition.stop_leading()
            self._leadership_lost(tp)
        failed = self.log_manager.delete_logs(partitions) if delete else {}
        self.sink.flush()
        return PartitionErrors(
            NONE,
            [(tp, NONE if failed.get(tp) is None else KAFKA_STORAGE_ERROR) for tp in partitions],
        )

    # --- log dir failures ------------------------------------------------------------------------------

    def handle_log_dir_failure(self, directory: Path) -> None:
        """Kafka's `handleLogDirFailure`: stop fetching the dir's partitions (their logs refuse every
        operation already, so clients get KAFKA_STORAGE_ERROR), fail their parked requests, and tell the
        controller through `/log_dir_event_notification` so that it moves their leaderships away."""
        offline = [tp for tp, partition in self.partitions.items() if partition.log.parent_dir == directory]
        log.error(
            "Stopping serving replicas in dir %s: %s",
            directory,
            ",".join(map(str, offline)) or "no partitions",
        )
        for tp in offline:
            self._remove_from_fetchers(tp)
            self._leadership_lost(tp)
        for partition in self.partitions.values():
            if partition.future_log is not None and partition.future_log.parent_dir == directory:
                log.error("Stopped moving %s to the failed log dir %s", partition.tp, directory)
                self.alter_log_dirs.remove_partition(partition.tp)
                partition.future_log = None
                self.log_manager.remove_future_log(partition.tp.topic, partition.tp.partition, delete=False)
        asyncio.get_running_loop().create_task(self._report_log_dir_failure(directory))

    async def _report_log_dir_failure(self, directory: Path) -> None:
        for _ in range(10):
            try:
                await asyncio.get_running_loop().run_in_executor(None, self.zk.propagate_log_dir_event, self.broker_id)
                log.error("Broker %s reported the failure of log dir %s to the controller", self.broker_id, directory)
                return
            except Exception as error:  # noqa: BLE001 - ZooKeeper unavailable: retry for a while
                log.warning("Could not report the failure of log dir %s: %s", directory, error)
                await asyncio.sleep(1)

    # --- topic configs ---------------------------------------------------------------------------------

    def _load_topic_config(self, topic: str) -> None:
        if topic not in self._topic_configs:
            overrides, _ = self.zk.get_entity_config("topics", topic)
            self.apply_topic_config(topic, overrides)

    def apply_topic_config(self, topic: str, overrides: dict[str, str]) -> None:
        """New overrides for a topic (at first use, and on every config-change notification)."""
        try:
            self.log_manager.set_topic_config(topic, overrides)
        except BrokerError as error:
            log.error("Ignoring invalid configs of topic %s: %s", topic, error)
        except Exception as error:  # noqa: BLE001 - InvalidConfigurationError and friends: keep the old config
            log.error("Ignoring invalid configs of topic %s: %s", topic, error)
        self._topic_configs[topic] = dict(overrides)
        self._leader_throttled[topic] = throttles.throttled_partitions(
            overrides, throttles.LEADER_THROTTLED_REPLICAS, self.broker_id
        )
        self._follower_throttled[topic] = throttles.throttled_partitions(
            overrides, throttles.FOLLOWER_THROTTLED_REPLICAS, self.broker_id
        )

    def apply_broker_config(self, overrides: dict[str, str], log_defaults: LogConfig | None = None) -> None:
        """This broker's dynamic configs (`/config/brokers/<id>` over `<default>`): the throttle rates (of
        replication, and of moves between log dirs), the default min.insync.replicas, and (given) the topics'
        log defaults they make."""
        self.leader_quota.rate = throttles.parse_rate(overrides.get(throttles.LEADER_THROTTLED_RATE))
        self.follower_quota.rate = throttles.parse_rate(overrides.get(throttles.FOLLOWER_THROTTLED_RATE))
        self.alter_log_dirs.quota.rate = throttles.parse_rate(
            overrides.get(throttles.ALTER_LOG_DIRS_IO_MAX_BYTES_PER_SECOND)
        )
        min_isr = overrides.get("min.insync.replicas")
        self._default_min_isr = (
            int(min_isr) if min_isr is not None and min_isr.strip().isdigit() else self.config.min_insync_replicas
        )
        if log_defaults is not None:
            self.log_manager.set_default_config(log_defaults)

    def _is_throttled(self, table: dict[str, frozenset[int] | None], tp: TopicPartition) -> bool:
        if tp.topic not in table:
            return False
        partitions = table[tp.topic]
        return partitions is None or tp.partition in partitions

    def _leader_should_throttle(self, partition: Partition, replica_id: int) -> bool:
        """`shouldLeaderThrottle`: a throttled partition serving a follower outside the ISR, over the rate."""
        return (
            replica_id not in partition.isr
            and self._is_throttled(self._leader_throttled, partition.tp)
            and self.leader_quota.exceeded(self.clock())
        )

    def _follower_should_throttle(self, partition: Partition, in_sync: bool) -> bool:
        return (
            not in_sync
            and self._is_throttled(self._follower_throttled, partition.tp)
            and self.follower_quota.exceeded(self.clock())
        )

    def min_insync_replicas(self, topic: str) -> int:
        value = self._topic_configs.get(topic, {}).get("min.insync.replicas")
        try:
            return int(value) if value is not None else self._default_min_isr
        except ValueError:
            return self._default_min_isr

    # --- parked requests -------------------------------------------------------------------------------

    def _wake_fetches(self, tp: TopicPartition) -> None:
        self.fetch_purgatory.check_and_complete(tp)

    def _high_watermark_moved(self, tp: TopicPartition) -> None:
        self.produce_purgatory.check_and_complete(tp)
        self.fetch_purgatory.check_and_complete(tp)
        self.delete_records_purgatory.check_and_complete(tp)

    def _leadership_lost(self, tp: TopicPartition) -> None:
        """After this broker stopped leading `tp` (or its log went offline): parked produces and
        DeleteRecords of it fail."""
        self.produce_purgatory.check_and_complete(tp)
        self.fetch_purgatory.check_and_complete(tp)
        self.delete_records_purgatory.check_and_complete(tp)

    def _leads(self, tp: TopicPartition, partition: Partition) -> bool:
        """Whether this broker still leads `tp` with `partition`, for a parked produce."""
        return (
            not self._stopped
            and self.partitions.get(tp) is partition
            and partition.is_leader
            and not partition.log.offline
        )

    # --- ISR -------------------------------------------------------------------------------------------

    def _change_isr(self, partition: Partition, new_isr: tuple[int, ...]) -> None:
        """Write the ISR change to ZooKeeper in the background; while it is in flight the HW counts the
        union of the old and new ISR (see partition.py). The changes made in one turn of the loop (one
        fetch answered, one shrink round) are sent together once it ends."""
        partition.pending_isr = new_isr
        leader_and_isr = LeaderAndIsr(partition.leader, partition.leader_epoch, new_isr, partition.zk_version)
        if not self._isr_writes:
            asyncio.get_running_loop().call_soon(self._send_isr_writes)
        self._isr_writes.append((partition, leader_and_isr))

    def _send_isr_writes(self) -> None:
        writes, self._isr_writes = self._isr_writes, []
        updates = [
            (partition.tp, LeaderIsrAndControllerEpoch(proposed, partition.controller_epoch), proposed.zk_version)
            for partition, proposed in writes
        ]
        loop = asyncio.get_running_loop()
        try:
            pending = self.zk.conditional_update_partition_states(updates)
        except Exception as error:  # noqa: BLE001 - not sent: each write settles as a failed one
            failed: asyncio.Future[int | None] = loop.create_future()
            failed.set_exception(error)
            pending = [failed] * len(writes)
        for (partition, proposed), written in zip(writes, pending, strict=True):
            loop.create_task(self._write_isr(partition, proposed, written))

    async def _write_isr(
        self, partition: Partition, proposed: LeaderAndIsr, written: asyncio.Future[int | None]
    ) -> None:
        tp = partition.tp
        try:
            version = await written
        except Exception as error:  # noqa: BLE001 - ZooKeeper unavailable: the next round proposes it again
            log.warning("Failed to update the ISR of %s: %s", tp, error)
            if partition.leader_epoch == proposed.leader_epoch and partition.is_leader:
                partition.pending_isr = None
            return
        if partition.leader_epoch != proposed.leader_epoch or not partition.is_leader:
            return  # a LeaderAndIsr overtook the write; its state stands
        if version is None:
            log.info(
                "[Partition %s broker=%s] Cached zkVersion %s not equal to that in zookeeper, skip updating ISR",
                tp,
                self.broker_id,
                proposed.zk_version,
            )
            partition.pending_isr = None
            return
        log.info(
            "[Partition %s broker=%s] ISR updated to %s and zkVersion updated to [%s]",
            tp,
            self.broker_id,
            ",".join(map(str, proposed.isr)),
            version,
        )
        partition.isr_written(proposed.isr, version)
        self._isr_changes.add(tp)
        self._last_isr_change_ms = self.now_ms()
        if partition.maybe_increment_high_watermark():
            self._high_watermark_moved(tp)
        # followers that qualified while this write was in flight need not wait for their next fetch
        new_isr = partition.isr_to_expand()
        if new_isr is not None:
            self._expand_isr(partition, new_isr)

    def _shrink_isrs(self) -> None:
        now = self.now_ms()
        for partition in self.partitions.values():
            new_isr = partition.isr_to_shrink(now, self.config.replica_lag_time_max_ms)
            if new_isr is not None:
                log.info(
                    "[Partition %s broker=%s] Shrinking ISR from %s to %s. Leader: (highWatermark: %s, endOffset: %s).",
                    partition.tp,
                    self.broker_id,
                    ",".join(map(str, partition.isr)),
                    ",".join(map(str, new_isr)),
                    partition.high_watermark,
                    partition.log_end_offset,
                )
                self._change_isr(partition, new_isr)

    async def _maybe_propagate_isr_changes(self) -> None:
        now = self.now_ms()
        if not isr_rules.should_propagate_isr_changes(
            pending=bool(self._isr_changes),
            last_change_ms=self._last_isr_change_ms,
            last_propagation_ms=self._last_isr_propagation_ms,
            now_ms=now,
        ):
            return
        changed, self._isr_changes = self._isr_changes, set()
        try:
            await asyncio.get_running_loop().run_in_executor(None, self.zk.propagate_isr_changes, changed)
        except Exception as error:  # noqa: BLE001 - keep them for the next round
            log.warning("Failed to propagate ISR changes: %s", error)
            self._isr_changes |= changed
            return
        self._last_isr_propagation_ms = now

    # --- lookups ---------------------------------------------------------------------------------------

    def _unknown_code(self, tp: TopicPartition) -> int:
        """Not hosted here: a partition the cluster knows is someone else's (Kafka's NotLeaderOrFollower),
        else unknown."""
        known = self.metadata_cache.partitions(tp.topic)
        return NOT_LEADER_OR_FOLLOWER if known is not None and tp.partition in known else UNKNOWN_TOPIC_OR_PARTITION

    def _partition_for(self, tp: TopicPartition, *, leader_only: bool, current_leader_epoch: int = -1) -> Partition:
        """The partition if this broker may serve the request; raises the Kafka error otherwise."""
        partition = self.partitions.get(tp)
        if partition is None:
            code = self._unknown_code(tp)
            raise errors.from_code(code, f"This server does not host this topic-partition {tp}")
        if partition.log.offline:
            raise errors.KafkaStorageError(f"The log of {tp} is in an offline log directory")
        if leader_only and not partition.is_leader:
            raise errors.NotLeaderOrFollowerError(f"Leader not local for partition {tp} on broker {self.broker_id}")
        if current_leader_epoch != -1:
            if current_leader_epoch < partition.leader_epoch:
                raise errors.FencedLeaderEpochError(
                    f"The leader epoch in the request {current_leader_epoch} is older than the current "
                    f"{partition.leader_epoch}"
                )
            if current_leader_epoch > partition.leader_epoch:
                raise errors.UnknownLeaderEpochError(
                    f"The leader epoch in the request {current_leader_epoch} is newer than the current "
                    f"{partition.leader_epoch}"
                )
        return partition

    # --- Produce ---------------------------------------------------------------------------------------

    async def append_records(
        self, request: ProduceRequest, internal_topics_allowed: bool = False
    ) -> list[ProducePartitionResult]:
        """`handleProduceRequest` → `appendRecords`, with the acks=all wait (kafka-protocol.md §5); one
        result per partition of the request, in its order. Only the coordinators (`internal_topics_allowed`)
        append to the internal topics."""
        acks = request.acks
        results: dict[TopicPartition, ProducePartitionResult] = {}
        waiting: dict[TopicPartition, ProducePartitionStatus] = {}
        for data in request.partitions:
            tp = data.tp
            code = self._append_error(request, tp, internal_topics_allowed)
            if code == NONE:
                try:
                    batch = validate_produce_records(data.records, request.version)
                    partition = self._partition_for(tp, leader_only=True)
                    appended = partition.append_as_leader(
                        batch.data, batch.header, acks, self.min_insync_replicas(tp.topic)
                    )
                except BrokerError as error:
                    code = error.code
                except LogDirFailureError as error:
                    log.error("Append to %s failed: %s", tp, error)
                    code = KAFKA_STORAGE_ERROR
            if code != NONE:
                results[tp] = ProducePartitionResult(tp, code)
                continue
            results[tp] = ProducePartitionResult(tp, NONE, appended.first_offset, appended.log_start_offset)
            if not appended.duplicate:
                self._wake_fetches(tp)
                if partition.maybe_increment_high_watermark():
                    self._high_watermark_moved(tp)
            if acks == -1:
                waiting[tp] = ProducePartitionStatus(partition, appended.last_offset + 1)
        if waiting:
            await self._wait_for_acks(request.timeout_ms, waiting, results)
        return [results[data.tp] for data in request.partitions]

    @staticmethod
    def _append_error(request: ProduceRequest, tp: TopicPartition, internal_topics_allowed: bool) -> int:
        """What refuses a produce before any append."""
        if tp.topic in INTERNAL_TOPICS and not internal_topics_allowed:
            log.debug("Cannot append to internal topic %s", tp.topic)
            return errors.InvalidTopicError.code
        if request.acks not in (-1, 0, 1):
            return errors.InvalidRequiredAcksError.code
        if request.transactional_id is not None:
            return errors.TransactionalIdAuthorizationFailedError.code
        return NONE

    async def _wait_for_acks(
        self,
        timeout_ms: int,
        waiting: dict[TopicPartition, ProducePartitionStatus],
        results: dict[TopicPartition, ProducePartitionResult],
    ) -> None:
        """Park the acks=all produce until the ISR has its batches; a partition's error replaces its result
        (base offset -1, log start offset kept)."""
        produce = DelayedProduce(timeout_ms, waiting, self._leads, self.min_insync_replicas)
        self.produce_purgatory.try_complete_else_watch(produce)
        for tp, code in (await produce.result()).items():
            if code != NONE:
                results[tp] = ProducePartitionResult(tp, code, -1, results[tp].log_start_offset)

    # --- Fetch -----------------------------------------------------------------------------------------

    async def fetch_messages(self, request: FetchRequest) -> FetchResult:
        """`handleFetchRequest` → `fetchMessages` (kafka-protocol.md §6); a follower's requests belong to an
        incremental fetch session (KIP-227, fetch_session.py), a consumer's are sessionless."""
        replica_id = request.replica_id
        session, incremental, code = self.fetch_sessions.resolve(request.session_id, request.session_epoch, replica_id)
        if code != NONE:
            return FetchResult(code, 0, [])
        requested: Sequence[FetchPartition] = request.partitions
        if session is not None:
            requested = session.take(requested, request.forgotten, incremental)
        if request.is_from_follower:
            self._record_follower_fetches(replica_id, requested)

        def read() -> FetchRead:
            # an incremental fetch reads only what may have something to say: at scale most partitions do not
            reading = [p for p in requested if self._may_answer(session, p)] if session and incremental else requested
            return self._read_from_local_log(request, reading)

        fetch = DelayedFetch(request.max_wait_ms, request.min_bytes, request.is_from_follower, requested, read)
        self.fetch_purgatory.try_complete_else_watch(fetch)
        answers = await fetch.result()
        if session is not None:
            answers = session.respond(answers, incremental)
        return FetchResult(NONE, session.id if session is not None else SESSIONLESS, answers)

    def _may_answer(self, session: FetchSession, request: FetchPartition) -> bool:
        """Whether a partition of an incremental fetch can have records, an error, or a HW or log start
        offset the follower was not told yet."""
        partition = self.partitions.get(request.tp)
        if partition is None or not partition.is_leader or partition.log.offline:
            return True
        log_ = partition.log
        return (
            request.fetch_offset != log_.log_end_offset
            or request.current_leader_epoch not in (-1, partition.leader_epoch)
            or session.must_answer(request.tp, partition.high_watermark, log_.log_start_offset)
        )

    def _record_follower_fetches(self, replica_id: int, requested: Sequence[FetchPartition]) -> None:
        """The leader's side of a follower fetch: its position, maybe an ISR expansion, maybe a HW move."""
        now = self.now_ms()
        for request in requested:
            tp = request.tp
            partition = self.partitions.get(tp)
            if partition is None or not partition.is_leader or replica_id not in partition.replicas:
                continue
            if request.current_leader_epoch not in (-1, partition.leader_epoch):
                continue
            if partition.follower_fetched_at_end(replica_id, request.fetch_offset, now, request.log_start_offset):
                continue
            new_isr = partition.follower_fetched(replica_id, request.fetch_offset, now, request.log_start_offset)
            if new_isr is not None:
                self._expand_isr(partition, new_isr)
            if partition.maybe_increment_high_watermark():
                self._high_watermark_moved(tp)
            self.delete_records_purgatory.check_and_complete(tp)  # its low watermark may have moved

    def _expand_isr(self, partition: Partition, new_isr: tuple[int, ...]) -> None:
        log.info(
            "[Partition %s broker=%s] Expanding ISR from %s to %s",
            partition.tp,
            self.broker_id,
            ",".join(map(str, partition.isr)),
            ",".join(map(str, new_isr)),
        )
        self._change_isr(partition, new_isr)

    def _read_from_local_log(self, request: FetchRequest, reading: Sequence[FetchPartition]) -> FetchRead:
        """Kafka's `readFromLocalLog`: each partition's records from its fetch offset, within the
        request's byte budget; followers read to the LEO, consumers to the HW."""
        replica_id = request.replica_id
        budget = request.max_bytes
        answers: list[FetchPartitionResult] = []
        total, any_error = 0, False
        for wanted in reading:
            try:
                answer = self._read_partition(replica_id, wanted, budget, first=total == 0)
            except BrokerError as error:
                answer = FetchPartitionResult(wanted.tp, error.code)
            except LogDirFailureError:
                answer = FetchPartitionResult(wanted.tp, KAFKA_STORAGE_ERROR)
            answers.append(answer)
            if answer.error_code != NONE:
                any_error = True
                continue
            size = len(answer.records)
            total += size
            budget = max(0, budget - size)
        return FetchRead(answers, total, any_error)

    def _read_partition(
        self, replica_id: int, wanted: FetchPartition, budget: int, first: bool
    ) -> FetchPartitionResult:
        """One partition of a fetch. Raises the Kafka error to answer, or LogDirFailureError."""
        tp = wanted.tp
        from_follower = replica_id >= 0
        partition = self._partition_for(
            tp, leader_only=replica_id != DEBUGGING_REPLICA_ID, current_leader_epoch=wanted.current_leader_epoch
        )
        if from_follower and replica_id not in partition.replicas:
            raise errors.NotLeaderOrFollowerError(f"Replica {replica_id} is not a replica of {tp}")
        max_offset = None if from_follower else partition.high_watermark
        limit = min(wanted.max_bytes, budget)
        throttled = from_follower and replica_id not in partition.isr
        if throttled and self._leader_should_throttle(partition, replica_id):
            limit = 0  # over the leader's replication quota: this round sends no data for it
        fetch_offset, log_ = wanted.fetch_offset, partition.log
        if wanted.last_fetched_epoch >= 0:
            # Kafka 2.8's Partition.readRecords: a fetcher whose last epoch the leader's log ends differently
            # (an older epoch, or an end before the fetch offset) gets no records, the point where it diverges
            epoch, end_offset = log_.end_offset_for_epoch(wanted.last_fetched_epoch)
            if epoch < wanted.last_fetched_epoch or end_offset < fetch_offset:
                return FetchPartitionResult(
                    tp, NONE, partition.high_watermark, log_.log_start_offset, b"", (epoch, end_offset)
                )
        records: FileRecords | bytes
        if fetch_offset == log_.log_end_offset and fetch_offset >= log_.log_start_offset:
            # at the end: nothing to read (most partitions of an idle follower's fetch, twice a second)
            records, log_start_offset = b"", log_.log_start_offset
        else:
            # the batches stay in their file: the network layer sends them with sendfile (socket_server)
            result = log_.read_file_records(fetch_offset, limit, max_offset, min_one_batch=first and limit > 0)
            records, log_start_offset = result.records, result.log_start_offset
        if throttled and self._is_throttled(self._leader_throttled, tp):
            self.leader_quota.record(len(records), self.clock())
        return FetchPartitionResult(tp, NONE, partition.high_watermark, log_start_offset, records)

    # --- ListOffsets -----------------------------------------------------------------------------------

    def fetch_offset_for_timestamp(self, request: ListOffsetsPartition, replica_id: int) -> ListOffsetsPartitionResult:
        """One partition of `handleListOffsetRequest` v1+ (kafka-protocol.md §7); there are no transactions,
        so both isolation levels read the same offsets."""
        tp = request.tp
        try:
            partition = self._partition_for(
                tp, leader_only=replica_id != DEBUGGING_REPLICA_ID, current_leader_epoch=request.current_leader_epoch
            )
            return self._offset_for(partition, request.timestamp, replica_id, request.current_leader_epoch)
        except BrokerError as error:
            return ListOffsetsPartitionResult(tp, error.code)
        except LogDirFailureError:
            return ListOffsetsPartitionResult(tp, KAFKA_STORAGE_ERROR)

    @staticmethod
    def _offset_for(
        partition: Partition, timestamp: int, replica_id: int, current_leader_epoch: int
    ) -> ListOffsetsPartitionResult:
        tp = partition.tp
        from_consumer = replica_id == CONSUMER_REPLICA_ID
        latest_epoch = partition.log.latest_epoch
        epoch = latest_epoch if latest_epoch is not None else -1
        # A new leader's HW may still be below what the old one had committed until its followers fetch
        # again: a client asking for "latest" then would see the end of the log move backwards (KIP-207).
        lagging = (
            from_consumer and partition.is_leader and partition.leader_epoch_start_offset > partition.high_watermark
        )
        if timestamp == LATEST_TIMESTAMP:
            if lagging:
                raise errors.OffsetNotAvailableError(_hw_lagging(partition, current_leader_epoch))
            offset = partition.high_watermark if from_consumer else partition.log_end_offset
            return ListOffsetsPartitionResult(tp, NONE, -1, offset, epoch)
        if timestamp == EARLIEST_TIMESTAMP:
            return ListOffsetsPartitionResult(tp, NONE, -1, partition.log.log_start_offset, epoch)
        found = partition.log.offset_for_timestamp(timestamp)
        if found is None or (from_consumer and found.offset >= partition.high_watermark):
            if lagging:
                raise errors.OffsetNotAvailableError(_hw_lagging(partition, current_leader_epoch))
            return ListOffsetsPartitionResult(tp, NONE, -1, -1, -1)
        return ListOffsetsPartitionResult(tp, NONE, found.timestamp, found.offset, epoch)

    # --- OffsetForLeaderEpoch --------------------------------------------------------------------------

    def last_offset_for_leader_epoch(self, request: OffsetForLeaderEpochPartition, replica_id: int) -> EpochEndOffset:
        """One partition of `handleOffsetForLeaderEpochRequest` (kafka-protocol.md §8): the end offset of
        an epoch."""
        tp = request.tp
        try:
            partition = self._partition_for(
                tp, leader_only=replica_id != DEBUGGING_REPLICA_ID, current_leader_epoch=request.current_leader_epoch
            )
            epoch, end_offset = partition.log.end_offset_for_epoch(request.leader_epoch)
        except BrokerError as error:
            return EpochEndOffset(tp, error.code, UNDEFINED_EPOCH)
        except LogDirFailureError:
            return EpochEndOffset(tp, KAFKA_STORAGE_ERROR, UNDEFINED_EPOCH)
        return EpochEndOffset(tp, NONE, epoch, end_offset)

    # --- DeleteRecords ---------------------------------------------------------------------------------

    async def delete_records(
        self, timeout_ms: int, offsets: Mapping[TopicPartition, int]
    ) -> dict[TopicPartition, DeleteRecordsPartitionStatus]:
        """Kafka's `deleteRecords`: each partition's leader moves its log start offset (`deleteRecordsOnLocalLog`),
        then the answer waits in the purgatory until every live replica's log start offset is there, within
        `timeout_ms`. The leaders' log start offset checkpoints are written and the segments wholly below
        the new log start offsets deleted now, off the loop, rather than at the next periodic run."""
        statuses: dict[TopicPartition, DeleteRecordsPartitionStatus] = {}
        moved: list[Partition] = []
        for tp, offset in offsets.items():
            try:
                if tp.topic in INTERNAL_TOPICS:
                    raise errors.InvalidTopicError(f"Cannot delete records of internal topic {tp.topic}")
                partition = self._partition_for(tp, leader_only=True)
                requested = partition.delete_records_on_leader(offset)
                low_watermark = partition.low_watermark(self._alive_broker_ids().__contains__)
            except BrokerError as error:
                statuses[tp] = DeleteRecordsPartitionStatus(-1, error.code)
                continue
            except LogDirFailureError:
                statuses[tp] = DeleteRecordsPartitionStatus(-1, KAFKA_STORAGE_ERROR)
                continue
            statuses[tp] = DeleteRecordsPartitionStatus(requested, NONE, low_watermark)
            moved.append(partition)
        if moved:
            asyncio.get_running_loop().run_in_executor(None, self._after_delete_records, moved)
        if any(s.error_code == NONE and s.low_watermark < s.required_offset for s in statuses.values()):
            delayed = DelayedDeleteRecords(timeout_ms, statuses, self._low_watermark_of)
            self.delete_records_purgatory.try_complete_else_watch(delayed)
            statuses = await delayed.result()
        return statuses

    def _after_delete_records(self, partitions: list[Partition]) -> None:
        for partition in partitions:
            try:
                partition.log.delete_old_segments()
            except LogDirFailureError:
                continue
        for directory in {partition.log.parent_dir for partition in partitions}:
            self.log_manager.checkpoint_log_start_offsets(directory)

    def _alive_broker_ids(self) -> set[int]:
        return {broker.broker_id for broker in self.metadata_cache.alive_brokers()}

    def _low_watermark_of(self, tp: TopicPartition) -> tuple[int, int]:
        """(error code, low watermark) for a parked DeleteRecords (`DelayedDeleteRecords.tryComplete`)."""
        partition = self.partitions.get(tp)
        if self._stopped or partition is None:
            return UNKNOWN_TOPIC_OR_PARTITION, INVALID_LOW_WATERMARK
        if partition.log.offline:
            return KAFKA_STORAGE_ERROR, INVALID_LOW_WATERMARK
        if not partition.is_leader:
            return NOT_LEADER_OR_FOLLOWER, INVALID_LOW_WATERMARK
        return NONE, partition.low_watermark(self._alive_broker_ids().__contains__)

    # --- log dirs (replica_alter_log_dirs.py) ---------------------------------------------------------

    def alter_replica_log_dirs(self, partition_dirs: Mapping[TopicPartition, str]) -> dict[TopicPartition, int]:
        return self.alter_log_dirs.alter_replica_log_dirs(partition_dirs)

    def describe_log_dirs(self, partitions: Set[TopicPartition] | None) -> list[LogDirDescription]:
        return self.alter_log_dirs.describe_log_dirs(partitions)


def _hw_lagging(partition: Partition, current_leader_epoch: int) -> str:
    """Kafka's `Partition.fetchOffsetForTimestamp` text for OFFSET_NOT_AVAILABLE."""
    epoch = "unknown epoch" if current_leader_epoch == -1 else f"epoch {current_leader_epoch}"
    return (
        f"Failed to fetch offsets for partition {partition.tp} with leader {epoch} as this "
        f"partition's high watermark ({partition.high_watermark}) is lagging behind the start offset from the "
        f"beginning of this epoch ({partition.leader_epoch_start_offset})."
    )
