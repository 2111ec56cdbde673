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
import contextlib
import contextvars
import dataclasses
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol

from kafkaops.admin import client_quotas, user_scram_credentials
from kafkaops.admin.acl_authorizer import AclAuthorizer
from kafkaops.cluster.broker import acl_apis, request_authorization, responses
from kafkaops.cluster.broker.authorizer import AuthHelper
from kafkaops.cluster.broker.client_quota_manager import NANOS_TO_PERCENTAGE_PER_SECOND, QuotaManagers
from kafkaops.cluster.broker.delayed_delete_records import INVALID_LOW_WATERMARK
from kafkaops.cluster.broker.group_apis import GroupApis
from kafkaops.cluster.broker.group_coordinator import GroupConfig, GroupCoordinator
from kafkaops.cluster.broker.group_delayed_operations import LoopScheduler
from kafkaops.cluster.broker.group_metadata_manager import GROUP_METADATA_TOPIC_NAME, GroupMetadataManager
from kafkaops.cluster.broker.metadata_cache import MetadataCache
from kafkaops.cluster.broker.network_client import InterBrokerChannel, broker_endpoint, send_request
from kafkaops.cluster.broker.offset_apis import OffsetApis
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
from kafkaops.cluster.broker.responses import (
    EpochEndOffset,
    FetchPartitionResult,
    FetchResult,
    ListOffsetsPartitionResult,
    PartitionErrors,
    ProducePartitionResult,
)
from kafkaops.cluster.broker.zk_admin_manager import (
    ZkAdminManager,
)
from kafkaops.cluster.common import errors
from kafkaops.cluster.common.acl import CLUSTER_NAME, AclOperation, ResourceType
from kafkaops.cluster.common.collector import collector_paused
from kafkaops.cluster.common.errors import BrokerError, KafkaOpsError
from kafkaops.cluster.common.java_errors import default_message
from kafkaops.cluster.protocol.messages import Request, RequestHeader
from kafkaops.cluster.protocol.schemas import NO_AUTHORIZED_OPERATIONS, ApiKey, ElectionType
from kafkaops.cluster.zk.client import KafkaZkClient
from kafkaops.cluster.zk.values import ReplicaAssignment, TopicPartition

Body = Mapping[str, Any]
Response = dict[str, Any]
Handler = Callable[[RequestHeader, Body], Awaitable[Response | None]]
ContextHandler = Callable[[RequestHeader, Body, RequestContext], Awaitable[Response | None]]
INT32_MAX = 2**31 - 1
TOPIC_AUTHORIZATION_FAILED = errors.TopicAuthorizationFailedError.code
CLUSTER_AUTHORIZATION_FAILED = errors.ClusterAuthorizationFailedError.code
Op, Resource = AclOperation, ResourceType

_REQUEST_CONTEXT: contextvars.ContextVar[RequestContext] = contextvars.ContextVar("request_context")
"""The context of the request being handled (its connection's principal and host, for the authorizer): set
by `_dispatch` for the task that awaits the handler, so every handler can read it without each signature
carrying it. Code on the executor does not see it: handlers authorize on the loop, before handing off."""


# requests between brokers are never throttled (Kafka: the cluster actions, and a follower's fetch)
_CLUSTER_ACTIONS = frozenset(
    {ApiKey.LEADER_AND_ISR, ApiKey.STOP_REPLICA, ApiKey.UPDATE_METADATA, ApiKey.CONTROLLED_SHUTDOWN}
)


def _exempt_from_request_quota(request: Request) -> bool:
    key = request.header.api_key
    return key in _CLUSTER_ACTIONS or (key == ApiKey.FETCH and request.body.get("replica_id", -1) >= 0)


_CONNECTION_SET_UP = frozenset({ApiKey.API_VERSIONS, ApiKey.SASL_HANDSHAKE, ApiKey.SASL_AUTHENTICATE})


