"""The broker's replica manager: the partitions it leads or follows, their logs, and the data plane.

Control (Kafka's `becomeLeaderOrFollower` / `stopReplicas`): a request from an older controller epoch
is refused (STALE_CONTROLLER_EPOCH); a partition state with an older or equal leader epoch is ignored;
a partition this broker is not a replica of is refused. Every decision is written to the state-change
log in Kafka 2.8's words. Leaders open their epoch; followers start fetching (replica_fetcher.py).

Data (kafka-protocol.md §5–§8, §13): Produce appends to leaders, answers `acks=1` at once and parks
`acks=all` until the high watermark passes the batch; Fetch reads up to the HW for consumers and up to
the LEO for followers, whose positions move the ISR and the HW; a fetch that finds too little waits
for an append or a HW move. The leader writes ISR changes to the partition-state znode itself,
conditionally on its zk_version (Kafka ≤ 2.6), and tells the controller through
`/isr_change_notification`.

Threads: everything here runs on the broker's event loop, so partitions need no locks; ZooKeeper
writes, flushes and checkpoints go to the loop's executor. Only `accept_controller_epoch` is also
called from an executor thread (UpdateMetadata), hence its lock.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kafkaops.cluster.broker import isr as isr_rules
from kafkaops.cluster.broker import quota as throttles
from kafkaops.cluster.broker.config import BrokerConfig
from kafkaops.cluster.broker.fetch_session import SESSIONLESS, FetchSession, FetchSessionCache
from kafkaops.cluster.broker.metadata_cache import MetadataCache
from kafkaops.cluster.broker.partition import Partition
from kafkaops.cluster.broker.replica_fetcher import ReplicaFetcher
from kafkaops.cluster.errors import LogDirFailureError
from kafkaops.cluster.log import UNDEFINED_EPOCH, LogManager
from kafkaops.cluster.protocol import errors
from kafkaops.cluster.protocol.errors import BrokerError
from kafkaops.cluster.protocol.records import validate_produce_records
from kafkaops.cluster.protocol.schemas import flatten_partition_states, flatten_stop_replica_partitions
from kafkaops.cluster.state_change_log import (
    BrokerLog,
    LeaderAndIsrPartitionState,
    Level,
    StateChangeEntry,
    StateChangeLogFile,
    StopReplicaPartitionState,
)
from kafkaops.cluster.zk.client import KafkaZkClient
from kafkaops.cluster.zk.values import LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition

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
READ_COMMITTED = 1
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
    ) -> None:
        self.broker_id = broker_id
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
        self.leader_quota = throttles.ReplicationQuota()
        self.follower_quota = throttles.ReplicationQuota()
        self._leader_throttled: dict[str, frozenset[int] | None] = {}
        self._follower_throttled: dict[str, frozenset[int] | None] = {}
        self._produce_waiters: dict[TopicPartition, list[tuple[int, asyncio.Future[bool]]]] = {}
        self._fetch_waiters: dict[TopicPartition, set[asyncio.Future[None]]] = {}
        self.fetch_sessions = FetchSessionCache()
        self._isr_changes: set[TopicPartition] = set()
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
        for waiters in self._produce_waiters.values():
            for _, future in waiters:
                if not future.done():
                    future.set_result(False)

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

    # --- LeaderAndIsr ----------------------------------------------------------------------------------

    def become_leader_or_follower(self, correlation_id: int, body: dict[str, Any]) -> dict[str, Any]:
        """Apply a LeaderAndIsr request; returns the response body."""
        started = time.monotonic()
        controller_id, controller_epoch = body["controller_id"], body["controller_epoch"]
        states = flatten_partition_states(body)
        write = self.sink.write
        write(self.log.handling_leader_and_isr(correlation_id, controller_id, len(states)))
        if not self.accept_controller_epoch(
            controller_epoch,
            lambda latest: self.log.ignoring_leader_and_isr_stale_controller(
                controller_id, correlation_id, controller_epoch, latest
            ),
        ):
            return {"error_code": STALE_CONTROLLER_EPOCH, "partition_errors": []}
        leaders = {b["broker_id"]: (b["host_name"], b["port"]) for b in body["live_leaders"]}
        partition_errors = []
        for state in states:
            tp = TopicPartition(state["topic_name"], state["partition_index"])
            if self.sink.enabled(Level.TRACE):
                write(
                    self.log.received_leader_and_isr(_printable(state), correlation_id, controller_id, controller_epoch)
                )
            try:
                code = self._apply(tp, state, leaders, correlation_id, controller_id, controller_epoch)
            except LogDirFailureError as error:
                log.error("Cannot make %s a replica of %s: %s", self.broker_id, tp, error)
                code = KAFKA_STORAGE_ERROR
            partition_errors.append({"topic_name": tp.topic, "partition_index": tp.partition, "error_code": code})
        elapsed_ms = int((time.monotonic() - started) * 1000)
        write(self.log.finished_leader_and_isr(elapsed_ms, correlation_id, controller_id, len(states)))
        self.sink.flush()
        return {"error_code": NONE, "partition_errors": partition_errors}

    def _apply(
        self,
        tp: TopicPartition,
        state: dict[str, Any],
        leaders: dict[int, tuple[str, int]],
        correlation_id: int,
        controller_id: int,
        epoch: int,
    ) -> int:
        write = self.sink.write
        if self.broker_id not in state["replicas"]:
            write(
                self.log.ignoring_leader_and_isr_not_a_replica(
                    controller_id, correlation_id, epoch, tp, state["replicas"]
                )
            )
            return UNKNOWN_TOPIC_OR_PARTITION
        partition = self.partitions.get(tp)
        previous_epoch = partition.leader_epoch if partition is not None else -1
        if partition is not None and partition.log.offline:
            write(self.log.ignoring_leader_and_isr_offline_dir(controller_id, correlation_id, epoch, tp))
            return KAFKA_STORAGE_ERROR
        if partition is not None and state["leader_epoch"] < partition.leader_epoch:
            write(
                self.log.ignoring_leader_and_isr_stale_leader_epoch(
                    controller_id, correlation_id, epoch, tp, state["leader_epoch"], partition.leader_epoch
                )
            )
            return STALE_CONTROLLER_EPOCH
        if partition is not None and state["leader_epoch"] == partition.leader_epoch:
            write(
                self.log.ignoring_leader_and_isr_same_leader_epoch(
                    controller_id, correlation_id, epoch, tp, state["leader_epoch"]
                )
            )
            return STALE_CONTROLLER_EPOCH
        if partition is None:
            self._load_topic_config(tp.topic)
            partition = Partition(tp, self.broker_id, self.log_manager.get_or_create_log(tp.topic, tp.partition))
            self.partitions[tp] = partition
        if state["leader"] == self.broker_id:
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
            write(self.log.completed_become_leader(correlation_id, controller_id, epoch, tp))
            self._high_watermark_moved(tp)
        else:
            write(self.log.starting_become_follower(correlation_id, controller_id, epoch, tp, state["leader"]))
            self._remove_from_fetchers(tp)
            partition.make_follower(state)
            self._leadership_lost(tp)
            write(
                self.log.follower_starts(
                    tp, partition.leader_epoch, partition.log_end_offset, partition.high_watermark, previous_epoch
                )
            )
            address = leaders.get(partition.leader)
            if address is not None:
                self._fetcher_for(partition.leader, address).add_partition(partition)
            write(self.log.completed_become_follower(correlation_id, controller_id, epoch, tp, partition.leader))
        return NONE

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
        )
        self.fetchers[leader] = fetcher
        return fetcher

    def _remove_from_fetchers(self, tp: TopicPartition) -> None:
        for fetcher in self.fetchers.values():
            fetcher.remove_partition(tp)

    # --- StopReplica -----------------------------------------------------------------------------------

    def stop_replicas(self, correlation_id: int, body: dict[str, Any]) -> dict[str, Any]:
        controller_id, controller_epoch = body["controller_id"], body["controller_epoch"]
        partitions = flatten_stop_replica_partitions(body)
        write = self.sink.write
        write(self.log.handling_stop_replica(correlation_id, controller_id, len(partitions)))
        if not self.accept_controller_epoch(
            controller_epoch,
            lambda latest: self.log.ignoring_stop_replica_stale_controller(
                controller_id, correlation_id, controller_epoch, latest
            ),
        ):
            return {"error_code": STALE_CONTROLLER_EPOCH, "partition_errors": []}
        delete = body["delete_partitions"]
        for topic, index in partitions:
            tp = TopicPartition(topic, index)
            partition = self.partitions.get(tp)
            state = StopReplicaPartitionState(index, partition.leader_epoch if partition else -1, delete)
            if self.sink.enabled(Level.TRACE):
                write(self.log.received_stop_replica(state, tp, correlation_id, controller_id, controller_epoch))
            self._remove_from_fetchers(tp)
            self._leadership_lost(tp)
            if delete:
                self.partitions.pop(tp, None)
            elif partition is not None:
                partition.stop_leading()
        failed = self.log_manager.delete_logs(partitions) if delete else {}
        self.sink.flush()
        return {
            "error_code": NONE,
            "partition_errors": [
                {
                    "topic_name": topic,
                    "partition_index": index,
                    "error_code": NONE if failed.get((topic, index)) is None else KAFKA_STORAGE_ERROR,
                }
                for topic, index in partitions
            ],
        }

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

    def apply_broker_config(self, overrides: dict[str, str]) -> None:
        """This broker's dynamic configs (`/config/brokers/<id>` over `<default>`): the throttle rates."""
        self.leader_quota.rate = throttles.parse_rate(overrides.get(throttles.LEADER_THROTTLED_RATE))
        self.follower_quota.rate = throttles.parse_rate(overrides.get(throttles.FOLLOWER_THROTTLED_RATE))

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
            return int(value) if value is not None else self.config.min_insync_replicas
        except ValueError:
            return self.config.min_insync_replicas

    # --- waking parked requests ------------------------------------------------------------------------

    def _wake_fetches(self, tp: TopicPartition) -> None:
        for future in self._fetch_waiters.pop(tp, ()):
            if not future.done():
                future.set_result(None)

    def _high_watermark_moved(self, tp: TopicPartition) -> None:
        partition = self.partitions.get(tp)
        waiters = self._produce_waiters.get(tp)
        if partition is not None and waiters:
            hw = partition.high_watermark
            remaining = []
            for required, future in waiters:
                if future.done():
                    continue
                if required <= hw:
                    future.set_result(True)
                else:
                    remaining.append((required, future))
            self._produce_waiters[tp] = remaining
        self._wake_fetches(tp)

    def _leadership_lost(self, tp: TopicPartition) -> None:
        for _, future in self._produce_waiters.pop(tp, ()):
            if not future.done():
                future.set_result(False)
        self._wake_fetches(tp)

    # --- ISR -------------------------------------------------------------------------------------------

    def _change_isr(self, partition: Partition, new_isr: tuple[int, ...]) -> None:
        """Write the ISR change to ZooKeeper in the background; while it is in flight the HW counts the
        union of the old and new ISR (see partition.py)."""
        partition.pending_isr = new_isr
        leader_and_isr = LeaderAndIsr(partition.leader, partition.leader_epoch, new_isr, partition.zk_version)
        asyncio.get_running_loop().create_task(self._write_isr(partition, leader_and_isr))

    async def _write_isr(self, partition: Partition, proposed: LeaderAndIsr) -> None:
        tp = partition.tp
        state = LeaderIsrAndControllerEpoch(proposed, partition.controller_epoch)
        try:
            version = await self.zk.conditional_update_partition_state(tp, state, proposed.zk_version)
        except Exception as error:  # noqa: BLE001 - ZooKeeper unavailable: try again on the next round
            log.warning("Failed to update the ISR of %s: %s", tp, error)
            version = None
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

    async def produce(self, body: dict[str, Any], api_version: int) -> dict[str, Any]:
        """`handleProduceRequest` → `appendRecords`, with the acks=all wait (kafka-protocol.md §5)."""
        acks, timeout_ms = body["acks"], body["timeout_ms"]
        results: dict[TopicPartition, dict[str, Any]] = {}
        order: list[TopicPartition] = []
        waits: list[tuple[TopicPartition, Partition, int, asyncio.Future[bool]]] = []
        loop = asyncio.get_running_loop()
        for topic in body["topic_data"]:
            for data in topic["partition_data"]:
                tp = TopicPartition(topic["name"], data["index"])
                order.append(tp)
                results[tp] = {"error_code": NONE, "base_offset": -1, "log_start_offset": -1}
                if acks not in (-1, 0, 1):
                    results[tp]["error_code"] = errors.InvalidRequiredAcksError.code
                    continue
                if body["transactional_id"] is not None:
                    results[tp]["error_code"] = errors.TransactionalIdAuthorizationFailedError.code
                    continue
                try:
                    batch = validate_produce_records(data["records"], api_version)
                    partition = self._partition_for(tp, leader_only=True)
                    appended = partition.append_as_leader(
                        batch.data, batch.header, acks, self.min_insync_replicas(tp.topic)
                    )
                except BrokerError as error:
                    results[tp]["error_code"] = error.code
                    continue
                except LogDirFailureError as error:
                    log.error("Append to %s failed: %s", tp, error)
                    results[tp]["error_code"] = KAFKA_STORAGE_ERROR
                    continue
                results[tp].update(base_offset=appended.first_offset, log_start_offset=appended.log_start_offset)
                if not appended.duplicate:
                    self._wake_fetches(tp)
                    if partition.maybe_increment_high_watermark():
                        self._high_watermark_moved(tp)
                if acks == -1:
                    required = appended.last_offset + 1
                    future: asyncio.Future[bool] = loop.create_future()
                    if partition.high_watermark >= required:
                        future.set_result(True)
                    else:
                        self._produce_waiters.setdefault(tp, []).append((required, future))
                    waits.append((tp, partition, required, future))
        pending = [future for *_, future in waits if not future.done()]
        if pending:
            await asyncio.wait(pending, timeout=max(timeout_ms, 0) / 1000)
        for tp, partition, _, future in waits:
            if not future.done():
                future.cancel()
                results[tp]["error_code"] = errors.RequestTimedOutError.code
            elif not future.result():
                results[tp]["error_code"] = NOT_LEADER_OR_FOLLOWER
            elif len(partition.isr) < self.min_insync_replicas(tp.topic):
                results[tp]["error_code"] = errors.NotEnoughReplicasAfterAppendError.code
        for tp in {tp for tp, *_ in waits}:
            waiters = self._produce_waiters.get(tp)
            if waiters:
                self._produce_waiters[tp] = [(r, f) for r, f in waiters if not f.done()]
        responses: dict[str, list[dict[str, Any]]] = {}
        for tp in order:
            result = results[tp]
            if result["error_code"] != NONE:
                result["base_offset"] = -1
            responses.setdefault(tp.topic, []).append(
                {
                    "index": tp.partition,
                    "error_code": result["error_code"],
                    "base_offset": result["base_offset"],
                    "log_append_time_ms": -1,
                    "log_start_offset": result["log_start_offset"],
                    "record_errors": [],
                    "error_message": None,
                }
            )
        return {
            "responses": [{"name": t, "partition_responses": ps} for t, ps in responses.items()],
            "throttle_time_ms": 0,
        }

    # --- Fetch -----------------------------------------------------------------------------------------

    async def fetch(self, body: dict[str, Any]) -> dict[str, Any]:
        """`handleFetchRequest` → `fetchMessages` (kafka-protocol.md §6); a follower's requests belong to an
        incremental fetch session (KIP-227, fetch_session.py), a consumer's are sessionless."""
        replica_id = body["replica_id"]
        session, incremental, code = self.fetch_sessions.resolve(body["session_id"], body["session_epoch"], replica_id)
        if code != NONE:
            return {"throttle_time_ms": 0, "error_code": code, "session_id": 0, "responses": []}
        requested = [
            (TopicPartition(topic["topic"], p["partition"]), p) for topic in body["topics"] for p in topic["partitions"]
        ]
        if session is not None:
            forgotten = [TopicPartition(t["topic"], p) for t in body["forgotten_topics_data"] for p in t["partitions"]]
            requested = session.take(requested, forgotten, incremental)
        if replica_id >= 0:
            self._record_follower_fetches(replica_id, requested)
        deadline = asyncio.get_running_loop().time() + max(body["max_wait_ms"], 0) / 1000
        while True:
            # an incremental fetch reads only what may have something to say: at scale most partitions do not
            reading = [r for r in requested if self._may_answer(session, *r)] if session and incremental else requested
            answers, total_bytes, any_error = self._read_for_fetch(body, reading)
            remaining = deadline - asyncio.get_running_loop().time()
            if total_bytes >= body["min_bytes"] or any_error or not requested or remaining <= 0:
                break
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            for tp, _ in requested:
                self._fetch_waiters.setdefault(tp, set()).add(waiter)
            try:
                async with asyncio.timeout(remaining):  # not wait_for: it can swallow a cancellation on 3.11
                    await waiter
            except TimeoutError:
                pass
            finally:
                for tp, _ in requested:
                    waiters = self._fetch_waiters.get(tp)
                    if waiters is not None:
                        waiters.discard(waiter)
            if replica_id >= 0 and not waiter.done():
                # a follower's fetch (of a leader's partitions only) expired and nothing woke it: no append,
                # HW move or leadership change since the read above, whose answers stand (an idle
                # follower's fetch of thousands of partitions is read once, not twice)
                break
        included = list(zip((tp for tp, _ in reading), answers, strict=True))
        if session is not None:
            included = session.respond(included, incremental)
        topics: dict[str, list[dict[str, Any]]] = {}
        for tp, answer in included:
            topics.setdefault(tp.topic, []).append(answer)
        return {
            "throttle_time_ms": 0,
            "error_code": NONE,
            "session_id": session.id if session is not None else SESSIONLESS,
            "responses": [{"topic": t, "partitions": ps} for t, ps in topics.items()],
        }

    def _may_answer(self, session: FetchSession, tp: TopicPartition, request: dict[str, Any]) -> bool:
        """Whether a partition of an incremental fetch can have records, an error, or a HW or log start
        offset the follower was not told yet."""
        partition = self.partitions.get(tp)
        if partition is None or not partition.is_leader or partition.log.offline:
            return True
        log_ = partition.log
        return (
            request["fetch_offset"] != log_.log_end_offset
            or request["current_leader_epoch"] not in (-1, partition.leader_epoch)
            or session.must_answer(tp, partition.high_watermark, log_.log_start_offset)
        )

    def _record_follower_fetches(self, replica_id: int, requested: list[tuple[TopicPartition, dict[str, Any]]]) -> None:
        """The leader's side of a follower fetch: its position, maybe an ISR expansion, maybe a HW move."""
        now = self.now_ms()
        for tp, request in requested:
            partition = self.partitions.get(tp)
            if partition is None or not partition.is_leader or replica_id not in partition.replicas:
                continue
            if request["current_leader_epoch"] not in (-1, partition.leader_epoch):
                continue
            new_isr = partition.follower_fetched(replica_id, request["fetch_offset"], now)
            if new_isr is not None:
                self._expand_isr(partition, new_isr)
            if partition.maybe_increment_high_watermark():
                self._high_watermark_moved(tp)

    def _expand_isr(self, partition: Partition, new_isr: tuple[int, ...]) -> None:
        log.info(
            "[Partition %s broker=%s] Expanding ISR from %s to %s",
            partition.tp,
            self.broker_id,
            ",".join(map(str, partition.isr)),
            ",".join(map(str, new_isr)),
        )
        self._change_isr(partition, new_isr)

    def _read_for_fetch(
        self, body: dict[str, Any], requested: list[tuple[TopicPartition, dict[str, Any]]]
    ) -> tuple[list[dict[str, Any]], int, bool]:
        replica_id = body["replica_id"]
        from_follower = replica_id >= 0
        budget = body["max_bytes"]
        answers: list[dict[str, Any]] = []
        total, any_error = 0, False
        for tp, request in requested:
            answer: dict[str, Any] = {
                "partition_index": tp.partition,
                "error_code": NONE,
                "high_watermark": -1,
                "last_stable_offset": -1,
                "log_start_offset": -1,
                "aborted_transactions": [],
                "preferred_read_replica": -1,
                "records": b"",
            }
            answers.append(answer)
            try:
                partition = self._partition_for(
                    tp,
                    leader_only=replica_id != DEBUGGING_REPLICA_ID,
                    current_leader_epoch=request["current_leader_epoch"],
                )
                if from_follower and replica_id not in partition.replicas:
                    raise errors.NotLeaderOrFollowerError(f"Replica {replica_id} is not a replica of {tp}")
                max_offset = None if from_follower else partition.high_watermark
                limit = min(request["partition_max_bytes"], budget)
                throttled = from_follower and replica_id not in partition.isr
                if throttled and self._leader_should_throttle(partition, replica_id):
                    limit = 0  # over the leader's replication quota: this round sends no data for it
                fetch_offset, log_ = request["fetch_offset"], partition.log
                if fetch_offset == log_.log_end_offset and fetch_offset >= log_.log_start_offset:
                    # at the end: nothing to read (most partitions of an idle follower's fetch, twice a second)
                    records, log_start_offset = b"", log_.log_start_offset
                else:
                    result = log_.read(fetch_offset, limit, max_offset, min_one_batch=total == 0 and limit > 0)
                    records, log_start_offset = result.records, result.log_start_offset
                if throttled and self._is_throttled(self._leader_throttled, tp):
                    self.leader_quota.record(len(records), self.clock())
            except BrokerError as error:
                answer["error_code"] = error.code
                any_error = True
                continue
            except LogDirFailureError:
                answer["error_code"] = KAFKA_STORAGE_ERROR
                any_error = True
                continue
            hw = partition.high_watermark
            answer.update(
                high_watermark=hw,
                last_stable_offset=hw,
                log_start_offset=log_start_offset,
                records=records,
            )
            total += len(records)
            budget = max(0, budget - len(records))
        return answers, total, any_error

    # --- ListOffsets -----------------------------------------------------------------------------------

    def list_offsets(self, body: dict[str, Any]) -> dict[str, Any]:
        """`handleListOffsetRequest` v1+ (kafka-protocol.md §7)."""
        replica_id, isolation = body["replica_id"], body["isolation_level"]
        seen: set[TopicPartition] = set()
        topics = []
        for topic in body["topics"]:
            partitions = []
            for request in topic["partitions"]:
                tp = TopicPartition(topic["name"], request["partition_index"])
                answer = {
                    "partition_index": tp.partition,
                    "error_code": NONE,
                    "timestamp": -1,
                    "offset": -1,
                    "leader_epoch": -1,
                }
                partitions.append(answer)
                if tp in seen:
                    answer["error_code"] = errors.InvalidRequestError.code
                    continue
                seen.add(tp)
                try:
                    partition = self._partition_for(
                        tp,
                        leader_only=replica_id != DEBUGGING_REPLICA_ID,
                        current_leader_epoch=request["current_leader_epoch"],
                    )
                    answer.update(self._offset_for(partition, request["timestamp"], replica_id, isolation))
                except BrokerError as error:
                    answer["error_code"] = error.code
                except LogDirFailureError:
                    answer["error_code"] = KAFKA_STORAGE_ERROR
            topics.append({"name": topic["name"], "partitions": partitions})
        return {"throttle_time_ms": 0, "topics": topics}

    @staticmethod
    def _offset_for(partition: Partition, timestamp: int, replica_id: int, isolation: int) -> dict[str, Any]:
        from_consumer = replica_id == CONSUMER_REPLICA_ID
        latest_epoch = partition.log.latest_epoch
        epoch = latest_epoch if latest_epoch is not None else -1
        if timestamp == LATEST_TIMESTAMP:
            offset = partition.high_watermark if from_consumer else partition.log_end_offset
            return {"timestamp": -1, "offset": offset, "leader_epoch": epoch}
        if timestamp == EARLIEST_TIMESTAMP:
            return {"timestamp": -1, "offset": partition.log.log_start_offset, "leader_epoch": epoch}
        found = partition.log.offset_for_timestamp(timestamp)
        if found is None or (from_consumer and found.offset >= partition.high_watermark):
            return {"timestamp": -1, "offset": -1, "leader_epoch": -1}
        return {"timestamp": found.timestamp, "offset": found.offset, "leader_epoch": epoch}

    # --- OffsetForLeaderEpoch --------------------------------------------------------------------------

    def offset_for_leader_epoch(self, body: dict[str, Any]) -> dict[str, Any]:
        """`handleOffsetForLeaderEpochRequest` (kafka-protocol.md §8): the end offset of an epoch."""
        replica_id = body["replica_id"]
        topics = []
        for topic in body["topics"]:
            partitions = []
            for request in topic["partitions"]:
                tp = TopicPartition(topic["topic"], request["partition"])
                answer = {
                    "error_code": NONE,
                    "partition": tp.partition,
                    "leader_epoch": UNDEFINED_EPOCH,
                    "end_offset": -1,
                }
                partitions.append(answer)
                try:
                    partition = self._partition_for(
                        tp,
                        leader_only=replica_id != DEBUGGING_REPLICA_ID,
                        current_leader_epoch=request["current_leader_epoch"],
                    )
                    epoch, end_offset = partition.log.end_offset_for_epoch(request["leader_epoch"])
                    answer.update(leader_epoch=epoch, end_offset=end_offset)
                except BrokerError as error:
                    answer["error_code"] = error.code
                except LogDirFailureError:
                    answer["error_code"] = KAFKA_STORAGE_ERROR
            topics.append({"topic": topic["topic"], "partitions": partitions})
        return {"throttle_time_ms": 0, "topics": topics}


def _printable(state: dict[str, Any]) -> LeaderAndIsrPartitionState:
    return LeaderAndIsrPartitionState(
        state["topic_name"],
        state["partition_index"],
        state["controller_epoch"],
        state["leader"],
        state["leader_epoch"],
        tuple(state["isr"]),
        state["zk_version"],
        tuple(state["replicas"]),
        tuple(state.get("adding_replicas", [])),
        tuple(state.get("removing_replicas", [])),
        bool(state.get("is_new", False)),
    )
