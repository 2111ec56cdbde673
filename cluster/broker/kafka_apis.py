"""The broker's request handlers (Kafka's `KafkaApis`): one handler per API key, in one table.

A handler turns the decoded wire dict into a typed request (requests.py), asks the part of the broker
that knows (the replica manager, the metadata cache, this broker's controller component, ZooKeeper),
and turns the typed result back into a response body (responses.py). Adding an API is a schema
(cluster/protocol/schemas.py), a typed request, a handler in `KafkaApis._handlers` and its response.
ApiVersions advertises exactly the table's keys.

Threads: handlers run on the broker's event loop. Those that block (ZooKeeper reads, calls into the
controller's event queue, UpdateMetadata of a whole cluster) run in the loop's executor, as Kafka's
request handler threads would; LeaderAndIsr and StopReplica stay on the loop, which owns partitions.

Client quotas (client_quota_manager.py, Kafka's `QuotaManagers`): a Produce's size and a consumer Fetch's
response size count against the byte-rate quotas, every client request's own handler time against the
request quota; a throttle goes into the response's `throttle_time_ms` and into the request's context, for
which the network layer mutes the connection. Requests between brokers are never throttled.

The controller: where a request needs it (ElectLeaders served by the active controller, a controlled
shutdown asked of it) the handler uses `LocalController`, this broker's controller component as the
server wires it in; the broker never imports the controller.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Protocol

from kafkaops.admin import client_quotas
from kafkaops.cluster.broker import responses
from kafkaops.cluster.broker.client_quota_manager import NANOS_TO_PERCENTAGE_PER_SECOND, QuotaManagers
from kafkaops.cluster.broker.delayed_delete_records import INVALID_LOW_WATERMARK
from kafkaops.cluster.broker.metadata_cache import MetadataCache
from kafkaops.cluster.broker.network_client import broker_endpoint, send_request
from kafkaops.cluster.broker.producer_id_manager import ProducerIdManager
from kafkaops.cluster.broker.replica_manager import ReplicaManager
from kafkaops.cluster.broker.request_channel import RequestContext, TimedCoroutine
from kafkaops.cluster.broker.requests import (
    AlterReplicaLogDirsRequest,
    ControlledShutdownRequest,
    DeleteRecordsRequest,
    DescribeLogDirsRequest,
    ElectLeadersRequest,
    FetchRequest,
    InitProducerIdRequest,
    LeaderAndIsrRequest,
    ListOffsetsRequest,
    MetadataRequest,
    OffsetForLeaderEpochRequest,
    ProduceRequest,
    StopReplicaRequest,
    UpdateMetadataRequest,
    valid_api_versions_request,
)
from kafkaops.cluster.broker.responses import FetchResult, ListOffsetsPartitionResult, PartitionErrors
from kafkaops.cluster.broker.zk_admin_manager import ZkAdminManager
from kafkaops.cluster.common import errors
from kafkaops.cluster.common.collector import collector_paused
from kafkaops.cluster.common.errors import BrokerError, KafkaOpsError
from kafkaops.cluster.protocol.messages import Request, RequestHeader
from kafkaops.cluster.protocol.schemas import NO_AUTHORIZED_OPERATIONS, ApiKey, ElectionType
from kafkaops.cluster.zk.client import KafkaZkClient
from kafkaops.cluster.zk.values import ReplicaAssignment, TopicPartition

Body = Mapping[str, Any]
Response = dict[str, Any]
Handler = Callable[[RequestHeader, Body], Awaitable[Response | None]]
ContextHandler = Callable[[RequestHeader, Body, RequestContext], Awaitable[Response | None]]
INT32_MAX = 2**31 - 1


# requests between brokers are never throttled (Kafka: the cluster actions, and a follower's fetch)
_CLUSTER_ACTIONS = frozenset(
    {ApiKey.LEADER_AND_ISR, ApiKey.STOP_REPLICA, ApiKey.UPDATE_METADATA, ApiKey.CONTROLLED_SHUTDOWN}
)


def _exempt_from_request_quota(request: Request) -> bool:
    key = request.header.api_key
    return key in _CLUSTER_ACTIONS or (key == ApiKey.FETCH and request.body.get("replica_id", -1) >= 0)


class LocalController(Protocol):
    """This broker's controller component, as the request handlers use it (blocking calls: executor only)."""

    @property
    def is_active(self) -> bool:
        """Whether it is the cluster's controller now."""

    def elect_leaders(
        self, election_type: ElectionType, partitions: Sequence[TopicPartition] | None, timeout_s: float = ...
    ) -> dict[TopicPartition, tuple[int, str | None]]:
        """Kafka's `processReplicaLeaderElection`: per partition (error code, message). Raises TimeoutError
        and NotControllerError."""

    def controlled_shutdown(self, broker_id: int, broker_epoch: int, timeout_s: float = ...) -> set[TopicPartition]:
        """The partitions `broker_id` still leads after moving what it can. Raises BrokerError."""

    def alter_partition_reassignments(
        self, reassignments: Mapping[TopicPartition, Sequence[int] | None], timeout_s: float = ...
    ) -> dict[TopicPartition, tuple[int, str | None]]:
        """Kafka's `processApiPartitionReassignment` (None cancels): per partition (error code, message).
        Raises TimeoutError and NotControllerError."""

    def list_partition_reassignments(
        self, partitions: Sequence[TopicPartition] | None, timeout_s: float = ...
    ) -> dict[TopicPartition, ReplicaAssignment]:
        """Kafka's `processListPartitionReassignments`. Raises TimeoutError and NotControllerError."""


