"""The broker's Admin API over ZooKeeper (Kafka 2.8's `ZkAdminManager`, with `DelayedCreatePartitions`,
`DelayedDeleteTopics` and the config side of `ConfigHelper`).

Each request goes through the `admin` library function kafka-topics / kafka-configs use with
`--zookeeper` (admin/topics.py, admin/configs.py): one validation, one set of errors, one text. Their
errors become Kafka's (error code, message) per topic or resource (`api_error`), as Kafka's
`ApiError.fromThrowable` makes them; bad input changes nothing. CreateTopics, CreatePartitions and
DeleteTopics then wait, in the topic purgatory, until this broker's metadata cache shows every new
partition with a leader (or the topics gone), at most `timeout_ms`: REQUEST_TIMED_OUT otherwise, the
znodes being written all the same (Kafka's behaviour: the controller finishes the job).

The request and response bodies are the decoded wire dicts (Kafka's `*RequestData` / `*ResponseData`,
snake_case field names); which fields a version carries is the codec's business.

Threads: the coroutines run on the broker's event loop, which owns the purgatory; the ZooKeeper work
runs in the loop's executor. The other methods block (the handlers call them in the executor).
"""

from __future__ import annotations

import asyncio
import collections
import logging
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kafkaops.admin import configs as admin_configs
from kafkaops.admin import topics as admin_topics
from kafkaops.admin.config_def import BROKER_DYNAMIC_CONFIGS, TOPIC_CONFIGS
from kafkaops.cluster.broker.config import BROKER_CONFIGS
from kafkaops.cluster.broker.config_helper import (
    DescribedConfig,
    broker_config_entries,
    topic_config_entries,
)
from kafkaops.cluster.broker.delayed_operation import DelayedOperation, DelayedOperationPurgatory
from kafkaops.cluster.broker.dynamic_broker_config import DynamicBrokerConfig
from kafkaops.cluster.broker.metadata_cache import MetadataCache
from kafkaops.cluster.common import errors
from kafkaops.cluster.common.errors import (
    BrokerError,
    InvalidArgumentError,
    InvalidConfigurationError,
    InvalidRequestError,
    KafkaOpsError,
    UnknownConfigNameError,
)
from kafkaops.cluster.protocol.types import ZERO_UUID
from kafkaops.cluster.zk import znodes
from kafkaops.cluster.zk.client import KafkaZkClient
from kafkaops.cluster.zk.values import NO_LEADER, kafka_uuid_from_text, new_kafka_uuid

log = logging.getLogger("kafkaops.broker")

Body = Mapping[str, Any]
Response = dict[str, Any]

NO_NUM_PARTITIONS = -1
NO_REPLICATION_FACTOR = -1

RESOURCE_TOPIC = 2
RESOURCE_BROKER = 4
RESOURCE_BROKER_LOGGER = 8
_RESOURCE_NAMES = {0: "UNKNOWN", 1: "ANY", 2: "TOPIC", 3: "GROUP", 4: "BROKER", 8: "BROKER_LOGGER"}


@dataclass(frozen=True, slots=True)
class ApiError:
    """Kafka's `ApiError`: an error code and its message (None: the code's own text)."""

    code: int
    message: str | None = None

    @property
    def is_success(self) -> bool:
        return self.code == errors.NONE


NONE = ApiError(errors.NONE)
TIMED_OUT = ApiError(errors.RequestTimedOutError.code)


def api_error(error: Exception) -> ApiError:
    """`ApiError.fromThrowable`: Kafka's code of the error and its message; an error that is not one of
    Kafka's is UNKNOWN_SERVER_ERROR without a message (nothing internal leaks to a client)."""
    if isinstance(error, BrokerError):
        return ApiError(error.code, error.message or None)
    if isinstance(error, InvalidConfigurationError):
        # ConfigException in CreateTopics becomes InvalidConfigurationException; an unknown name is one
        return ApiError(errors.InvalidConfigError.code, str(error))
    return ApiError(errors.UnknownServerError.code)


