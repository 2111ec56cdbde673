"""The broker's request handlers (Kafka's `KafkaApis`): one handler per API key, in one table.

A handler turns the decoded wire dict into a typed request (requests.py), asks the part of the broker
that knows (the replica manager, the metadata cache, this broker's controller component, ZooKeeper),
and turns the typed result back into a response body (responses.py). Adding an API is a schema
(cluster/protocol/schemas.py), a typed request, a handler in `KafkaApis._handlers` and its response.
ApiVersions advertises exactly the table's keys.

Threads: handlers run on the broker's event loop. Those that block (ZooKeeper reads, calls into the
controller's event queue, UpdateMetadata of a whole cluster) run in the loop's executor, as Kafka's
request handler threads would; LeaderAndIsr and StopReplica stay on the loop, which owns partitions.

The controller: where a request needs it (ElectLeaders served by the active controller, a controlled
shutdown asked of it) the handler uses `LocalController`, this broker's controller component as the
server wires it in; the broker never imports the controller.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Protocol

from kafkaops.cluster.broker import responses
from kafkaops.cluster.broker.metadata_cache import MetadataCache
from kafkaops.cluster.broker.network_client import broker_endpoint, send_request
from kafkaops.cluster.broker.producer_id_manager import ProducerIdManager
from kafkaops.cluster.broker.replica_manager import ReplicaManager
from kafkaops.cluster.broker.requests import (
    ControlledShutdownRequest,
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
from kafkaops.cluster.broker.responses import ListOffsetsPartitionResult, PartitionErrors
from kafkaops.cluster.common import errors
from kafkaops.cluster.common.errors import BrokerError, KafkaOpsError
from kafkaops.cluster.protocol.messages import Request, RequestHeader
from kafkaops.cluster.protocol.schemas import ApiKey, ElectionType
from kafkaops.cluster.zk.client import KafkaZkClient
from kafkaops.cluster.zk.values import TopicPartition

Body = Mapping[str, Any]
Response = dict[str, Any]
Handler = Callable[[RequestHeader, Body], Awaitable[Response | None]]


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
    ) -> None:
        self.broker_id = broker_id
        self.cluster_id = cluster_id
        self.zk = zk
        self.replica_manager = replica_manager
        self.metadata_cache = metadata_cache
        self.controller = controller
        self.broker_epoch = broker_epoch
        self.producer_ids = ProducerIdManager(broker_id, zk)
        self._handlers: dict[ApiKey, Handler] = {
            ApiKey.PRODUCE: self.handle_produce_request,
            ApiKey.FETCH: self.handle_fetch_request,
            ApiKey.LIST_OFFSETS: self.handle_list_offsets_request,
            ApiKey.API_VERSIONS: self.handle_api_versions_request,
            ApiKey.METADATA: self.handle_topic_metadata_request,
            ApiKey.INIT_PRODUCER_ID: self.handle_init_producer_id_request,
            ApiKey.OFFSET_FOR_LEADER_EPOCH: self.handle_offset_for_leader_epoch_request,
            # Advertised only so that librdkafka enables lz4 (kafka-protocol.md §1.2); there are no groups.
            ApiKey.FIND_COORDINATOR: self.handle_find_coordinator_request,
            ApiKey.ELECT_LEADERS: self.handle_elect_leaders_request,
            ApiKey.LEADER_AND_ISR: self.handle_leader_and_isr_request,
            ApiKey.STOP_REPLICA: self.handle_stop_replica_request,
            ApiKey.UPDATE_METADATA: self.handle_update_metadata_request,
            ApiKey.CONTROLLED_SHUTDOWN: self.handle_controlled_shutdown_request,
        }
        self.served = frozenset(self._handlers)
        """The APIs this broker serves; the network layer closes a connection asking for another."""

    async def handle(self, request: Request) -> Response | None:
        """The response body to `request` (an API in `served`), or None when it gets no response."""
        return await self._handlers[request.header.api_key](request.header, request.body)

    # --- data ----------------------------------------------------------------------------------------------

    async def handle_produce_request(self, header: RequestHeader, body: Body) -> Response | None:
        request = ProduceRequest.from_wire(body, header.api_version)
        results = await self.replica_manager.append_records(request)
        return None if request.acks == 0 else responses.produce_response(results)

    async def handle_fetch_request(self, header: RequestHeader, body: Body) -> Response:
        return responses.fetch_response(await self.replica_manager.fetch_messages(FetchRequest.from_wire(body)))

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
            brokers, ((name, cache.partitions(name)) for name in names), self.cluster_id, cache.controller_id
        )

    async def handle_find_coordinator_request(self, header: RequestHeader, body: Body) -> Response:
        return responses.find_coordinator_response(
            errors.CoordinatorNotAvailableError.code, "This broker has no group or transaction coordinator"
        )

    # --- controller -> broker ------------------------------------------------------------------------------

    def _stale_broker_epoch(self, epoch: int) -> bool:
        """A request sent to this broker's previous registration (-1: a version without the field)."""
        return epoch != -1 and epoch < self.broker_epoch()

    async def handle_leader_and_isr_request(self, header: RequestHeader, body: Body) -> Response:
        request = LeaderAndIsrRequest.from_wire(body)
        if self._stale_broker_epoch(request.broker_epoch):
            result = PartitionErrors(errors.StaleBrokerEpochError.code)
        else:
            result = self.replica_manager.become_leader_or_follower(header.correlation_id, request)
        return responses.partition_errors_response(result)

    async def handle_stop_replica_request(self, header: RequestHeader, body: Body) -> Response:
        request = StopReplicaRequest.from_wire(body)
        if self._stale_broker_epoch(request.broker_epoch):
            result = PartitionErrors(errors.StaleBrokerEpochError.code)
        else:
            result = self.replica_manager.stop_replicas(header.correlation_id, request)
        return responses.partition_errors_response(result)

    async def handle_update_metadata_request(self, header: RequestHeader, body: Body) -> Response:
        return await asyncio.get_running_loop().run_in_executor(
            None, self._update_metadata, header.correlation_id, body
        )

    def _update_metadata(self, correlation_id: int, body: Body) -> Response:
        # typed here, on the executor thread: an UpdateMetadata of a whole cluster must not hold up the loop
        request = UpdateMetadataRequest.from_wire(body)
        if self._stale_broker_epoch(request.broker_epoch):
            return responses.update_metadata_response(errors.StaleBrokerEpochError.code)
        return responses.update_metadata_response(
            self.replica_manager.maybe_update_metadata_cache(correlation_id, request)
        )

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