class KafkaApis:
    """The handlers of one broker. `broker_epoch()` is this broker's registration epoch (it changes when
    the broker registers again after a new ZooKeeper session)."""

    def __init__(
        self,
        broker_id: int,
        cluster_id: str | None,
        zk: KafkaZkClient,
        replica_manager: ReplicaManager,
        metadata_cache: MetadataCache,
        controller: LocalController,
        broker_epoch: Callable[[], int],
        admin_manager: ZkAdminManager | None = None,
        quotas: QuotaManagers | None = None,
    ) -> None:
        self.broker_id = broker_id
        self.cluster_id = cluster_id
        self.zk = zk
        self.replica_manager = replica_manager
        self.metadata_cache = metadata_cache
        self.controller = controller
        self.broker_epoch = broker_epoch
        self.producer_ids = ProducerIdManager(broker_id, zk)
        self.admin_manager = admin_manager
        self._handlers: dict[ApiKey, Handler] = {
            ApiKey.LIST_OFFSETS: self.handle_list_offsets_request,
            ApiKey.API_VERSIONS: self.handle_api_versions_request,
            ApiKey.METADATA: self.handle_topic_metadata_request,
            ApiKey.INIT_PRODUCER_ID: self.handle_init_producer_id_request,
            ApiKey.OFFSET_FOR_LEADER_EPOCH: self.handle_offset_for_leader_epoch_request,
            # Advertised only so that librdkafka enables lz4 (kafka-protocol.md §1.2); there are no groups.
            ApiKey.FIND_COORDINATOR: self.handle_find_coordinator_request,
            ApiKey.ELECT_LEADERS: self.handle_elect_leaders_request,
            ApiKey.DELETE_RECORDS: self.handle_delete_records_request,
            ApiKey.ALTER_REPLICA_LOG_DIRS: self.handle_alter_replica_log_dirs_request,
            ApiKey.DESCRIBE_LOG_DIRS: self.handle_describe_log_dirs_request,
            ApiKey.LEADER_AND_ISR: self.handle_leader_and_isr_request,
            ApiKey.STOP_REPLICA: self.handle_stop_replica_request,
            ApiKey.UPDATE_METADATA: self.handle_update_metadata_request,
            ApiKey.CONTROLLED_SHUTDOWN: self.handle_controlled_shutdown_request,
            ApiKey.DESCRIBE_CLIENT_QUOTAS: self.handle_describe_client_quotas_request,
            ApiKey.ALTER_CLIENT_QUOTAS: self.handle_alter_client_quotas_request,
        }
        if admin_manager is not None:
            self._handlers.update(
                {
                    ApiKey.CREATE_TOPICS: self.handle_create_topics_request,
                    ApiKey.DELETE_TOPICS: self.handle_delete_topics_request,
                    ApiKey.CREATE_PARTITIONS: self.handle_create_partitions_request,
                    ApiKey.DESCRIBE_CONFIGS: self.handle_describe_configs_request,
                    ApiKey.ALTER_CONFIGS: self.handle_alter_configs_request,
                    ApiKey.INCREMENTAL_ALTER_CONFIGS: self.handle_incremental_alter_configs_request,
                    ApiKey.DESCRIBE_CLUSTER: self.handle_describe_cluster_request,
                    ApiKey.ALTER_PARTITION_REASSIGNMENTS: self.handle_alter_partition_reassignments_request,
                    ApiKey.LIST_PARTITION_REASSIGNMENTS: self.handle_list_partition_reassignments_request,
                }
            )
        # the handlers that need the request's context: the client quotas they record and throttle
        self._context_handlers: dict[ApiKey, ContextHandler] = {
            ApiKey.PRODUCE: self.handle_produce_request,
            ApiKey.FETCH: self.handle_fetch_request,
        }
        self.served = frozenset(self._handlers) | frozenset(self._context_handlers)
        """The APIs this broker serves; the network layer closes a connection asking for another."""
        self.quotas = quotas or QuotaManagers.create(lambda: int(time.time() * 1000))

    async def handle(self, request: Request, context: RequestContext | None = None) -> Response | None:
        """The response body to `request` (an API in `served`), or None when it gets no response.
        `context` (the network layer's) gets the throttle time to mute the connection for."""
        context = context or RequestContext()
        header = request.header
        request_quota = self.quotas.request
        if not request_quota.quotas_enabled or _exempt_from_request_quota(request):
            return await self._dispatch(request, context)
        timed = TimedCoroutine(self._dispatch(request, context))
        response = await timed
        if response is None:  # Kafka does not enforce the request quota on acks=0
            return response
        # ClientRequestQuotaManager: the handler's time as a percentage of one second, throttled (for one
        # window at most) over `request_percentage`; the response carries the larger of the two throttles
        throttle_time_ms = request_quota.maybe_record_and_get_throttle_time_ms(
            context.sanitized_user,
            header.client_id,
            timed.nanos * NANOS_TO_PERCENTAGE_PER_SECOND,
            request_quota.clock_ms(),
        )
        if throttle_time_ms > context.throttle_time_ms:
            context.throttle_time_ms = throttle_time_ms
            response["throttle_time_ms"] = throttle_time_ms
        return response

    async def _dispatch(self, request: Request, context: RequestContext) -> Response | None:
        key = request.header.api_key
        if key in self._context_handlers:
            return await self._context_handlers[key](request.header, request.body, context)
        return await self._handlers[key](request.header, request.body)

    # --- data ----------------------------------------------------------------------------------------------

    async def handle_produce_request(
        self, header: RequestHeader, body: Body, context: RequestContext
    ) -> Response | None:
        request = ProduceRequest.from_wire(body, header.api_version)
        results = await self.replica_manager.append_records(request)
        # Kafka records the request's size against the producer's quota once appended, and mutes the
        # connection for the throttle (also for acks=0, which gets no response to carry it)
        throttle_time_ms = self.quotas.produce.maybe_record_and_get_throttle_time_ms(
            context.sanitized_user, header.client_id, context.size_in_bytes, self.quotas.produce.clock_ms()
        )
        context.throttle_time_ms = throttle_time_ms
        return None if request.acks == 0 else responses.produce_response(results, throttle_time_ms)

    async def handle_fetch_request(self, header: RequestHeader, body: Body, context: RequestContext) -> Response:
        request = FetchRequest.from_wire(body)
        if request.is_from_follower:  # replication is throttled by the replication quotas only
            return responses.fetch_response(await self.replica_manager.fetch_messages(request))
        fetch_quota = self.quotas.fetch
        user, client_id = context.sanitized_user, header.client_id
        # a response larger than the quota allows in a whole window would always be throttled
        max_quota_window_bytes = min(int(fetch_quota.max_value_in_quota_window(user, client_id)), INT32_MAX)
        if max_quota_window_bytes < request.max_bytes:
            request = dataclasses.replace(request, max_bytes=max_quota_window_bytes)
        result = await self.replica_manager.fetch_messages(request)
        if not fetch_quota.quotas_enabled:
            return responses.fetch_response(result)
        response_size = responses.fetch_response_size(result, header.api_version)
        now_ms = fetch_quota.clock_ms()
        throttle_time_ms = fetch_quota.maybe_record_and_get_throttle_time_ms(user, client_id, response_size, now_ms)
        if throttle_time_ms > 0:
            # Kafka answers a throttled fetch empty, and takes back what it recorded for it
            fetch_quota.unrecord(user, client_id, response_size, now_ms)
            context.throttle_time_ms = throttle_time_ms
            return responses.fetch_response(FetchResult(errors.NONE, result.session_id, []), throttle_time_ms)
        return responses.fetch_response(result)

    async def handle_list_offsets_request(self, header: RequestHeader, body: Body) -> Response:
        request = ListOffsetsRequest.from_wire(body)
        seen: set[TopicPartition] = set()
        topics = []
        for name, partitions in request.topics:
            results = []
            for partition in partitions:
                if partition.tp in seen:  # Kafka answers a partition named twice with INVALID_REQUEST
                    results.append(ListOffsetsPartitionResult(partition.tp, errors.InvalidRequestError.code))
                    continue
                seen.add(partition.tp)
                results.append(self.replica_manager.fetch_offset_for_timestamp(partition, request.replica_id))
            topics.append((name, results))
        return responses.list_offsets_response(topics)

    async def handle_offset_for_leader_epoch_request(self, header: RequestHeader, body: Body) -> Response:
        request = OffsetForLeaderEpochRequest.from_wire(body)
        manager = self.replica_manager
        return responses.offset_for_leader_epoch_response(
            (name, [manager.last_offset_for_leader_epoch(p, request.replica_id) for p in partitions])
            for name, partitions in request.topics
        )

    async def handle_init_producer_id_request(self, header: RequestHeader, body: Body) -> Response:
        """An id for an idempotent producer, unique across the cluster (kafka-protocol.md §9); there are
        no transactions, so a transactional id is refused."""
        request = InitProducerIdRequest.from_wire(body)
        unavailable = errors.CoordinatorNotAvailableError.code
        if (body["producer_id"] == -1) != (body["producer_epoch"] == -1):
            # v3+ (KIP-360): an id without an epoch or the reverse, as Kafka 2.8's KafkaApis refuses it; with
            # both, a producer without a transactional id just gets a new id (TransactionCoordinator)
            return responses.init_producer_id_response(errors.InvalidRequestError.code)
        if request.transactional_id is not None:
            return responses.init_producer_id_response(unavailable)
        producer_id = await self.producer_ids.generate_producer_id()
        if producer_id is None:
            return responses.init_producer_id_response(unavailable)
        return responses.init_producer_id_response(errors.NONE, producer_id)

    async def handle_delete_records_request(self, header: RequestHeader, body: Body) -> Response:
        """Kafka's `handleDeleteRecordsRequest`: a partition the metadata does not know is answered
        UNKNOWN_TOPIC_OR_PARTITION; the others go to the replica manager, which answers once every live
        replica deleted (or at the request's timeout)."""
        request = DeleteRecordsRequest.from_wire(body)
        unknown = errors.UnknownTopicOrPartitionError.code
        answers: dict[TopicPartition, tuple[int, int]] = {}
        known: dict[TopicPartition, int] = {}
        for tp, offset in request.offsets.items():
            partitions = self.metadata_cache.partitions(tp.topic)
            if partitions is None or tp.partition not in partitions:
                answers[tp] = (unknown, INVALID_LOW_WATERMARK)
            else:
                known[tp] = offset
        if known:
            statuses = await self.replica_manager.delete_records(request.timeout_ms, known)
            answers.update((tp, (s.error_code, s.low_watermark)) for tp, s in statuses.items())
        return responses.delete_records_response({tp: answers[tp] for tp in request.offsets})

    # --- log dirs --------------------------------------------------------------------------------------------

    async def handle_alter_replica_log_dirs_request(self, header: RequestHeader, body: Body) -> Response:
        request = AlterReplicaLogDirsRequest.from_wire(body)
        return responses.alter_replica_log_dirs_response(
            self.replica_manager.alter_replica_log_dirs(request.partition_dirs)
        )

    async def handle_describe_log_dirs_request(self, header: RequestHeader, body: Body) -> Response:
        request = DescribeLogDirsRequest.from_wire(body)
        return responses.describe_log_dirs_response(self.replica_manager.describe_log_dirs(request.partitions))

    # --- metadata ------------------------------------------------------------------------------------------

    async def handle_api_versions_request(self, header: RequestHeader, body: Body) -> Response:
        if not valid_api_versions_request(body, header.api_version):
            return responses.api_versions_error(errors.InvalidRequestError.code)
        return responses.api_versions_response(self.served)

    async def handle_topic_metadata_request(self, header: RequestHeader, body: Body) -> Response:
        try:
            request = MetadataRequest.from_wire(body, header.api_version)
        except errors.InvalidRequestError as error:
            return responses.metadata_error_response(body["topics"], error.code)
        cache = self.metadata_cache
        brokers = cache.alive_brokers()
        names = cache.topics() if request.topics is None else request.topics
        return responses.metadata_response(
            brokers,
            ((name, cache.partitions(name)) for name in names),
            self.cluster_id,
            cache.controller_id,
            cache.topic_ids(),
        )

    async def handle_find_coordinator_request(self, header: RequestHeader, body: Body) -> Response:
        return responses.find_coordinator_response(
            errors.CoordinatorNotAvailableError.code, "This broker has no group or transaction coordinator"
        )

    # --- client quotas (Kafka's ZkAdminManager.describeClientQuotas / alterClientQuotas) -------------------

    async def handle_describe_client_quotas_request(self, header: RequestHeader, body: Body) -> Response:
        return await asyncio.get_running_loop().run_in_executor(None, self._describe_client_quotas, body)

    def _describe_client_quotas(self, body: Body) -> Response:
        components, strict = client_quotas.describe_request_from_wire(body)
        try:
            entries = client_quotas.describe_client_quotas(self.zk, components, strict)
        except KafkaOpsError as error:
            return client_quotas.describe_response_to_wire(None, error)
        return client_quotas.describe_response_to_wire(entries)

    async def handle_alter_client_quotas_request(self, header: RequestHeader, body: Body) -> Response:
        """Served by any broker: the quotas are written to ZooKeeper with their change notifications, which
        every broker applies (Kafka's ZooKeeper mode)."""
        alterations, validate_only = client_quotas.alter_request_from_wire(body)
        results = await asyncio.get_running_loop().run_in_executor(
            None, client_quotas.alter_client_quotas, self.zk, alterations, validate_only
        )
        return client_quotas.alter_response_to_wire(results)

    # --- controller -> broker ------------------------------------------------------------------------------

    def _stale_broker_epoch(self, epoch: int) -> bool:
        """A request sent to this broker's previous registration (-1: a version without the field)."""
        return epoch != -1 and epoch < self.broker_epoch()

    async def handle_leader_and_isr_request(self, header: RequestHeader, body: Body) -> Response:
        with collector_paused():  # per-partition work: see cluster/common/collector.py
            request = LeaderAndIsrRequest.from_wire(body)
            if self._stale_broker_epoch(request.broker_epoch):
                result = PartitionErrors(errors.StaleBrokerEpochError.code)
            else:
                result = self.replica_manager.become_leader_or_follower(header.correlation_id, request)
            return responses.partition_errors_response(result)

    async def handle_stop_replica_request(self, header: RequestHeader, body: Body) -> Response:
        with collector_paused():
            request = StopReplicaRequest.from_wire(body)
            if self._stale_broker_epoch(request.broker_epoch):
                result = PartitionErrors(errors.StaleBrokerEpochError.code)
            else:
                result = self.replica_manager.stop_replicas(header.correlation_id, request)
            return responses.partition_errors_response(result)

    async def handle_update_metadata_request(self, header: RequestHeader, body: Body) -> Response:
        response, topics = await asyncio.get_running_loop().run_in_executor(
            None, self._update_metadata, header.correlation_id, body
        )
        if topics and self.admin_manager is not None:
            # Kafka: admin requests waiting for these topics' metadata may complete now
            self.admin_manager.try_complete_delayed_topic_operations(topics)
        return response

    def _update_metadata(self, correlation_id: int, body: Body) -> tuple[Response, set[str]]:
        # typed here, on the executor thread: an UpdateMetadata of a whole cluster must not hold up the loop
        request = UpdateMetadataRequest.from_wire(body)
        if self._stale_broker_epoch(request.broker_epoch):
            return responses.update_metadata_response(errors.StaleBrokerEpochError.code), set()
        error = self.replica_manager.maybe_update_metadata_cache(correlation_id, request)
        waiting = self.admin_manager is not None and self.admin_manager.topic_purgatory.delayed() > 0
        topics = {state.topic_name for state in request.partition_states} if waiting and error == errors.NONE else set()
        return responses.update_metadata_response(error), topics

    # --- requests for the controller -----------------------------------------------------------------------

    async def handle_controlled_shutdown_request(self, header: RequestHeader, body: Body) -> Response:
        request = ControlledShutdownRequest.from_wire(body)
        return await asyncio.get_running_loop().run_in_executor(None, self._controlled_shutdown, request)

    def _controlled_shutdown(self, request: ControlledShutdownRequest) -> Response:
        if not self.controller.is_active:
            return responses.controlled_shutdown_response(errors.NotControllerError.code)
        try:
            remaining = self.controller.controlled_shutdown(request.broker_id, request.broker_epoch)
        except BrokerError as error:  # the controller answers with Kafka's error classes
            return responses.controlled_shutdown_response(error.code)
        except KafkaOpsError:
            return responses.controlled_shutdown_response(errors.UnknownServerError.code)
        return responses.controlled_shutdown_response(errors.NONE, remaining)

    async def handle_elect_leaders_request(self, header: RequestHeader, body: Body) -> Response:
        request = ElectLeadersRequest.from_wire(body)
        return await asyncio.get_running_loop().run_in_executor(
            None, self._elect_leaders, request, body, header.api_version
        )

    def _elect_leaders(self, request: ElectLeadersRequest, body: Body, version: int) -> Response:
        """ElectLeaders: served by the controller (Kafka's `processReplicaLeaderElection`); any other broker
        forwards the request (its `body` as it came, at its `version`) to it, so a tool may ask any broker."""
        requested = request.partitions
        if request.election_type not in {member.value for member in ElectionType}:
            return responses.elect_leaders_response(requested or [], {}, errors.InvalidRequestError.code)
        timeout_s = max(request.timeout_ms, 0) / 1000
        if self.controller.is_active:
            try:
                results = self.controller.elect_leaders(ElectionType(request.election_type), requested, timeout_s)
            except TimeoutError:
                return responses.elect_leaders_response(requested or [], {}, errors.RequestTimedOutError.code)
            return responses.elect_leaders_response(list(results), results, errors.NONE)
        controller_id = self.zk.get_controller_id()
        endpoint = broker_endpoint(self.zk, controller_id) if controller_id is not None else None
        if controller_id == self.broker_id or endpoint is None:
            return responses.elect_leaders_response(requested or [], {}, errors.NotControllerError.code)
        return send_request(
            endpoint.host,
            endpoint.port,
            ApiKey.ELECT_LEADERS,
            version,
            body,
            f"broker-{self.broker_id}",
            timeout_s + 5,
        )

    # --- the Admin API (Kafka's ZkAdminManager) -------------------------------------------------------------

    def _admin(self) -> ZkAdminManager:
        assert self.admin_manager is not None  # noqa: S101 - only registered with one
        return self.admin_manager

    async def handle_create_topics_request(self, header: RequestHeader, body: Body) -> Response:
        return await self._admin().create_topics(body, header.api_version)

    async def handle_delete_topics_request(self, header: RequestHeader, body: Body) -> Response:
        return await self._admin().delete_topics(body, header.api_version)

    async def handle_create_partitions_request(self, header: RequestHeader, body: Body) -> Response:
        return await self._admin().create_partitions(body, header.api_version)

    async def handle_describe_configs_request(self, header: RequestHeader, body: Body) -> Response:
        return await asyncio.get_running_loop().run_in_executor(
            None, self._admin().describe_configs, body, header.api_version
        )

    async def handle_alter_configs_request(self, header: RequestHeader, body: Body) -> Response:
        return await asyncio.get_running_loop().run_in_executor(None, self._admin().alter_configs, body)

    async def handle_incremental_alter_configs_request(self, header: RequestHeader, body: Body) -> Response:
        return await asyncio.get_running_loop().run_in_executor(None, self._admin().incremental_alter_configs, body)

    async def handle_describe_cluster_request(self, header: RequestHeader, body: Body) -> Response:
        """Kafka's `handleDescribeCluster`: the cluster id, the controller and the live brokers, as the
        metadata cache has them (no authorizer: authorized operations are "not provided")."""
        cache = self.metadata_cache
        controller_id = cache.controller_id
        return {
            "throttle_time_ms": 0,
            "error_code": errors.NONE,
            "error_message": None,
            "cluster_id": self.cluster_id or "",
            "controller_id": controller_id if controller_id is not None else -1,
            "brokers": [
                {"broker_id": b.broker_id, "host": b.host, "port": b.port, "rack": b.rack}
                for b in cache.alive_brokers()
            ],
            "cluster_authorized_operations": NO_AUTHORIZED_OPERATIONS,
        }

    # --- partition reassignments (KIP-455: the controller's event queue) -----------------------------------

    async def handle_alter_partition_reassignments_request(self, header: RequestHeader, body: Body) -> Response:
        return await asyncio.get_running_loop().run_in_executor(None, self._alter_partition_reassignments, body)

    def _alter_partition_reassignments(self, body: Body) -> Response:
        """Kafka's `handleAlterPartitionReassignmentsRequest`: answered by the controller (NOT_CONTROLLER
        elsewhere, as Kafka 2.8 answers; clients send it to the controller)."""
        requested: dict[TopicPartition, Sequence[int] | None] = {
            TopicPartition(topic["name"], p["partition_index"]): p["replicas"]
            for topic in body["topics"]
            for p in topic["partitions"]
        }
        try:
            if not self.controller.is_active:
                raise errors.NotControllerError()
            results = self.controller.alter_partition_reassignments(requested, max(body["timeout_ms"], 0) / 1000)
        except TimeoutError:
            return _top_level_error(errors.RequestTimedOutError, {"responses": []})
        except errors.NotControllerError:
            return _top_level_error(errors.NotControllerError, {"responses": []})
        by_topic: dict[str, list[dict[str, Any]]] = {}
        for tp, (code, message) in results.items():
            by_topic.setdefault(tp.topic, []).append(
                {"partition_index": tp.partition, "error_code": code, "error_message": message}
            )
        return {
            "throttle_time_ms": 0,
            "error_code": errors.NONE,
            "error_message": None,
            "responses": [{"name": name, "partitions": partitions} for name, partitions in by_topic.items()],
        }

    async def handle_list_partition_reassignments_request(self, header: RequestHeader, body: Body) -> Response:
        return await asyncio.get_running_loop().run_in_executor(None, self._list_partition_reassignments, body)

    def _list_partition_reassignments(self, body: Body) -> Response:
        topics = body.get("topics")
        asked = (
            None
            if topics is None
            else [TopicPartition(t["name"], index) for t in topics for index in t["partition_indexes"]]
        )
        try:
            if not self.controller.is_active:
                raise errors.NotControllerError()
            found = self.controller.list_partition_reassignments(asked, max(body["timeout_ms"], 0) / 1000)
        except TimeoutError:
            return _top_level_error(errors.RequestTimedOutError, {"topics": []})
        except errors.NotControllerError:
            return _top_level_error(errors.NotControllerError, {"topics": []})
        by_topic: dict[str, list[dict[str, Any]]] = {}
        for tp, assignment in found.items():
            by_topic.setdefault(tp.topic, []).append(
                {
                    "partition_index": tp.partition,
                    "replicas": list(assignment.replicas),
                    "adding_replicas": list(assignment.adding_replicas),
                    "removing_replicas": list(assignment.removing_replicas),
                }
            )
        return {
            "throttle_time_ms": 0,
            "error_code": errors.NONE,
            "error_message": None,
            "topics": [{"name": name, "partitions": partitions} for name, partitions in by_topic.items()],
        }


def _top_level_error(error: type[BrokerError], rest: dict[str, Any]) -> Response:
    """A response failed as a whole; the message is Kafka's text for the code (`new ApiError(error)`)."""
    return {
        "throttle_time_ms": 0,
        "error_code": error.code,
        "error_message": errors.KAFKA_MESSAGES.get(error.code, _ERROR_TEXTS.get(error.code)),
        **rest,
    }


_ERROR_TEXTS = {errors.NotControllerError.code: "This is not the correct controller for this cluster."}