def config_api_error(resource_type: int, name: str, error: Exception) -> ApiError:
    """AlterConfigs' mapping: a bad value (ConfigException) or argument is INVALID_REQUEST naming the
    resource, an unknown config name INVALID_CONFIG, the rest as `api_error`."""
    if isinstance(error, UnknownConfigNameError):
        return ApiError(errors.InvalidConfigError.code, str(error))
    if isinstance(error, InvalidConfigurationError | InvalidArgumentError):
        resource = f"ConfigResource(type={_RESOURCE_NAMES.get(resource_type, 'UNKNOWN')}, name='{name}')"
        return ApiError(InvalidRequestError.code, f"Invalid config value for resource {resource}: {error}")
    return api_error(error)


@dataclass
class CreatePartitionsMetadata:
    """Kafka's `CreatePartitionsMetadata`: a topic, the partitions it must end with, or its error."""

    topic: str
    partitions: frozenset[int] = frozenset()
    error: ApiError = NONE
    result: dict[str, Any] = field(default_factory=dict)
    """CreateTopics v5+'s extra fields (configs, num_partitions, replication_factor) for a success."""


class DelayedCreatePartitions(DelayedOperation[str, dict[str, ApiError]]):
    """Completes when every partition of every topic without an error has a leader in the metadata cache."""

    def __init__(self, timeout_ms: int, metadata: Sequence[CreatePartitionsMetadata], cache: MetadataCache) -> None:
        super().__init__(timeout_ms)
        self.metadata = metadata
        self.cache = cache

    def watch_keys(self) -> Iterable[str]:
        return (m.topic for m in self.metadata)

    def _missing_leaders(self) -> int:
        missing = 0
        for m in self.metadata:
            if not m.error.is_success:
                continue
            states = self.cache.partitions(m.topic) or {}
            missing += sum(1 for p in m.partitions if p not in states or states[p].leader == NO_LEADER)
        return missing

    def try_complete(self, key: str | None) -> bool:
        return self.force_complete() if self._missing_leaders() == 0 else False

    def on_complete(self) -> dict[str, ApiError]:
        results = {}
        for m in self.metadata:
            states = self.cache.partitions(m.topic) or {}
            missing = any(p not in states or states[p].leader == NO_LEADER for p in m.partitions)
            results[m.topic] = TIMED_OUT if m.error.is_success and missing else m.error
        return results


class DelayedDeleteTopics(DelayedOperation[str, dict[str, ApiError]]):
    """Completes when no topic without an error is left in the metadata cache."""

    def __init__(self, timeout_ms: int, metadata: Mapping[str, ApiError], cache: MetadataCache) -> None:
        super().__init__(timeout_ms)
        self.metadata = metadata
        self.cache = cache

    def watch_keys(self) -> Iterable[str]:
        return iter(self.metadata)

    def _remaining(self) -> list[str]:
        return [t for t, e in self.metadata.items() if e.is_success and self.cache.contains(t)]

    def try_complete(self, key: str | None) -> bool:
        return self.force_complete() if not self._remaining() else False

    def on_complete(self) -> dict[str, ApiError]:
        remaining = set(self._remaining())
        return {t: TIMED_OUT if t in remaining else e for t, e in self.metadata.items()}


