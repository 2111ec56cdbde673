"""FindCoordinator, OffsetCommit, OffsetFetch and OffsetDelete as Kafka 2.8's `KafkaApis` and
`GroupCoordinator` serve them over the offsets storage (group_metadata_manager.py).

FindCoordinator (key type group) answers the leader of the group's `__consumer_offsets` partition, and
creates the topic on first use as Kafka 2.8's `AutoTopicCreationManager` does: `offsets.topic.num.partitions`
partitions, `offsets.topic.replication.factor` replicas (refused, and so COORDINATOR_NOT_AVAILABLE, while
fewer brokers are alive), compacted, `offsets.topic.segment.bytes` segments, compression `producer`; the
answer is COORDINATOR_NOT_AVAILABLE until the partition has a leader.

OffsetCommit v0 and OffsetFetch v0 keep offsets in ZooKeeper (`/consumers/<group>/offsets/<topic>/<p>`),
as Kafka 2.8 does for the old consumers that speak them; v1 and later go to `__consumer_offsets`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kafkaops.admin import topics as admin_topics
from kafkaops.cluster.broker.config import BrokerConfig
from kafkaops.cluster.broker.group_metadata_manager import GROUP_METADATA_TOPIC_NAME, GroupMetadataManager
from kafkaops.cluster.broker.metadata_cache import MetadataCache
from kafkaops.cluster.common import errors
from kafkaops.cluster.common.errors import KafkaOpsError
from kafkaops.cluster.protocol.group_coordinator_records import (
    DEFAULT_TIMESTAMP,
    NO_METADATA,
    NO_PARTITION_LEADER_EPOCH,
    OffsetAndMetadata,
)
from kafkaops.cluster.zk.client import KafkaZkClient
from kafkaops.cluster.zk.values import TopicPartition, new_kafka_uuid

Body = Mapping[str, Any]
Response = dict[str, Any]
log = logging.getLogger("kafkaops.broker.offset_apis")

NONE = errors.NONE
COORDINATOR_TYPE_GROUP = 0
COORDINATOR_TYPE_TRANSACTION = 1
INVALID_OFFSET = -1
DEFAULT_RETENTION_TIME = -1


def offsets_topic_configs(config: BrokerConfig) -> dict[str, str]:
    """`GroupCoordinator.offsetsTopicConfigs`."""
    return {
        "cleanup.policy": "compact",
        "segment.bytes": str(config.offsets_topic_segment_bytes),
        "compression.type": "producer",
    }


def _message(code: int) -> str:
    """`Errors.message()`: the exception's text, or the error's name (NONE) without one."""
    if code == NONE:
        return "NONE"
    return errors.KAFKA_MESSAGES.get(code, errors.for_code(code).__name__)


def find_coordinator_response(code: int, node: tuple[int, str, int] = (-1, "", -1)) -> Response:
    return {
        "throttle_time_ms": 0,
        "error_code": code,
        "error_message": _message(code),
        "node_id": node[0],
        "host": node[1],
        "port": node[2],
    }


class OffsetApis:
    """The handlers' side of the offsets storage of one broker."""

    def __init__(
        self,
        config: BrokerConfig,
        zk: KafkaZkClient,
        metadata_cache: MetadataCache,
        manager: GroupMetadataManager,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.config = config
        self.zk = zk
        self.metadata_cache = metadata_cache
        self.manager = manager
        self.clock = clock
        self._creating = False

    # --- FindCoordinator ----------------------------------------------------------------------------------

    async def find_coordinator(self, body: Body, listener_name: str | None = None) -> Response:
        """The coordinator as the client's listener reaches it (Kafka's `getPartitionLeaderEndpoint` with the
        request's listener): a leader without that listener is COORDINATOR_NOT_AVAILABLE."""
        key_type = body.get("key_type", COORDINATOR_TYPE_GROUP)
        if key_type == COORDINATOR_TYPE_TRANSACTION:
            return find_coordinator_response(errors.CoordinatorNotAvailableError.code)
        if key_type != COORDINATOR_TYPE_GROUP:
            return find_coordinator_response(errors.InvalidRequestError.code)
        partitions = self.metadata_cache.partitions(GROUP_METADATA_TOPIC_NAME)
        if partitions is None:
            await self._create_offsets_topic()
            return find_coordinator_response(errors.CoordinatorNotAvailableError.code)
        state = partitions.get(self.manager.partition_for(body["key"]))
        alive = {b.broker_id: b for b in self.metadata_cache.alive_brokers(listener_name)}
        leader = alive.get(state.leader) if state is not None and state.leader >= 0 else None
        if leader is None:
            return find_coordinator_response(errors.CoordinatorNotAvailableError.code)
        return find_coordinator_response(NONE, (leader.broker_id, leader.host, leader.port))

    async def _create_offsets_topic(self) -> None:
        if self._creating:  # Kafka's inflightTopics: one creation at a time
            return
        self._creating = True
        try:
            await asyncio.get_running_loop().run_in_executor(None, self._create_offsets_topic_in_zk)
        finally:
            self._creating = False

    def _create_offsets_topic_in_zk(self) -> None:
        brokers = [(b.broker_id, b.rack) for b in self.metadata_cache.alive_brokers()]
        try:
            admin_topics.create_topic(
                self.zk,
                GROUP_METADATA_TOPIC_NAME,
                self.config.offsets_topic_num_partitions,
                self.config.offsets_topic_replication_factor,
                None,
                offsets_topic_configs(self.config),
                brokers=brokers,
                topic_id=new_kafka_uuid(),
            )
            log.info("Created topic %s", GROUP_METADATA_TOPIC_NAME)
        except KafkaOpsError as error:
            log.info("Error processing create topic request for %s: %s", GROUP_METADATA_TOPIC_NAME, error)

    # --- OffsetCommit -------------------------------------------------------------------------------------

    def _known(self, tp: TopicPartition) -> bool:
        partitions = self.metadata_cache.partitions(tp.topic)
        return partitions is not None and tp.partition in partitions

    async def offset_commit(self, body: Body, version: int) -> Response:
        """`handleOffsetCommitRequest` → `GroupCoordinator.handleCommitOffsets` → `storeOffsets`."""
        requested = [
            (TopicPartition(topic["name"], p["partition_index"]), p)
            for topic in body["topics"]
            for p in topic["partitions"]
        ]
        results: dict[TopicPartition, int] = {}
        now = int(self.clock() * 1000)
        retention_ms = body.get("retention_time_ms", DEFAULT_RETENTION_TIME)
        offsets: dict[TopicPartition, OffsetAndMetadata] = {}
        for tp, p in requested:
            if not self._known(tp):
                results[tp] = errors.UnknownTopicOrPartitionError.code
                continue
            epoch = p.get("committed_leader_epoch", NO_PARTITION_LEADER_EPOCH)
            commit_timestamp = p.get("commit_timestamp", DEFAULT_TIMESTAMP)
            offsets[tp] = OffsetAndMetadata(
                p["committed_offset"],
                None if epoch == NO_PARTITION_LEADER_EPOCH else epoch,
                NO_METADATA if p["committed_metadata"] is None else p["committed_metadata"],
                now if commit_timestamp == DEFAULT_TIMESTAMP else commit_timestamp,
                None if retention_ms == DEFAULT_RETENTION_TIME else now + retention_ms,
            )
        if offsets and version == 0:
            results.update(await asyncio.get_running_loop().run_in_executor(None, self._commit_to_zk, body, offsets))
        elif offsets:
            results.update(await self._commit(body, offsets))
        return {"throttle_time_ms": 0, "topics": _by_topic(((tp, {"error_code": results[tp]}) for tp, _ in requested))}

    def _commit_to_zk(self, body: Body, offsets: dict[TopicPartition, OffsetAndMetadata]) -> dict[TopicPartition, int]:
        """OffsetCommit v0: each offset to its znode (executor thread)."""
        results = {}
        for tp, offset in offsets.items():
            if len(offset.metadata) > self.config.offset_metadata_max_bytes:
                results[tp] = errors.OffsetMetadataTooLargeError.code
                continue
            try:
                self.zk.set_or_create_consumer_offset(body["group_id"], tp, offset.offset)
                results[tp] = NONE
            except Exception as error:  # noqa: BLE001 - Errors.forException: the commit's error, not the handler's
                log.warning("Failed to commit the offset of %s for group %s: %s", tp, body["group_id"], error)
                results[tp] = errors.UnknownServerError.code
        return results

    async def _commit(self, body: Body, offsets: dict[TopicPartition, OffsetAndMetadata]) -> dict[TopicPartition, int]:
        group_id = body["group_id"]
        manager = self.manager
        error = manager.group_status_error(group_id)
        if error is None:
            error = manager.validate_commit(
                group_id, body.get("member_id", ""), body.get("generation_id", -1), body.get("group_instance_id")
            )
        if error is not None:
            return dict.fromkeys(offsets, error)
        return await manager.store_offsets(group_id, offsets)

    # --- OffsetFetch --------------------------------------------------------------------------------------

    async def offset_fetch(self, body: Body, version: int) -> Response:
        """`handleOffsetFetchRequest` → `GroupCoordinator.handleFetchOffsets` → `getOffsets` (v0: ZooKeeper)."""
        group_id = body["group_id"]
        topics = body["topics"]
        requested = (
            None if topics is None else [TopicPartition(t["name"], i) for t in topics for i in t["partition_indexes"]]
        )
        if version == 0:
            found_in_zk = await asyncio.get_running_loop().run_in_executor(
                None, self._fetch_from_zk, group_id, requested or []
            )
            return {"throttle_time_ms": 0, "error_code": NONE, "topics": _by_topic(found_in_zk)}
        error = self.manager.group_status_error(group_id)
        if error is not None:
            # OffsetFetchRequest.getErrorResponse: below v2 the error goes to every partition asked for
            per_partition = [] if version >= 2 else (requested or [])
            return {
                "throttle_time_ms": 0,
                "error_code": error,
                "topics": _by_topic((tp, _partition_data(None, error)) for tp in per_partition),
            }
        found = self.manager.get_offsets(group_id, requested)
        return {
            "throttle_time_ms": 0,
            "error_code": NONE,
            "topics": _by_topic((tp, _partition_data(offset, NONE)) for tp, offset in found.items()),
        }

    def _fetch_from_zk(
        self, group_id: str, requested: list[TopicPartition]
    ) -> list[tuple[TopicPartition, dict[str, Any]]]:
        """OffsetFetch v0: unknown partitions and partitions without a znode are `UNKNOWN_PARTITION`."""
        unknown = errors.UnknownTopicOrPartitionError.code
        found: list[tuple[TopicPartition, dict[str, Any]]] = []
        for tp in requested:
            try:
                offset = self.zk.get_consumer_offset(group_id, tp) if self._known(tp) else None
            except Exception as error:  # noqa: BLE001 - Errors.forException
                log.warning("Failed to read the offset of %s for group %s: %s", tp, group_id, error)
                found.append((tp, _partition_data(None, errors.UnknownServerError.code)))
                continue
            if offset is None:
                found.append((tp, _partition_data(None, unknown)))
            else:
                found.append((tp, _partition_data(OffsetAndMetadata(offset, None, NO_METADATA, -1), NONE)))
        return found

    # --- OffsetDelete -------------------------------------------------------------------------------------

    async def offset_delete(self, body: Body) -> Response:
        """`handleOffsetDeleteRequest` → `GroupCoordinator.handleDeleteOffsets`."""
        group_id = body["group_id"]
        results: dict[TopicPartition, int] = {}
        eligible: list[TopicPartition] = []
        for topic in body["topics"]:
            for p in topic["partitions"]:
                tp = TopicPartition(topic["name"], p["partition_index"])
                if not self._known(tp):
                    results[tp] = errors.UnknownTopicOrPartitionError.code
                else:
                    eligible.append(tp)
        manager = self.manager
        group_error = manager.group_status_error(group_id, empty_allowed=False)
        if group_error is None:
            group_error, refused = manager.offset_delete_check(group_id, eligible)
            results.update(refused)
            eligible = [tp for tp in eligible if tp not in refused]
        if group_error != NONE:
            return {"error_code": group_error, "throttle_time_ms": 0, "topics": []}
        if eligible:
            await manager.delete_offsets(group_id, eligible)
            results.update(dict.fromkeys(eligible, NONE))
        return {
            "error_code": NONE,
            "throttle_time_ms": 0,
            "topics": _by_topic((tp, {"error_code": code}) for tp, code in results.items()),
        }


def _partition_data(offset: OffsetAndMetadata | None, error: int) -> dict[str, Any]:
    if offset is None:
        return {
            "committed_offset": INVALID_OFFSET,
            "committed_leader_epoch": NO_PARTITION_LEADER_EPOCH,
            "metadata": NO_METADATA,
            "error_code": error,
        }
    return {
        "committed_offset": offset.offset,
        "committed_leader_epoch": NO_PARTITION_LEADER_EPOCH if offset.leader_epoch is None else offset.leader_epoch,
        "metadata": offset.metadata,
        "error_code": error,
    }


def _by_topic(entries: Iterable[tuple[TopicPartition, dict[str, Any]]]) -> list[dict[str, Any]]:
    """Per-partition answers grouped by topic, in the order the topics first appear."""
    topics: dict[str, list[dict[str, Any]]] = {}
    for tp, data in entries:
        topics.setdefault(tp.topic, []).append({"partition_index": tp.partition, **data})
    return [{"name": name, "partitions": partitions} for name, partitions in topics.items()]
