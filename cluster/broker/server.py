"""A kafkaops broker process (Kafka's `KafkaServer`, ZooKeeper mode).

Start-up: log dirs, ZooKeeper session, persistent paths and `/cluster/id`, the listener (an asyncio
server on its own thread), the ephemeral `/brokers/ids/<id>` registration (its czxid is the broker
epoch), then the controller component, which competes for `/controller`.

Shutdown: with `controlled.shutdown.enable` the broker first asks the controller to move its
leaderships away (ControlledShutdown, retried `controlled.shutdown.max.retries` times), then stops
its fetchers, checkpoints and closes its logs (a clean shutdown: no recovery at the next start), and
closes its session, which removes its registration.

Threads: the asyncio loop serves connections, one request at a time per connection (Kafka answers
in order), and runs the replica manager and the fetchers; work that blocks (controller calls,
ZooKeeper writes, fsyncs) runs in the loop's executor.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kazoo.protocol.states import KazooState

from kafkaops.cluster.broker.config import BrokerConfig
from kafkaops.cluster.broker.metadata_cache import MetadataCache
from kafkaops.cluster.broker.replica_manager import ReplicaManager
from kafkaops.cluster.controller.controller import ControllerSettings, KafkaController
from kafkaops.cluster.errors import BrokerIdTakenError, KafkaOpsError
from kafkaops.cluster.log import LogConfig, LogManager
from kafkaops.cluster.protocol import errors
from kafkaops.cluster.protocol.errors import (
    BrokerError,
    CoordinatorNotAvailableError,
    KafkaProtocolError,
    NotControllerError,
    StaleBrokerEpochError,
    StaleControllerEpochError,
    UnknownServerError,
)
from kafkaops.cluster.protocol.framing import frame, read_frame, read_frame_blocking, write_frame
from kafkaops.cluster.protocol.messages import (
    Request,
    RequestHeader,
    api_versions_refusal,
    decode_request,
    decode_response,
    encode_request,
    encode_response,
    is_unsupported_api_versions,
)
from kafkaops.cluster.protocol.schemas import SUPPORTED_VERSIONS, ApiKey
from kafkaops.cluster.state_change_log import StateChangeLogFile
from kafkaops.cluster.zk import znodes
from kafkaops.cluster.zk.client import KafkaZkClient
from kafkaops.cluster.zk.values import BrokerRegistration, EndPoint, TopicPartition, new_kafka_uuid

log = logging.getLogger("kafkaops.broker")

SERVED_APIS = (
    ApiKey.PRODUCE,
    ApiKey.FETCH,
    ApiKey.LIST_OFFSETS,
    ApiKey.API_VERSIONS,
    ApiKey.METADATA,
    ApiKey.INIT_PRODUCER_ID,
    ApiKey.OFFSET_FOR_LEADER_EPOCH,
    # Advertised only so that librdkafka enables lz4 (kafka-protocol.md §1.2); there are no groups.
    ApiKey.FIND_COORDINATOR,
    ApiKey.ELECT_LEADERS,
    ApiKey.LEADER_AND_ISR,
    ApiKey.STOP_REPLICA,
    ApiKey.UPDATE_METADATA,
    ApiKey.CONTROLLED_SHUTDOWN,
)


class KafkaServer:
    def __init__(self, config: BrokerConfig, clock: Callable[[], float] = time.time) -> None:
        self.config = config
        self.broker_id = config.broker_id
        self.clock = clock
        self.log_dirs = [Path(d) for d in config.effective_log_dirs]
        self.logs_dir = self.log_dirs[0].parent / "logs"
        self.cluster_id: str | None = None
        self.broker_epoch = -1
        self.endpoints: tuple[EndPoint, ...] = ()
        self._loop = asyncio.new_event_loop()
        self._loop_thread = threading.Thread(
            target=self._loop.run_forever, name=f"broker-{self.broker_id}-network", daemon=True
        )
        self._server: asyncio.AbstractServer | None = None
        self._stopped = threading.Event()
        self.zk: KafkaZkClient
        self.state_change_log: StateChangeLogFile
        self.metadata_cache = MetadataCache(self.broker_id)
        self.replica_manager: ReplicaManager
        self.log_manager: LogManager
        self.controller: KafkaController
        self._producer_ids: list[int] | None = None
        self._registered = asyncio.Event()
        self._producer_id_lock = asyncio.Lock()

    # --- lifecycle -------------------------------------------------------------------------------

    def startup(self) -> None:
        for directory in self.log_dirs:
            directory.mkdir(parents=True, exist_ok=True)
        self.state_change_log = StateChangeLogFile(self.logs_dir)
        self.zk = KafkaZkClient(
            self.config.zookeeper_connect,
            session_timeout_ms=self.config.zookeeper_session_timeout_ms,
            connection_timeout_ms=self.config.effective_zookeeper_connection_timeout_ms,
            credentials=self.config.zookeeper_credentials,
            set_acl=self.config.zookeeper_set_acl,
        )
        self.zk.ensure_paths(znodes.PERSISTENT_PATHS)
        self.cluster_id = self.zk.get_or_create_cluster_id(new_kafka_uuid())
        self.log_manager = LogManager(
            self.log_dirs,
            default_config=default_log_config(self.config),
            clock=self.clock,
            on_dir_offline=lambda directory: self._loop.call_soon_threadsafe(
                self.replica_manager.handle_log_dir_failure, directory
            ),
        )
        self.log_manager.startup()
        self.replica_manager = ReplicaManager(
            self.broker_id,
            self.config,
            self.state_change_log,
            self.log_manager,
            self.zk,
            self.metadata_cache,
            self.clock,
        )
        self._loop_thread.start()
        self.endpoints = self._run(self._start_listener())
        self._loop.call_soon_threadsafe(self.replica_manager.start_background_tasks)
        self._watch_config_changes()
        self.broker_epoch = self._register_waiting_for_stale_session()
        # Requests are processed only from here on (Kafka binds early but starts its request processors
        # after registering): a broker still waiting out its predecessor's session must not tell clients
        # the cluster has no brokers.
        self._loop.call_soon_threadsafe(self._registered.set)
        self.zk.kazoo.add_listener(self._session_state_changed)
        self.controller = KafkaController(
            ControllerSettings(
                broker_id=self.broker_id,
                delete_topic_enable=self.config.delete_topic_enable,
                unclean_leader_election_enable=self.config.unclean_leader_election_enable,
                auto_leader_rebalance_enable=self.config.auto_leader_rebalance_enable,
                leader_imbalance_per_broker_percentage=self.config.leader_imbalance_per_broker_percentage,
                leader_imbalance_check_interval_s=self.config.leader_imbalance_check_interval_seconds,
                zookeeper_connect=self.config.zookeeper_connect,
            ),
            self.zk,
            self.state_change_log,
            self.clock,
        )
        self.controller.startup()
        log.info("[KafkaServer id=%s] started (%s)", self.broker_id, ", ".join(map(str, self.endpoints)))

    def _register_waiting_for_stale_session(self) -> int:
        """Register; if `/brokers/ids/<id>` is held by another session, wait one session timeout for it
        to expire (a hard-killed predecessor), then refuse: a live broker has this id."""
        deadline = time.monotonic() + self.config.zookeeper_session_timeout_ms / 1000 + 2
        while True:
            try:
                return self.zk.register_broker(self.registration())
            except BrokerIdTakenError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.25)

    def registration(self) -> BrokerRegistration:
        return BrokerRegistration(
            broker_id=self.broker_id,
            endpoints=self.endpoints,
            timestamp_ms=int(self.clock() * 1000),
            rack=self.config.broker_rack,
            listener_security_protocol_map={e.listener: "PLAINTEXT" for e in self.endpoints},
        )

    def shutdown(self, controlled: bool = True) -> None:
        if self._stopped.is_set():
            return
        self._stopped.set()
        if controlled and self.config.controlled_shutdown_enable:
            self._controlled_shutdown()
        with contextlib.suppress(Exception):
            self.controller.shutdown()
        if self._server is not None:
            with contextlib.suppress(Exception):
                self._run(self.replica_manager.shutdown())
            self._run(self._stop_listener())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._loop_thread.join(10)
        with contextlib.suppress(Exception):
            self.log_manager.shutdown()
        with contextlib.suppress(Exception):
            self.zk.close()
        self.state_change_log.close()
        log.info("[KafkaServer id=%s] shut down", self.broker_id)

    def _session_state_changed(self, state: str) -> None:
        if state == KazooState.CONNECTED and not self._stopped.is_set():
            # after an expired session kazoo reconnects with a new one: our ephemeral node is gone
            threading.Thread(target=self._reregister, daemon=True).start()

    def _reregister(self) -> None:
        """After a new session: register again. The old session's node may linger until ZooKeeper has
        expired it (a broker frozen past its timeout reconnects first), so retry until it is ours."""
        deadline = time.monotonic() + 2 * self.config.zookeeper_session_timeout_ms / 1000 + 5
        while not self._stopped.is_set() and time.monotonic() < deadline:
            try:
                self.broker_epoch = self.zk.register_broker(self.registration())
                log.info("Re-registered broker %s with epoch %s", self.broker_id, self.broker_epoch)
                return
            except BrokerIdTakenError:
                time.sleep(0.25)  # the expired session's ephemeral node is still there
            except Exception as error:  # noqa: BLE001 - ZooKeeper unsettled: try again shortly
                log.warning("Re-registration of broker %s failed: %s", self.broker_id, error)
                time.sleep(0.5)

    def _controlled_shutdown(self) -> None:
        """Kafka's `controlledShutdown`: ask the controller until it reports nothing left to move."""
        retries = self.config.controlled_shutdown_max_retries
        backoff_s = self.config.controlled_shutdown_retry_backoff_ms / 1000
        for attempt in range(1, retries + 1):
            try:
                remaining = self._request_controlled_shutdown()
            except (KafkaOpsError, OSError) as error:
                log.warning("Controlled shutdown attempt %s failed: %s", attempt, error)
                remaining = None
            if remaining is not None and not remaining:
                log.info("Controlled shutdown succeeded")
                return
            if remaining:
                log.info("Remaining partitions to move: %s", ",".join(map(str, sorted(remaining, key=str))))
            time.sleep(backoff_s)
        log.warning("Proceeding to do an unclean shutdown as all the controlled shutdown attempts failed")

    def _request_controlled_shutdown(self) -> set[TopicPartition] | None:
        controller_id = self.zk.get_controller_id()
        if controller_id is None:
            return None
        if controller_id == self.broker_id and self.controller.is_active:
            return self.controller.controlled_shutdown(self.broker_id, self.broker_epoch)
        entry = self.zk.get(znodes.BrokerIdZNode.path(controller_id))
        if entry is None:
            return None
        endpoint = znodes.BrokerIdZNode.decode(controller_id, entry[0]).endpoints[0]
        body = send_request(
            endpoint.host,
            endpoint.port,
            ApiKey.CONTROLLED_SHUTDOWN,
            2,
            {"broker_id": self.broker_id, "broker_epoch": self.broker_epoch},
            f"broker-{self.broker_id}",
        )
        if body["error_code"] != 0:
            raise KafkaOpsError(f"ControlledShutdown answered error {body['error_code']}")
        return {TopicPartition(p["topic_name"], p["partition_index"]) for p in body["remaining_partitions"]}

    # --- network ---------------------------------------------------------------------------------

    def _run(self, coroutine: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(30)

    async def _start_listener(self) -> tuple[EndPoint, ...]:
        listener = self.config.listeners[0]
        self._server = await asyncio.start_server(
            self._serve_connection, host=listener.host or "127.0.0.1", port=listener.port, limit=1 << 20
        )
        port = self._server.sockets[0].getsockname()[1]
        advertised = (self.config.advertised_listeners or self.config.listeners)[0]
        return (EndPoint(listener.listener, advertised.host or listener.host or "127.0.0.1", advertised.port or port),)

    async def _stop_listener(self) -> None:
        """Stop accepting, then end every open connection's task so none outlives the loop."""
        if self._server is not None:
            self._server.close()
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _serve_connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await self._registered.wait()
            while True:
                payload = await read_frame(reader, self.config.socket_request_max_bytes)
                if payload is None:
                    break
                request = decode_request(payload)  # a malformed request closes the connection
                header = request.header
                if is_unsupported_api_versions(header):
                    body, version = api_versions_refusal(), 0
                else:
                    if header.api_key not in SERVED_APIS:
                        break  # Kafka closes the connection on an API it does not serve
                    body, version = await self._handle(request), header.api_version
                if body is None:
                    continue  # a Produce with acks=0 gets no response
                write_frame(writer, encode_response(header.api_key, version, header.correlation_id, body))
                await writer.drain()
        except (KafkaProtocolError, ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass  # a bad peer, a closed peer, or our own shutdown: the connection just ends
        except Exception:  # noqa: BLE001 - one connection's failure must never take the broker down
            log.exception("Error serving a connection")
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _handle(self, request: Request) -> dict[str, Any] | None:
        key, body = request.header.api_key, request.body
        manager = self.replica_manager
        if key is ApiKey.PRODUCE:
            response = await manager.produce(body, request.header.api_version)
            return None if body["acks"] == 0 else response
        if key is ApiKey.FETCH:
            return await manager.fetch(body)
        if key is ApiKey.LIST_OFFSETS:
            return manager.list_offsets(body)
        if key is ApiKey.OFFSET_FOR_LEADER_EPOCH:
            return manager.offset_for_leader_epoch(body)
        if key is ApiKey.INIT_PRODUCER_ID:
            return await self._init_producer_id(body)
        if key is ApiKey.ELECT_LEADERS:
            return await asyncio.get_running_loop().run_in_executor(
                None, self._elect_leaders, body, request.header.api_version
            )
        if key is ApiKey.FIND_COORDINATOR:
            return {
                "throttle_time_ms": 0,
                "error_code": CoordinatorNotAvailableError.code,
                "error_message": "This broker has no group or transaction coordinator",
                "node_id": -1,
                "host": "",
                "port": -1,
            }
        if key is ApiKey.API_VERSIONS:
            return {
                "error_code": 0,
                "api_keys": [
                    {
                        "api_key": int(k),
                        "min_version": SUPPORTED_VERSIONS[k][0],
                        "max_version": SUPPORTED_VERSIONS[k][1],
                    }
                    for k in sorted(SERVED_APIS)
                ],
                "throttle_time_ms": 0,
            }
        if key is ApiKey.METADATA:
            topics = body["topics"]
            requested = (
                None
                if topics is None or (request.header.api_version == 0 and not topics)
                else [t["name"] for t in topics]
            )
            return self.metadata_cache.metadata_response(requested, self.cluster_id)
        loop = asyncio.get_running_loop()
        correlation_id = request.header.correlation_id
        # LeaderAndIsr and StopReplica run on the loop: they change partitions, which the loop owns.
        if key is ApiKey.LEADER_AND_ISR:
            if self._stale_broker_epoch(body):
                return {"error_code": StaleBrokerEpochError.code, "partition_errors": []}
            return manager.become_leader_or_follower(correlation_id, body)
        if key is ApiKey.STOP_REPLICA:
            if self._stale_broker_epoch(body):
                return {"error_code": StaleBrokerEpochError.code, "partition_errors": []}
            return manager.stop_replicas(correlation_id, body)
        if key is ApiKey.UPDATE_METADATA:
            if self._stale_broker_epoch(body):
                return {"error_code": StaleBrokerEpochError.code}
            return await loop.run_in_executor(None, self._update_metadata, correlation_id, body)
        if key is ApiKey.CONTROLLED_SHUTDOWN:
            return await loop.run_in_executor(None, self._handle_controlled_shutdown, body)
        raise KafkaProtocolError(f"unserved API {key}")

    async def _init_producer_id(self, body: dict[str, Any]) -> dict[str, Any]:
        """An id for an idempotent producer, unique across the cluster (kafka-protocol.md §9); there are
        no transactions, so a transactional id is refused."""
        if body["transactional_id"] is not None:
            return {"throttle_time_ms": 0, "error_code": CoordinatorNotAvailableError.code}
        async with self._producer_id_lock:
            if self._producer_ids is None or self._producer_ids[0] > self._producer_ids[1]:
                try:
                    block = await asyncio.get_running_loop().run_in_executor(
                        None, self.zk.allocate_producer_id_block, self.broker_id
                    )
                except Exception as error:  # noqa: BLE001 - ZooKeeper unavailable: the client retries
                    log.warning("Could not allocate a producer id block: %s", error)
                    return {"throttle_time_ms": 0, "error_code": CoordinatorNotAvailableError.code}
                self._producer_ids = [block.block_start, block.block_end]
            producer_id = self._producer_ids[0]
            self._producer_ids[0] += 1
        return {"throttle_time_ms": 0, "error_code": 0, "producer_id": producer_id, "producer_epoch": 0}

    def _elect_leaders(self, body: dict[str, Any], version: int) -> dict[str, Any]:
        """ElectLeaders: served by the controller (Kafka's `processReplicaLeaderElection`); any other broker
        forwards the request to it, so a tool may ask any broker."""
        election_type = ELECTION_TYPES.get(body["election_type"])
        requested = (
            None
            if body["topic_partitions"] is None
            else [TopicPartition(t["topic"], p) for t in body["topic_partitions"] for p in t["partitions"]]
        )
        if election_type is None:
            return _elect_leaders_response(requested or [], {}, errors.InvalidRequestError.code)
        timeout_s = max(body["timeout_ms"], 0) / 1000
        if self.controller.is_active:
            try:
                results = self.controller.elect_leaders(election_type, requested, timeout_s)
            except TimeoutError:
                return _elect_leaders_response(requested or [], {}, errors.RequestTimedOutError.code)
            return _elect_leaders_response(list(results), results, 0)
        controller_id = self.zk.get_controller_id()
        entry = self.zk.get(znodes.BrokerIdZNode.path(controller_id)) if controller_id is not None else None
        if controller_id == self.broker_id or entry is None:
            return _elect_leaders_response(requested or [], {}, NotControllerError.code)
        endpoint = znodes.BrokerIdZNode.decode(controller_id, entry[0]).endpoints[0]
        return send_request(
            endpoint.host, endpoint.port, ApiKey.ELECT_LEADERS, version, body, f"broker-{self.broker_id}", timeout_s + 5
        )

    def _watch_config_changes(self) -> None:
        """Topic config changes apply live: each `/config/changes/config_change_*` after start-up names an
        entity; topics' overrides are re-read and handed to the replica manager (on the loop)."""
        path = znodes.ConfigEntityChangeNotificationZNode.path()
        self.zk.ensure_paths([path])
        seen = set(self.zk.get_children(path) or [])
        own = str(self.broker_id)

        def changed(children: list[str]) -> bool:
            if self._stopped.is_set():
                return False
            for child in sorted(set(children) - seen):
                seen.add(child)
                entry = self.zk.get(f"{path}/{child}")
                if entry is None:
                    continue
                try:
                    entity = znodes.ConfigEntityChangeNotificationSequenceZNode.decode(entry[0])
                except KafkaOpsError as error:
                    log.error("Ignoring config change notification %s: %s", child, error)
                    continue
                entity_type, _, name = entity.partition("/")
                if entity_type == znodes.ConfigType.TOPIC:
                    overrides, _ = self.zk.get_entity_config(znodes.ConfigType.TOPIC, name)
                    self._loop.call_soon_threadsafe(self.replica_manager.apply_topic_config, name, overrides)
                elif entity_type == znodes.ConfigType.BROKER and name in (own, znodes.DEFAULT_ENTITY_NAME):
                    self._load_broker_config()
            return True

        self._load_broker_config()
        self.zk.kazoo.ChildrenWatch(path, changed)

    def _load_broker_config(self) -> None:
        """Dynamic broker configs: `/config/brokers/<default>` overridden by `/config/brokers/<id>`."""
        found = self.zk.get_entity_configs(znodes.ConfigType.BROKER, [znodes.DEFAULT_ENTITY_NAME, str(self.broker_id)])
        overrides = {**found.get(znodes.DEFAULT_ENTITY_NAME, {}), **found.get(str(self.broker_id), {})}
        self._loop.call_soon_threadsafe(self.replica_manager.apply_broker_config, overrides)

    def _stale_broker_epoch(self, body: dict[str, Any]) -> bool:
        epoch = body.get("broker_epoch", -1)
        return epoch != -1 and epoch < self.broker_epoch

    def _update_metadata(self, correlation_id: int, body: dict[str, Any]) -> dict[str, Any]:
        manager = self.replica_manager
        if not manager.accept_controller_epoch(
            body["controller_epoch"],
            lambda latest: manager.log.ignoring_update_metadata_stale_controller(
                correlation_id, body["controller_id"], body["controller_epoch"], latest
            ),
        ):
            return {"error_code": StaleControllerEpochError.code}
        deleted, _ = self.metadata_cache.update(body)
        for tp in deleted:
            self.state_change_log.write(
                self.replica_manager.log.deleted_from_metadata_cache(
                    tp, body["controller_id"], body["controller_epoch"], correlation_id
                )
            )
        return {"error_code": 0}

    def _handle_controlled_shutdown(self, body: dict[str, Any]) -> dict[str, Any]:
        if not self.controller.is_active:
            return {"error_code": NotControllerError.code, "remaining_partitions": []}
        try:
            remaining = self.controller.controlled_shutdown(body["broker_id"], body.get("broker_epoch", -1))
        except BrokerError as error:  # the controller answers with Kafka's error classes
            return {"error_code": error.code, "remaining_partitions": []}
        except KafkaOpsError:
            return {"error_code": UnknownServerError.code, "remaining_partitions": []}
        return {
            "error_code": 0,
            "remaining_partitions": [
                {"topic_name": tp.topic, "partition_index": tp.partition} for tp in sorted(remaining, key=str)
            ],
        }


ELECTION_TYPES = {0: "preferred", 1: "unclean"}
"""ElectLeaders' election_type (Kafka's `ElectionType`)."""


def _elect_leaders_response(
    partitions: list[TopicPartition], results: dict[TopicPartition, tuple[int, str | None]], top_level: int
) -> dict[str, Any]:
    """Per-partition results grouped by topic; a top-level error is repeated on every partition, as v0 has
    no top-level field."""
    by_topic: dict[str, list[dict[str, Any]]] = {}
    for tp in partitions:
        code, message = results.get(tp, (top_level, None))
        by_topic.setdefault(tp.topic, []).append(
            {"partition_id": tp.partition, "error_code": code, "error_message": message}
        )
    return {
        "throttle_time_ms": 0,
        "error_code": top_level,
        "replica_election_results": [{"topic": t, "partition_result": ps} for t, ps in by_topic.items()],
    }


def default_log_config(config: BrokerConfig) -> LogConfig:
    """The broker's `log.*` settings as every topic's defaults (Kafka's `LogConfig` from `KafkaConfig`)."""
    return LogConfig(
        segment_bytes=config.log_segment_bytes,
        segment_ms=config.effective_log_roll_ms,
        segment_index_bytes=config.log_index_size_max_bytes,
        retention_bytes=config.log_retention_bytes,
        retention_ms=config.effective_log_retention_ms,
        index_interval_bytes=config.log_index_interval_bytes,
        max_message_bytes=config.message_max_bytes,
        cleanup_policy=config.log_cleanup_policy,
    )


def send_request(
    host: str, port: int, api_key: ApiKey, version: int, body: dict[str, Any], client_id: str, timeout_s: float = 30.0
) -> dict[str, Any]:
    """One blocking request/response on a fresh connection (for rare calls such as ControlledShutdown)."""
    with socket.create_connection((host, port), timeout=timeout_s) as sock:
        sock.sendall(frame(encode_request(RequestHeader(api_key, version, 1, client_id), body)))
        _, response = decode_response(api_key, version, read_frame_blocking(sock))
        return response