class ZkAdminManager:
    """The Admin API of one broker. `is_controller()` tells whether this broker is the active controller
    (CreateTopics, DeleteTopics and CreatePartitions are served by the controller only, as in Kafka 2.8)."""

    def __init__(
        self,
        broker_id: int,
        zk: KafkaZkClient,
        metadata_cache: MetadataCache,
        dynamic_config: DynamicBrokerConfig,
        is_controller: Callable[[], bool],
        default_num_partitions: int = 1,
        default_replication_factor: int = 1,
        delete_topic_enable: bool = True,
    ) -> None:
        self.broker_id = broker_id
        self.zk = zk
        self.metadata_cache = metadata_cache
        self.dynamic_config = dynamic_config
        self.is_controller = is_controller
        self.default_num_partitions = default_num_partitions
        self.default_replication_factor = default_replication_factor
        self.delete_topic_enable = delete_topic_enable
        self.topic_purgatory: DelayedOperationPurgatory[str] = DelayedOperationPurgatory("topic")

    # --- the purgatory (event loop) -------------------------------------------------------------------

    def try_complete_delayed_topic_operations(self, topics: Iterable[str]) -> None:
        """After an UpdateMetadata: wake the operations waiting on these topics (Kafka's
        `tryCompleteDelayedTopicOperations`)."""
        if self.topic_purgatory.delayed():
            for topic in set(topics):
                self.topic_purgatory.check_and_complete(topic)

    async def _wait(self, operation: DelayedOperation[str, dict[str, ApiError]]) -> dict[str, ApiError]:
        self.topic_purgatory.try_complete_else_watch(operation)
        return await operation.result()

    def shutdown(self) -> None:
        self.topic_purgatory.shutdown()

    # --- CreateTopics ---------------------------------------------------------------------------------

    async def create_topics(self, body: Body, version: int) -> Response:
        """Kafka's `handleCreateTopicsRequest` + `ZkAdminManager.createTopics`."""
        topics = list(body["topics"])
        counts = collections.Counter(t["name"] for t in topics)
        if not self.is_controller():
            results = {t["name"]: ApiError(errors.NotControllerError.code) for t in topics}
            return _create_topics_response(topics, results, {})
        results = {
            name: ApiError(InvalidRequestError.code, "Found multiple entries for this topic.")
            for name, count in counts.items()
            if count > 1
        }
        to_create = [t for t in topics if counts[t["name"]] == 1]
        timeout_ms, validate_only = body["timeout_ms"], bool(body.get("validate_only", False))
        loop = asyncio.get_running_loop()
        metadata: list[CreatePartitionsMetadata] = await loop.run_in_executor(
            None, self._create_topics_in_zk, to_create, validate_only, version >= 5
        )
        extras = {m.topic: m.result for m in metadata if m.error.is_success}
        if timeout_ms <= 0 or validate_only or not any(m.error.is_success for m in metadata):
            outcome = {m.topic: TIMED_OUT if m.error.is_success and not validate_only else m.error for m in metadata}
        else:
            outcome = await self._wait(DelayedCreatePartitions(timeout_ms, metadata, self.metadata_cache))
        results.update(outcome)
        return _create_topics_response(topics, results, extras)

    def _create_topics_in_zk(
        self, topics: Sequence[Body], validate_only: bool, with_configs: bool
    ) -> list[CreatePartitionsMetadata]:
        brokers = [(b.broker_id, b.rack) for b in self.metadata_cache.alive_brokers()]
        return [self._create_topic(topic, validate_only, with_configs, brokers) for topic in topics]

    def _create_topic(
        self, topic: Body, validate_only: bool, with_configs: bool, brokers: list[tuple[int, str | None]]
    ) -> CreatePartitionsMetadata:
        name = topic["name"]
        try:
            if self.metadata_cache.contains(name):
                raise errors.TopicExistsError(f"Topic '{name}' already exists.")
            nulls = [c["name"] for c in topic.get("configs") or [] if c["value"] is None]
            if nulls:
                raise InvalidRequestError(f"Null value not supported for topic configs : {','.join(nulls)}")
            assignments = topic.get("assignments") or []
            num_partitions, replication_factor = topic["num_partitions"], topic["replication_factor"]
            if (num_partitions != NO_NUM_PARTITIONS or replication_factor != NO_REPLICATION_FACTOR) and assignments:
                raise InvalidRequestError(
                    "Both numPartitions or replicationFactor and replicasAssignments were set. "
                    "Both cannot be used at the same time."
                )
            if num_partitions == NO_NUM_PARTITIONS:
                num_partitions = self.default_num_partitions
            if replication_factor == NO_REPLICATION_FACTOR:
                replication_factor = self.default_replication_factor
            manual = {a["partition_index"]: list(a["broker_ids"]) for a in assignments} or None
            configs = {c["name"]: c["value"] for c in topic.get("configs") or []}
            # Kafka 2.8 (IBP 2.8) writes the id with the assignment; the controller takes it from the znode
            topic_id = None if validate_only else new_kafka_uuid()
            created = admin_topics.create_topic(
                self.zk,
                name,
                num_partitions,
                replication_factor,
                manual,
                configs,
                validate_only=validate_only,
                brokers=brokers,
                topic_id=topic_id,
            )
        except KafkaOpsError as error:
            log.info("Error processing create topic request for %s: %s", name, error)
            return CreatePartitionsMetadata(name, error=api_error(error))
        extra: dict[str, Any] = {"topic_id": kafka_uuid_from_text(topic_id)}  # v7+ (populateIds)
        if with_configs:
            extra |= {
                "configs": [
                    _creatable_topic_config(e) for e in topic_config_entries(configs, self.dynamic_config, False)
                ],
                "num_partitions": len(created.assignment),
                "replication_factor": len(created.assignment[0]) if 0 in created.assignment else -1,
            }
        return CreatePartitionsMetadata(name, frozenset(created.assignment), result=extra)

    # --- DeleteTopics ---------------------------------------------------------------------------------

    async def delete_topics(self, body: Body, version: int) -> Response:
        """Kafka's `handleDeleteTopicsRequest` + `ZkAdminManager.deleteTopics`. v6 names topics by name or by
        id: an id is resolved with the metadata cache (UNKNOWN_TOPIC_ID when it has no such topic); a
        topic named both ways makes the whole request INVALID_REQUEST, as Kafka's thrown
        InvalidRequestException does."""
        requested = _delete_topic_states(body)
        if not self.is_controller():
            return _delete_topics_response([(n, i, ApiError(errors.NotControllerError.code)) for n, i in requested])
        if not self.delete_topic_enable:
            code = InvalidRequestError.code if version < 3 else errors.TopicDeletionDisabledError.code
            return _delete_topics_response([(n, i, ApiError(code)) for n, i in requested])
        if any(n is not None and i != ZERO_UUID for n, i in requested):
            return _delete_topics_response([(n, i, ApiError(InvalidRequestError.code)) for n, i in requested])
        resolved = [(n if i == ZERO_UUID else self.metadata_cache.topic_name(i), i) for n, i in requested]
        results: dict[str, ApiError] = {}
        to_delete = []
        for name, _ in resolved:
            if name is not None and name not in results and name not in to_delete:
                if self.metadata_cache.contains(name):
                    to_delete.append(name)
                else:
                    results[name] = ApiError(errors.UnknownTopicOrPartitionError.code)
        if to_delete:
            loop = asyncio.get_running_loop()
            marked: dict[str, ApiError] = await loop.run_in_executor(None, self._delete_topics_in_zk, to_delete)
            timeout_ms = body["timeout_ms"]
            if timeout_ms <= 0 or not any(e.is_success for e in marked.values()):
                results.update({t: TIMED_OUT if e.is_success else e for t, e in marked.items()})
            else:
                results.update(await self._wait(DelayedDeleteTopics(timeout_ms, marked, self.metadata_cache)))
        unknown_id = ApiError(errors.UnknownTopicIdError.code)
        return _delete_topics_response([(n, i, unknown_id if n is None else results[n]) for n, i in resolved])

    def _delete_topics_in_zk(self, topics: Sequence[str]) -> dict[str, ApiError]:
        results = {}
        for topic in topics:
            try:
                admin_topics.delete_topic(self.zk, topic)  # already marked: still waited for, as Kafka does
                results[topic] = NONE
            except KafkaOpsError as error:
                log.error("Error processing delete topic request for topic %s: %s", topic, error)
                results[topic] = api_error(error)
        return results

    # --- CreatePartitions -----------------------------------------------------------------------------

    async def create_partitions(self, body: Body, version: int) -> Response:
        """Kafka's `handleCreatePartitionsRequest` + `ZkAdminManager.createPartitions`."""
        topics = list(body["topics"])
        if not self.is_controller():
            return _create_partitions_response(
                topics, {t["name"]: ApiError(errors.NotControllerError.code) for t in topics}
            )
        counts = collections.Counter(t["name"] for t in topics)
        validate_only, timeout_ms = bool(body.get("validate_only", False)), body["timeout_ms"]
        loop = asyncio.get_running_loop()
        metadata, early = await loop.run_in_executor(
            None, self._create_partitions_in_zk, [t for t in topics if counts[t["name"]] == 1], validate_only
        )
        results = {
            n: ApiError(InvalidRequestError.code, "Duplicate topic in request.") for n, c in counts.items() if c > 1
        }
        results.update(early)
        if timeout_ms <= 0 or validate_only or not any(m.error.is_success for m in metadata):
            results.update(
                {m.topic: TIMED_OUT if m.error.is_success and not validate_only else m.error for m in metadata}
            )
        else:
            results.update(await self._wait(DelayedCreatePartitions(timeout_ms, metadata, self.metadata_cache)))
        return _create_partitions_response(topics, results)

    def _create_partitions_in_zk(
        self, topics: Sequence[Body], validate_only: bool
    ) -> tuple[list[CreatePartitionsMetadata], dict[str, ApiError]]:
        deleting = self.zk.get_topics_marked_for_deletion()
        early = {
            t["name"]: ApiError(errors.InvalidTopicError.code, "The topic is queued for deletion.")
            for t in topics
            if t["name"] in deleting
        }
        metadata = []
        for topic in topics:
            name = topic["name"]
            if name in early:
                continue
            assignments = topic.get("assignments")
            try:
                added = admin_topics.create_partitions(
                    self.zk,
                    name,
                    topic["count"],
                    [list(a["broker_ids"]) for a in assignments] if assignments is not None else None,
                    validate_only=validate_only,
                )
            except KafkaOpsError as error:
                log.info("Error processing create partitions request for %s: %s", name, error)
                metadata.append(CreatePartitionsMetadata(name, error=api_error(error)))
                continue
            metadata.append(CreatePartitionsMetadata(name, frozenset(range(topic["count"])) | frozenset(added)))
        return metadata, early

    # --- DescribeConfigs (blocking) -------------------------------------------------------------------

    def describe_configs(self, body: Body, version: int) -> Response:
        """Kafka's `ConfigHelper.describeConfigs` for topics and brokers."""
        include_synonyms = bool(body.get("include_synonyms", False))
        include_documentation = bool(body.get("include_documentation", False))
        resources = list(body["resources"])
        topics = [r["resource_name"] for r in resources if r["resource_type"] == RESOURCE_TOPIC]
        overrides = self.zk.get_entity_configs(znodes.ConfigType.TOPIC, topics) if topics else {}
        results = []
        for resource in resources:
            rtype, name = resource["resource_type"], resource["resource_name"]
            try:
                entries = self._describe_resource(rtype, name, overrides, include_synonyms, include_documentation)
            except KafkaOpsError as error:
                failed = api_error(error)
                results.append(_describe_result(rtype, name, failed, []))
                continue
            if entries is None:
                results.append(_describe_result(rtype, name, ApiError(errors.UnknownTopicOrPartitionError.code), []))
                continue
            keys = resource.get("configuration_keys")
            if keys:
                entries = [e for e in entries if e.name in keys]
            results.append(_describe_result(rtype, name, NONE, entries))
        return {"throttle_time_ms": 0, "results": results}

    def _describe_resource(
        self,
        rtype: int,
        name: str,
        overrides: Mapping[str, Mapping[str, str]],
        include_synonyms: bool,
        include_documentation: bool,
    ) -> list[DescribedConfig] | None:
        if rtype == RESOURCE_TOPIC:
            admin_topics.validate_topic_name(name)
            if not self.metadata_cache.contains(name):
                return None
            return topic_config_entries(
                overrides.get(name, {}), self.dynamic_config, include_synonyms, include_documentation
            )
        if rtype == RESOURCE_BROKER:
            if not name:
                return broker_config_entries(self.dynamic_config, False, include_synonyms)
            if _broker_id(name) == self.broker_id:
                return broker_config_entries(self.dynamic_config, True, include_synonyms)
            raise InvalidRequestError(
                f"Unexpected broker id, expected {self.broker_id} or empty string, but received {name}"
            )
        raise InvalidRequestError(f"Unsupported resource type: {_RESOURCE_NAMES.get(rtype, rtype)}")

    # --- AlterConfigs and IncrementalAlterConfigs (blocking) -------------------------------------------

    def alter_configs(self, body: Body) -> Response:
        """Kafka's `ZkAdminManager.alterConfigs`: each resource's overrides replaced by the given set."""
        validate_only = bool(body.get("validate_only", False))
        responses = []
        for resource in body["resources"]:
            rtype, name = resource["resource_type"], resource["resource_name"]
            try:
                entries = resource["configs"]
                nulls = [c["name"] for c in entries if c["value"] is None]
                if nulls:
                    raise InvalidRequestError(f"Null value not supported for : {','.join(nulls)}")
                entity = self._config_entity(rtype, name)
                config = {c["name"]: c["value"] for c in entries}
                _, version = self.zk.get_entity_config(entity.entity_type, entity.name or "")
                self._check_topic_known(entity)
                admin_configs.change_configs(self.zk, entity, config, version, validate_only)
                error = NONE
            except KafkaOpsError as failure:
                log.info("Error processing alter configs request for %s %s: %s", rtype, name, failure)
                error = config_api_error(rtype, name, failure)
            responses.append(_alter_result(rtype, name, error))
        return {"throttle_time_ms": 0, "responses": responses}

    def incremental_alter_configs(self, body: Body) -> Response:
        """Kafka's `ZkAdminManager.incrementalAlterConfigs`: SET / DELETE / APPEND / SUBTRACT over the
        current overrides, then the same write as AlterConfigs."""
        validate_only = bool(body.get("validate_only", False))
        responses = []
        for resource in body["resources"]:
            rtype, name = resource["resource_type"], resource["resource_name"]
            try:
                ops = [
                    admin_configs.AlterConfigOp(
                        c["name"], admin_configs.AlterConfigOpType(c["config_operation"]), c["value"]
                    )
                    for c in resource["configs"]
                ]
                entity = self._config_entity(rtype, name)
                current, version = self.zk.get_entity_config(entity.entity_type, entity.name or "")
                definitions = TOPIC_CONFIGS if rtype == RESOURCE_TOPIC else {**BROKER_DYNAMIC_CONFIGS, **BROKER_CONFIGS}
                config = admin_configs.incremental_configs(current, ops, definitions)
                self._check_topic_known(entity)
                admin_configs.change_configs(self.zk, entity, config, version, validate_only)
                error = NONE
            except ValueError:
                error = ApiError(InvalidRequestError.code, "Unknown config operation")
            except KafkaOpsError as failure:
                log.info("Error processing incremental alter configs request for %s %s: %s", rtype, name, failure)
                error = config_api_error(rtype, name, failure)
            responses.append(_alter_result(rtype, name, error))
        return {"throttle_time_ms": 0, "responses": responses}

    def _config_entity(self, rtype: int, name: str) -> admin_configs.ConfigEntity:
        """The znode entity of a resource; a broker resource names this broker or the `<default>` ("")."""
        if rtype == RESOURCE_TOPIC:
            return admin_configs.ConfigEntity(znodes.ConfigType.TOPIC, name)
        if rtype == RESOURCE_BROKER:
            if not name:
                return admin_configs.ConfigEntity(znodes.ConfigType.BROKER, znodes.DEFAULT_ENTITY_NAME)
            if _broker_id(name) != self.broker_id:
                raise InvalidRequestError(f"Unexpected broker id, expected {self.broker_id}, but received {name}")
            return admin_configs.ConfigEntity(znodes.ConfigType.BROKER, name)
        raise InvalidRequestError(
            f"AlterConfigs is only supported for topics and brokers, but resource type is "
            f"{_RESOURCE_NAMES.get(rtype, rtype)}"
        )

    def _check_topic_known(self, entity: admin_configs.ConfigEntity) -> None:
        if entity.entity_type == znodes.ConfigType.TOPIC and not self.metadata_cache.contains(entity.name or ""):
            raise errors.UnknownTopicOrPartitionError(f"The topic '{entity.name}' does not exist.", named=False)