def _served_before_metadata(request: Request) -> bool:
    """Whether a request is served by a broker that has no metadata yet: the controller's, a follower's fetch
    and a connection's set-up read nothing of the cluster's metadata (the controller's fill it)."""
    return request.header.api_key in _CONNECTION_SET_UP or _exempt_from_request_quota(request)


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
        group_metadata_manager: GroupMetadataManager | None = None,
        inter_broker: InterBrokerChannel | None = None,
        authorizer: AclAuthorizer | None = None,
        metadata_wait_s: float = 0.0,
    ) -> None:
        self.broker_id = broker_id
        self.metadata_wait_s = metadata_wait_s
        """How long a client's request waits, after the broker started, for the controller's first UpdateMetadata
        (0: not at all). Kafka 2.8 answers from an empty cache then: no brokers, no topics, no coordinator, which
        made librdkafka forget live brokers (its coordinator among them) and refuse a commit's partitions; a
        KRaft broker serves nothing before it has caught up with the metadata, and neither does this one, for
        at most this long (what a dead controller takes to be replaced: the ZooKeeper session timeout)."""
        self._metadata_ready = asyncio.Event()
        self.inter_broker = inter_broker or InterBrokerChannel()
        """How this broker reaches the controller when it forwards a request to it (SASL login included)."""
        self.authorizer = authorizer
        self.auth = AuthHelper(authorizer)
        self.cluster_id = cluster_id
        self.zk = zk
        self.replica_manager = replica_manager
        self.metadata_cache = metadata_cache
        self.controller = controller
        self.broker_epoch = broker_epoch
        self.producer_ids = ProducerIdManager(broker_id, zk)
        self.group_metadata_manager = group_metadata_manager or GroupMetadataManager(
            broker_id, replica_manager.config, replica_manager, metadata_cache, replica_manager.clock
        )
        self.offset_apis = OffsetApis(replica_manager.config, zk, metadata_cache, self.group_metadata_manager)
        self.admin_manager = admin_manager
        self._handlers: dict[ApiKey, Handler] = {
            ApiKey.LIST_OFFSETS: self.handle_list_offsets_request,
            ApiKey.API_VERSIONS: self.handle_api_versions_request,
            ApiKey.INIT_PRODUCER_ID: self.handle_init_producer_id_request,
            ApiKey.OFFSET_FOR_LEADER_EPOCH: self.handle_offset_for_leader_epoch_request,
            ApiKey.OFFSET_COMMIT: self.handle_offset_commit_request,
            ApiKey.OFFSET_FETCH: self.handle_offset_fetch_request,
            ApiKey.OFFSET_DELETE: self.handle_offset_delete_request,
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
            ApiKey.SASL_HANDSHAKE: self.handle_sasl_handshake_request,
            ApiKey.SASL_AUTHENTICATE: self.handle_sasl_authenticate_request,
            ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS: self.handle_describe_user_scram_credentials_request,
            ApiKey.ALTER_USER_SCRAM_CREDENTIALS: self.handle_alter_user_scram_credentials_request,
            ApiKey.DESCRIBE_ACLS: self.handle_describe_acls_request,
            ApiKey.CREATE_ACLS: self.handle_create_acls_request,
            ApiKey.DELETE_ACLS: self.handle_delete_acls_request,
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
                    ApiKey.ALTER_PARTITION_REASSIGNMENTS: self.handle_alter_partition_reassignments_request,
                    ApiKey.LIST_PARTITION_REASSIGNMENTS: self.handle_list_partition_reassignments_request,
                }
            )
        # the handlers that need the request's context: the client quotas they record and throttle
        # and those that answer per listener (the endpoints of the listener the request came in on)
        self._context_handlers: dict[ApiKey, ContextHandler] = {
            ApiKey.PRODUCE: self.handle_produce_request,
            ApiKey.FETCH: self.handle_fetch_request,
            ApiKey.METADATA: self.handle_topic_metadata_request,
            ApiKey.FIND_COORDINATOR: self.handle_find_coordinator_request,
        }
        if admin_manager is not None:
            self._context_handlers[ApiKey.DESCRIBE_CLUSTER] = self.handle_describe_cluster_request
        self.served = frozenset(self._handlers) | frozenset(self._context_handlers)
        """The APIs this broker serves; the network layer closes a connection asking for another."""
        self.quotas = quotas or QuotaManagers.create(lambda: int(time.time() * 1000))
        self._register_group_handlers(
            GroupCoordinator(
                broker_id,
                GroupConfig.from_broker_config(replica_manager.config),
                self.group_metadata_manager,
                LoopScheduler(replica_manager.clock),
            )
        )

    async def handle(self, request: Request, context: RequestContext | None = None) -> Response | None:
        """The response body to `request` (an API in `served`), or None when it gets no response.
        `context` (the network layer's) gets the throttle time to mute the connection for."""
        context = context or RequestContext()
        header = request.header
        if not self._metadata_ready.is_set() and self.metadata_wait_s > 0 and not _served_before_metadata(request):
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._metadata_ready.wait(), self.metadata_wait_s)
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
        _REQUEST_CONTEXT.set(context)
        if key in self._context_handlers:
            return await self._context_handlers[key](request.header, request.body, context)
        return await self._handlers[key](request.header, request.body)

    @staticmethod
    def _context() -> RequestContext:
        """The request's context (a bare one when a handler is called directly, as in unit tests)."""
        return _REQUEST_CONTEXT.get(None) or RequestContext()

    def _authorize(self, operation: AclOperation, resource_type: ResourceType, name: str) -> bool:
        return self.auth.authorize(self._context(), operation, resource_type, name)

    def _authorize_cluster(self, operation: AclOperation) -> bool:
        return self.auth.authorize(self._context(), operation, Resource.CLUSTER, CLUSTER_NAME)

    def _authorized_topics(self, operation: AclOperation, topics: Iterable[str]) -> set[str]:
        return self.auth.filter_by_authorized(self._context(), operation, Resource.TOPIC, topics)

    def _allowed(self) -> request_authorization.Allowed:
        """The authorizer's answer for this request's principal and host (to hand to pure functions)."""
        context = self._context()
        return lambda operation, resource_type, name: self.auth.authorize(context, operation, resource_type, name)

    @staticmethod
    async def _serve(split: request_authorization.Split, handler: Callable[[Body], Awaitable[Response]]) -> Response:
        """The handler's answer to the authorized part of a request, with the refusals of the rest."""
        response = await handler(split.body) if split.body is not None else dict(split.empty)
        return split.merge(response)

    @staticmethod
    async def _blocking(function: Callable[..., Response], *args: Any) -> Response:
        return await asyncio.get_running_loop().run_in_executor(None, function, *args)

    # --- data ----------------------------------------------------------------------------------------------

    async def handle_produce_request(
        self, header: RequestHeader, body: Body, context: RequestContext
    ) -> Response | None:
        request = ProduceRequest.from_wire(body, header.api_version)
        tid = request.transactional_id
        if tid is not None and not self._authorize(Op.WRITE, Resource.TRANSACTIONAL_ID, tid):
            code = errors.TransactionalIdAuthorizationFailedError.code
            failed = [ProducePartitionResult(p.tp, code) for p in request.partitions]
            return None if request.acks == 0 else responses.produce_response(failed)
        authorized = self._authorized_topics(Op.WRITE, (p.tp.topic for p in request.partitions))
        denied = [
            ProducePartitionResult(p.tp, TOPIC_AUTHORIZATION_FAILED)
            for p in request.partitions
            if p.tp.topic not in authorized
        ]
        if denied:
            request = dataclasses.replace(
                request, partitions=tuple(p for p in request.partitions if p.tp.topic in authorized)
            )
        results = [
            *(await self.replica_manager.append_records(request) if request.partitions or not denied else []),
            *denied,
        ]
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
            if not self._authorize_cluster(Op.CLUSTER_ACTION):
                denied = [FetchPartitionResult(p.tp, TOPIC_AUTHORIZATION_FAILED) for p in request.partitions]
                return responses.fetch_response(FetchResult(errors.NONE, 0, denied))
            return responses.fetch_response(await self.replica_manager.fetch_messages(request))
        authorized = self._authorized_topics(Op.READ, (p.tp.topic for p in request.partitions))
        denied = [
            FetchPartitionResult(p.tp, TOPIC_AUTHORIZATION_FAILED)
            for p in request.partitions
            if p.tp.topic not in authorized
        ]
        if denied:
            interesting = tuple(p for p in request.partitions if p.tp.topic in authorized)
            if not interesting:  # Kafka answers at once when nothing is left to read
                return responses.fetch_response(FetchResult(errors.NONE, request.session_id, denied))
            request = dataclasses.replace(request, partitions=interesting)
        fetch_quota = self.quotas.fetch
        user, client_id = context.sanitized_user, header.client_id
        # a response larger than the quota allows in a whole window would always be throttled
        max_quota_window_bytes = min(int(fetch_quota.max_value_in_quota_window(user, client_id)), INT32_MAX)
        if max_quota_window_bytes < request.max_bytes:
            request = dataclasses.replace(request, max_bytes=max_quota_window_bytes)
        result = await self.replica_manager.fetch_messages(request)
        if denied:
            result = dataclasses.replace(result, partitions=[*result.partitions, *denied])
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
        authorized = self._authorized_topics(Op.DESCRIBE, (name for name, _ in request.topics))
        seen: set[TopicPartition] = set()
        topics = []
        for name, partitions in request.topics:
            if name not in authorized:
                topics.append(
                    (name, [ListOffsetsPartitionResult(p.tp, TOPIC_AUTHORIZATION_FAILED) for p in partitions])
                )
                continue
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
        names = [name for name, _ in request.topics]
        authorized = (
            set(names) if self._authorize_cluster(Op.CLUSTER_ACTION) else self._authorized_topics(Op.DESCRIBE, names)
        )
        return responses.offset_for_leader_epoch_response(
            (
                name,
                [
                    manager.last_offset_for_leader_epoch(p, request.replica_id)
                    if name in authorized
                    else EpochEndOffset(p.tp, TOPIC_AUTHORIZATION_FAILED, -1)
                    for p in partitions
                ],
            )
            for name, partitions in request.topics
        )

    async def handle_init_producer_id_request(self, header: RequestHeader, body: Body) -> Response:
        """An id for an idempotent producer, unique across the cluster (kafka-protocol.md §9); there are
        no transactions, so a transactional id is refused."""
        request = InitProducerIdRequest.from_wire(body)
        tid = request.transactional_id
        if tid is not None and not self._authorize(Op.WRITE, Resource.TRANSACTIONAL_ID, tid):
            return responses.init_producer_id_response(errors.TransactionalIdAuthorizationFailedError.code)
        # KIP-679: an idempotent producer needs IdempotentWrite on the cluster, or Write on some topic
        if (
            tid is None
            and not self._authorize_cluster(Op.IDEMPOTENT_WRITE)
            and not self.auth.authorize_by_resource_type(self._context(), Op.WRITE, Resource.TOPIC)
        ):
            return responses.init_producer_id_response(CLUSTER_AUTHORIZATION_FAILED)
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
        authorized = self._authorized_topics(Op.DELETE, (tp.topic for tp in request.offsets))
        for tp, offset in request.offsets.items():
            if tp.topic not in authorized:
                answers[tp] = (TOPIC_AUTHORIZATION_FAILED, INVALID_LOW_WATERMARK)
                continue
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
        if not self._authorize_cluster(Op.ALTER):
            return responses.alter_replica_log_dirs_response(
                dict.fromkeys(request.partition_dirs, CLUSTER_AUTHORIZATION_FAILED)
            )
        return responses.alter_replica_log_dirs_response(
            self.replica_manager.alter_replica_log_dirs(request.partition_dirs)
        )

    async def handle_describe_log_dirs_request(self, header: RequestHeader, body: Body) -> Response:
        request = DescribeLogDirsRequest.from_wire(body)
        if not self._authorize_cluster(Op.DESCRIBE):  # Kafka 2.8 answers no log dirs
            return responses.describe_log_dirs_response([])
        return responses.describe_log_dirs_response(self.replica_manager.describe_log_dirs(request.partitions))

    # --- metadata ------------------------------------------------------------------------------------------

    async def handle_api_versions_request(self, header: RequestHeader, body: Body) -> Response:
        if not valid_api_versions_request(body, header.api_version):
            return responses.api_versions_error(errors.InvalidRequestError.code)
        return responses.api_versions_response(self.served)

    async def handle_sasl_handshake_request(self, header: RequestHeader, body: Body) -> Response:
        """Only the SASL authenticator takes a handshake, before the first request: here it is out of place."""
        return {"error_code": errors.IllegalSaslStateError.code, "mechanisms": []}

    async def handle_sasl_authenticate_request(self, header: RequestHeader, body: Body) -> Response:
        return {
            "error_code": errors.IllegalSaslStateError.code,
            "error_message": "SaslAuthenticate request received after successful authentication",
            "auth_bytes": b"",
            "session_lifetime_ms": 0,
        }

    async def handle_topic_metadata_request(
        self, header: RequestHeader, body: Body, context: RequestContext
    ) -> Response:
        """Kafka's `handleTopicMetadataRequest`: the brokers as the client's listener reaches them (brokers
        without that listener are left out; a partition whose live leader lacks it is LISTENER_NOT_FOUND
        from v6, LEADER_NOT_AVAILABLE before)."""
        try:
            request = MetadataRequest.from_wire(body, header.api_version)
        except errors.InvalidRequestError as error:
            return responses.metadata_error_response(body["topics"], error.code)
        cache = self.metadata_cache
        brokers = cache.alive_brokers(context.listener_name)
        names = cache.topics() if request.topics is None else request.topics
        # topics the principal may not Describe: left out of "all topics", refused when named (whether they
        # exist or not is not disclosed)
        # "all topics" leaves out what may not be described without logging each as refused (Kafka's logIfDenied)
        authorized = self.auth.filter_by_authorized(
            self._context(), Op.DESCRIBE, Resource.TOPIC, names, log_if_denied=request.topics is not None
        )
        denied = [name for name in dict.fromkeys(names) if name not in authorized]
        response = responses.metadata_response(
            brokers,
            ((name, cache.partitions(name)) for name in names if name in authorized),
            self.cluster_id,
            cache.controller_id,
            cache.topic_ids(),
            alive_ids={b.broker_id for b in cache.alive_brokers()},
            error_unavailable_listeners=header.api_version >= 6,
        )
        context = self._context()
        if body.get("include_topic_authorized_operations"):  # v8+ (KIP-430)
            for entry in response["topics"]:
                entry["topic_authorized_operations"] = self.auth.authorized_operations(
                    context, Resource.TOPIC, entry["name"]
                )
        if body.get("include_cluster_authorized_operations") and self._authorize_cluster(Op.DESCRIBE):
            response["cluster_authorized_operations"] = self.auth.authorized_operations(
                context, Resource.CLUSTER, CLUSTER_NAME
            )
        if request.topics is not None:
            response["topics"].extend(
                {"error_code": TOPIC_AUTHORIZATION_FAILED, "name": name, "is_internal": False, "partitions": []}
                for name in denied
            )
        return response

    # --- offsets (offset_apis.py, group_metadata_manager.py) -----------------------------------------------

    async def handle_find_coordinator_request(
        self, header: RequestHeader, body: Body, context: RequestContext
    ) -> Response:
        refused = request_authorization.find_coordinator_refusal(body, self._allowed())
        return refused if refused is not None else await self.offset_apis.find_coordinator(body, context.listener_name)

    async def handle_offset_commit_request(self, header: RequestHeader, body: Body) -> Response:
        split = request_authorization.split_offset_commit(body, self._allowed())
        return await self._serve(split, lambda kept: self.offset_apis.offset_commit(kept, header.api_version))

    async def handle_offset_fetch_request(self, header: RequestHeader, body: Body) -> Response:
        allowed = self._allowed()
        split = request_authorization.split_offset_fetch(body, allowed, header.api_version)
        served = await self._serve(split, lambda kept: self.offset_apis.offset_fetch(kept, header.api_version))
        return request_authorization.filter_offset_fetch(served, body, allowed)

    async def handle_offset_delete_request(self, header: RequestHeader, body: Body) -> Response:
        split = request_authorization.split_offset_delete(body, self._allowed())
        return await self._serve(split, self.offset_apis.offset_delete)

    # --- client quotas (Kafka's ZkAdminManager.describeClientQuotas / alterClientQuotas) -------------------

    async def handle_describe_client_quotas_request(self, header: RequestHeader, body: Body) -> Response:
        if not self._authorize_cluster(Op.DESCRIBE_CONFIGS):
            return client_quotas.describe_response_to_wire(None, _cluster_authorization_failed())
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
        if not self._authorize_cluster(Op.ALTER_CONFIGS):
            return client_quotas.alter_response_to_wire(
                [(a.entity, _cluster_authorization_failed()) for a in alterations]
            )
        results = await asyncio.get_running_loop().run_in_executor(
            None, client_quotas.alter_client_quotas, self.zk, alterations, validate_only
        )
        return client_quotas.alter_response_to_wire(results)

    async def handle_describe_user_scram_credentials_request(self, header: RequestHeader, body: Body) -> Response:
        """Served by any broker from ZooKeeper (Kafka's `ZkAdminManager.describeUserScramCredentials`)."""
        users = None if body["users"] is None else [user["name"] for user in body["users"]]
        if not self._authorize_cluster(Op.DESCRIBE):
            failed = {"error_code": CLUSTER_AUTHORIZATION_FAILED, "error_message": "Cluster authorization failed."}
            return {
                "throttle_time_ms": 0,
                **failed,
                "results": [{"user": u, **failed, "credential_infos": []} for u in users or []],
            }
        return await asyncio.get_running_loop().run_in_executor(
            None, user_scram_credentials.describe_user_scram_credentials, self.zk, users
        )

    async def handle_alter_user_scram_credentials_request(self, header: RequestHeader, body: Body) -> Response:
        """Served by the controller only, as Kafka 2.8's (others answer NOT_CONTROLLER for every user); the
        credentials are written to ZooKeeper with a change notification each, which every broker applies."""
        if not self.controller.is_active or not self._authorize_cluster(Op.ALTER):
            users = dict.fromkeys(c["name"] for c in [*body["deletions"], *body["upsertions"]])
            code = errors.NotControllerError.code if not self.controller.is_active else CLUSTER_AUTHORIZATION_FAILED
            return {
                "throttle_time_ms": 0,
                "results": [{"user": u, "error_code": code, "error_message": default_message(code)} for u in users],
            }
        return await asyncio.get_running_loop().run_in_executor(
            None, user_scram_credentials.alter_user_scram_credentials, self.zk, body["upsertions"], body["deletions"]
        )

    # --- ACLs (acl_apis.py: Kafka's handleDescribeAcls / handleCreateAcls / handleDeleteAcls) -------------

    async def handle_describe_acls_request(self, header: RequestHeader, body: Body) -> Response:
        return acl_apis.describe_acls(self.authorizer, self._authorize_cluster(Op.DESCRIBE), body)

    async def handle_create_acls_request(self, header: RequestHeader, body: Body) -> Response:
        authorized = self._authorize_cluster(Op.ALTER)
        return await asyncio.get_running_loop().run_in_executor(
            None, acl_apis.create_acls, self.authorizer, authorized, body
        )

    async def handle_delete_acls_request(self, header: RequestHeader, body: Body) -> Response:
        authorized = self._authorize_cluster(Op.ALTER)
        return await asyncio.get_running_loop().run_in_executor(
            None, acl_apis.delete_acls, self.authorizer, authorized, body
        )

    # --- controller -> broker ------------------------------------------------------------------------------

    def _stale_broker_epoch(self, epoch: int) -> bool:
        """A request sent to this broker's previous registration (-1: a version without the field)."""
        return epoch != -1 and epoch < self.broker_epoch()

    def _refused_replica_request(self, broker_epoch: int) -> PartitionErrors | None:
        """A LeaderAndIsr's or StopReplica's refusal: not the controller's principal, or sent to this broker's
        previous registration; None when it is to be applied."""
        if not self._authorize_cluster(Op.CLUSTER_ACTION):
            return PartitionErrors(CLUSTER_AUTHORIZATION_FAILED)
        if self._stale_broker_epoch(broker_epoch):
            return PartitionErrors(errors.StaleBrokerEpochError.code)
        return None

    async def handle_leader_and_isr_request(self, header: RequestHeader, body: Body) -> Response:
        with collector_paused():  # per-partition work: see cluster/common/collector.py
            request = LeaderAndIsrRequest.from_wire(body)
            result = self._refused_replica_request(request.broker_epoch)
            if result is None:
                result = self.replica_manager.become_leader_or_follower(header.correlation_id, request)
                self._on_leadership_change(request, result)
            return responses.partition_errors_response(result)

    def _on_leadership_change(self, request: LeaderAndIsrRequest, result: PartitionErrors) -> None:
        """Kafka's `RequestHandlerHelper.onLeadershipChange`: the offsets partitions this broker now leads
        are loaded, those it now follows unloaded, fenced by their leader epoch."""
        changed = {tp for tp, code in result.partition_errors if code == errors.NONE}
        for state in request.partition_states:
            tp = state.partition
            if tp.topic != GROUP_METADATA_TOPIC_NAME or tp not in changed:
                continue
            if state.leader == self.broker_id:
                self.group_metadata_manager.on_election(tp.partition, state.leader_epoch)
            else:
                self.group_metadata_manager.on_resignation(tp.partition, state.leader_epoch)

    async def handle_stop_replica_request(self, header: RequestHeader, body: Body) -> Response:
        with collector_paused():
            request = StopReplicaRequest.from_wire(body)
            result = self._refused_replica_request(request.broker_epoch)
            if result is None:
                result = self.replica_manager.stop_replicas(header.correlation_id, request)
                # Kafka unloads on a deleting StopReplica only; here a stopped replica leads no more either
                for tp, code in result.partition_errors:
                    if tp.topic == GROUP_METADATA_TOPIC_NAME and code == errors.NONE:
                        self.group_metadata_manager.on_resignation(tp.partition, None)
            return responses.partition_errors_response(result)

    async def handle_update_metadata_request(self, header: RequestHeader, body: Body) -> Response:
        if not self._authorize_cluster(Op.CLUSTER_ACTION):
            return responses.update_metadata_response(CLUSTER_AUTHORIZATION_FAILED)
        response, topics = await asyncio.get_running_loop().run_in_executor(
            None, self._update_metadata, header.correlation_id, body
        )
        if topics and self.admin_manager is not None:
            # Kafka: admin requests waiting for these topics' metadata may complete now
            self.admin_manager.try_complete_delayed_topic_operations(topics)
        if response["error_code"] == errors.NONE:
            self._metadata_ready.set()
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
        if not self._authorize_cluster(Op.CLUSTER_ACTION):
            return responses.controlled_shutdown_response(CLUSTER_AUTHORIZATION_FAILED)
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
        if not self._authorize_cluster(Op.ALTER):
            return responses.elect_leaders_response(request.partitions or [], {}, CLUSTER_AUTHORIZATION_FAILED)
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
        endpoint = broker_endpoint(self.zk, controller_id, self.inter_broker) if controller_id is not None else None
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
            channel=self.inter_broker.channel,
        )

    # --- the Admin API (Kafka's ZkAdminManager) -------------------------------------------------------------

    def _admin(self) -> ZkAdminManager:
        assert self.admin_manager is not None  # noqa: S101 - only registered with one
        return self.admin_manager

    async def handle_create_topics_request(self, header: RequestHeader, body: Body) -> Response:
        allowed = self._allowed()
        split = request_authorization.split_create_topics(body, allowed)
        served = await self._serve(split, lambda kept: self._admin().create_topics(kept, header.api_version))
        return request_authorization.hide_configs(served, body, allowed)

    async def handle_delete_topics_request(self, header: RequestHeader, body: Body) -> Response:
        split = request_authorization.split_delete_topics(body, self._allowed())
        return await self._serve(split, lambda kept: self._admin().delete_topics(kept, header.api_version))

    async def handle_create_partitions_request(self, header: RequestHeader, body: Body) -> Response:
        split = request_authorization.split_create_partitions(body, self._allowed())
        return await self._serve(split, lambda kept: self._admin().create_partitions(kept, header.api_version))

    async def handle_describe_configs_request(self, header: RequestHeader, body: Body) -> Response:
        split = request_authorization.split_config_resources(body, self._allowed(), Op.DESCRIBE_CONFIGS, "results")
        describe = self._admin().describe_configs
        return await self._serve(split, lambda kept: self._blocking(describe, kept, header.api_version))

    async def handle_alter_configs_request(self, header: RequestHeader, body: Body) -> Response:
        split = request_authorization.split_config_resources(body, self._allowed(), Op.ALTER_CONFIGS, "responses")
        return await self._serve(split, lambda kept: self._blocking(self._admin().alter_configs, kept))

    async def handle_incremental_alter_configs_request(self, header: RequestHeader, body: Body) -> Response:
        split = request_authorization.split_config_resources(body, self._allowed(), Op.ALTER_CONFIGS, "responses")
        return await self._serve(split, lambda kept: self._blocking(self._admin().incremental_alter_configs, kept))

    async def handle_describe_cluster_request(
        self, header: RequestHeader, body: Body, context: RequestContext
    ) -> Response:
        """Kafka's `handleDescribeCluster`: the cluster id, the controller and the live brokers on the
        request's listener, as the metadata cache has them (no authorizer: authorized operations are "not
        provided")."""
        cache = self.metadata_cache
        controller_id = cache.controller_id
        operations = NO_AUTHORIZED_OPERATIONS
        if body.get("include_cluster_authorized_operations") and self._authorize_cluster(Op.DESCRIBE):
            operations = self.auth.authorized_operations(self._context(), Resource.CLUSTER, CLUSTER_NAME)
        return {
            "throttle_time_ms": 0,
            "error_code": errors.NONE,
            "error_message": None,
            "cluster_id": self.cluster_id or "",
            "controller_id": controller_id if controller_id is not None else -1,
            "brokers": [
                {"broker_id": b.broker_id, "host": b.host, "port": b.port, "rack": b.rack}
                for b in cache.alive_brokers(context.listener_name)
            ],
            "cluster_authorized_operations": operations,
        }

    # --- partition reassignments (KIP-455: the controller's event queue) -----------------------------------

    async def handle_alter_partition_reassignments_request(self, header: RequestHeader, body: Body) -> Response:
        if not self._authorize_cluster(Op.ALTER):
            return _top_level_error(errors.ClusterAuthorizationFailedError, {"responses": []})
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
        if not self._authorize_cluster(Op.DESCRIBE):
            return _top_level_error(errors.ClusterAuthorizationFailedError, {"topics": []})
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

    # --- group membership (Kafka's GroupCoordinator: group_coordinator.py, its wire side group_apis.py) -------

    def _register_group_handlers(self, coordinator: GroupCoordinator) -> None:
        """Serve the membership APIs with `coordinator` (its callbacks plugged into its manager)."""
        coordinator.startup()
        self.group_coordinator = coordinator
        self.group_apis = GroupApis(coordinator)
        self._handlers.update(
            {
                ApiKey.SYNC_GROUP: self.handle_sync_group_request,
                ApiKey.HEARTBEAT: self.handle_heartbeat_request,
                ApiKey.LEAVE_GROUP: self.handle_leave_group_request,
                ApiKey.LIST_GROUPS: self.handle_list_groups_request,
                ApiKey.DESCRIBE_GROUPS: self.handle_describe_groups_request,
                ApiKey.DELETE_GROUPS: self.handle_delete_groups_request,
            }
        )
        # JoinGroup needs the connection's address (the member's client host)
        self._context_handlers[ApiKey.JOIN_GROUP] = self.handle_join_group_request
        self.served = frozenset(self._handlers) | frozenset(self._context_handlers)

    # Read on the group for the membership APIs, Describe to describe or list, Delete to delete
    # (request_authorization.py: GROUP_AUTHORIZATION_FAILED as Kafka 2.8's handlers answer)

    async def handle_join_group_request(self, header: RequestHeader, body: Body, context: RequestContext) -> Response:
        refused = request_authorization.group_membership_refusal("join", body, self._allowed())
        if refused is not None:
            return refused
        client_host = f"/{context.client_host}"  # Kafka prints the InetAddress: "/127.0.0.1"
        return await self.group_apis.join_group(body, header.api_version, header.client_id, client_host)

    async def handle_sync_group_request(self, header: RequestHeader, body: Body) -> Response:
        refused = request_authorization.group_membership_refusal("sync", body, self._allowed())
        return refused if refused is not None else await self.group_apis.sync_group(body, header.api_version)

    async def handle_heartbeat_request(self, header: RequestHeader, body: Body) -> Response:
        refused = request_authorization.group_membership_refusal("heartbeat", body, self._allowed())
        return refused if refused is not None else self.group_apis.heartbeat(body)

    async def handle_leave_group_request(self, header: RequestHeader, body: Body) -> Response:
        refused = request_authorization.group_membership_refusal("leave", body, self._allowed())
        return refused if refused is not None else self.group_apis.leave_group(body, header.api_version)

    async def handle_list_groups_request(self, header: RequestHeader, body: Body) -> Response:
        return request_authorization.filter_list_groups(self.group_apis.list_groups(body), self._allowed())

    async def handle_describe_groups_request(self, header: RequestHeader, body: Body) -> Response:
        split = request_authorization.split_describe_groups(body, self._allowed())
        response = split.merge(
            self.group_apis.describe_groups(split.body) if split.body is not None else dict(split.empty)
        )
        if body.get("include_authorized_operations"):  # v3+ (KIP-430)
            for group in response["groups"]:
                if group["error_code"] == errors.NONE:
                    group["authorized_operations"] = self.auth.authorized_operations(
                        self._context(), Resource.GROUP, group["group_id"]
                    )
        return response

    async def handle_delete_groups_request(self, header: RequestHeader, body: Body) -> Response:
        split = request_authorization.split_delete_groups(body, self._allowed())
        return await self._serve(split, self.group_apis.delete_groups)


def _top_level_error(error: type[BrokerError], rest: dict[str, Any]) -> Response:
    """A response failed as a whole; the message is Kafka's text for the code (`new ApiError(error)`)."""
    return {
        "throttle_time_ms": 0,
        "error_code": error.code,
        "error_message": errors.KAFKA_MESSAGES.get(error.code, _ERROR_TEXTS.get(error.code)),
        **rest,
    }


_ERROR_TEXTS = {
    errors.NotControllerError.code: "This is not the correct controller for this cluster.",
    errors.ClusterAuthorizationFailedError.code: "Cluster authorization failed.",
}


def _cluster_authorization_failed() -> errors.ClusterAuthorizationFailedError:
    return errors.ClusterAuthorizationFailedError("Cluster authorization failed.")