# --- pure helpers ------------------------------------------------------------------------------------


def _broker_id(name: str) -> int:
    try:
        return int(name)
    except ValueError:
        raise InvalidRequestError(f"Broker id must be an integer, but it is: {name}") from None


def _creatable_topic_config(entry: DescribedConfig) -> dict[str, Any]:
    return {
        "name": entry.name,
        "value": entry.value,
        "read_only": entry.read_only,
        "config_source": int(entry.source),
        "is_sensitive": entry.is_sensitive,
    }


def _create_topics_response(
    topics: Sequence[Body], results: Mapping[str, ApiError], extras: Mapping[str, Mapping[str, Any]]
) -> Response:
    out = []
    for topic in topics:
        name = topic["name"]
        error = results.get(name, NONE)
        entry: dict[str, Any] = {
            "name": name,
            "error_code": error.code,
            "error_message": error.message,
            "topic_id": ZERO_UUID,
            "topic_config_error_code": 0,
            "num_partitions": -1,
            "replication_factor": -1,
            "configs": [],
        }
        if error.is_success:
            entry.update(extras.get(name, {}))
        out.append(entry)
    return {"throttle_time_ms": 0, "topics": out}


def _delete_topic_states(body: Body) -> list[tuple[str | None, uuid.UUID]]:
    """The topics of a DeleteTopics request as (name, id) (Kafka's `DeleteTopicsRequest.topics()`): v0-5 name
    them only; v6 by name or by id (the zero UUID: by name). A topic named twice is answered once."""
    states = [(name, ZERO_UUID) for name in body.get("topic_names") or []]
    states.extend((t.get("name"), t.get("topic_id", ZERO_UUID)) for t in body.get("topics") or [])
    return list(dict.fromkeys(states))


def _delete_topics_response(results: Sequence[tuple[str | None, uuid.UUID, ApiError]]) -> Response:
    """A DeleteTopics response: each topic's name (null for an unknown id, v6+), id (v6+) and error."""
    return {
        "throttle_time_ms": 0,
        "responses": [
            {"name": name, "topic_id": topic_id, "error_code": error.code, "error_message": error.message}
            for name, topic_id, error in results
        ],
    }


def _create_partitions_response(topics: Sequence[Body], results: Mapping[str, ApiError]) -> Response:
    return {
        "throttle_time_ms": 0,
        "results": [
            {"name": n, "error_code": results.get(n, NONE).code, "error_message": results.get(n, NONE).message}
            for n in dict.fromkeys(t["name"] for t in topics)
        ],
    }


def _describe_result(rtype: int, name: str, error: ApiError, entries: Sequence[DescribedConfig]) -> dict[str, Any]:
    return {
        "error_code": error.code,
        "error_message": error.message,
        "resource_type": rtype,
        "resource_name": name,
        "configs": [
            {
                "name": e.name,
                "value": e.value,
                "read_only": e.read_only,
                "is_default": False,  # Kafka 2.8 never sets v0's IsDefault
                "config_source": int(e.source),
                "is_sensitive": e.is_sensitive,
                "synonyms": [{"name": s.name, "value": s.value, "source": int(s.source)} for s in e.synonyms],
                "config_type": int(e.config_type),
                "documentation": e.documentation,
            }
            for e in entries
        ],
    }


def _alter_result(rtype: int, name: str, error: ApiError) -> dict[str, Any]:
    return {"error_code": error.code, "error_message": error.message, "resource_type": rtype, "resource_name": name}
