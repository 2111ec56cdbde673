"""A kafkaops broker process (Kafka's `KafkaServer`, ZooKeeper mode): builds the broker and its controller
candidate, and runs them.

Start-up: log dirs, ZooKeeper session, persistent paths and `/cluster/id`, the replica manager, the
listener (an asyncio server on its own thread), dynamic configs, the ephemeral `/brokers/ids/<id>`
registration (its czxid is the broker epoch), then the controller component, which competes for
`/controller`. The request handlers (KafkaApis) reach that component through the broker's narrow
`LocalController` interface: the broker never imports the controller, the server wires them.

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
import threading
import time
from collections.abc import Callable, Coroutine
from concurrent.futures import Executor, ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from kazoo.protocol.states import KazooState

from kafkaops.cluster import protocol
from kafkaops.cluster.broker.authorizer import create_authorizer
from kafkaops.cluster.broker.client_quota_manager import QuotaManagers
from kafkaops.cluster.broker.config import BrokerConfig
from kafkaops.cluster.broker.credential_provider import CredentialProvider
from kafkaops.cluster.broker.dynamic_broker_config import DynamicBrokerConfig
from kafkaops.cluster.broker.dynamic_config_manager import DynamicConfigManager
from kafkaops.cluster.broker.kafka_apis import KafkaApis
from kafkaops.cluster.broker.metadata_cache import MetadataCache
from kafkaops.cluster.broker.network_client import broker_endpoint, inter_broker_channel, send_request
from kafkaops.cluster.broker.replica_manager import ReplicaManager
from kafkaops.cluster.broker.sasl_config import check_sasl_listeners
from kafkaops.cluster.broker.socket_server import SocketServer
from kafkaops.cluster.broker.zk_admin_manager import ZkAdminManager
from kafkaops.cluster.common.compiled import STALE_BUILD
from kafkaops.cluster.common.errors import BrokerIdTakenError, KafkaOpsError
from kafkaops.cluster.controller.controller import ControllerSettings, KafkaController
from kafkaops.cluster.log import CleanerConfig, LogConfig, LogManager
from kafkaops.cluster.protocol.schemas import ApiKey
from kafkaops.cluster.state_change_log import StateChangeLogFile
from kafkaops.cluster.zk import znodes
from kafkaops.cluster.zk.client import KafkaZkClient
from kafkaops.cluster.zk.values import BrokerRegistration, EndPoint, TopicPartition, new_kafka_uuid

# The broker's logger: server.out has always named these lines "kafkaops.broker".
log = logging.getLogger("kafkaops.broker")

T = TypeVar("T")

EXECUTOR_DRAIN_S = 10.0
"""How long a shutdown waits for the jobs running in the loop's executor (see `end_loop_work`)."""


class KafkaServer:
    def __init__(
        self,
        config: BrokerConfig,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.config = config
        self.inter_broker = inter_broker_channel(config)
        """The inter-broker listener and its client channel: the controller, the fetchers and the broker's
        own calls to the controller connect with it."""
        self.broker_id = config.broker_id
        self.clock = clock
        self.log_dirs = [Path(d) for d in config.effective_log_dirs]
        self.logs_dir = self.log_dirs[0].parent / "logs"
        self.cluster_id: str | None = None
        self.broker_epoch = -1
        self.endpoints: tuple[EndPoint, ...] = ()
        self._loop = asyncio.new_event_loop()
        # the loop's executor, as asyncio would make it, but ours to drain at shutdown (end_loop_work)
        self._executor = ThreadPoolExecutor(thread_name_prefix="asyncio")
        self._loop.set_default_executor(self._executor)
        self._loop_thread = threading.Thread(
            target=self._loop.run_forever, name=f"broker-{self.broker_id}-network", daemon=True
        )
        self._listening = False
        self._controller_started = False
        self._stopped = threading.Event()
        self.zk: KafkaZkClient
        self.state_change_log: StateChangeLogFile
        self.metadata_cache = MetadataCache()
        self.replica_manager: ReplicaManager
        self.log_manager: LogManager
        self.controller: KafkaController
        self.apis: KafkaApis
        self.socket_server: SocketServer

    # --- lifecycle -------------------------------------------------------------------------------

    def startup(self) -> None:
        check_sasl_listeners(self.config)
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
            on_dir_offline=self._log_dir_offline,
            cleaner_config=cleaner_config(self.config),
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
            channel=self.inter_broker.channel,
            is_shutting_down=self._stopped.is_set,
        )
        self.controller = self._controller_candidate()
        self.dynamic_config = DynamicBrokerConfig(self.config)
        self.dynamic_config.add_reconfigurable(self._reconfigure)
        self.admin_manager = ZkAdminManager(
            self.broker_id,
            self.zk,
            self.metadata_cache,
            self.dynamic_config,
            lambda: self.controller.is_active,
            default_num_partitions=self.config.num_partitions,
            default_replication_factor=self.config.default_replication_factor,
            delete_topic_enable=self.config.delete_topic_enable,
        )
        self.authorizer = create_authorizer(self.config, self.zk, self._stopped.is_set)
        self.apis = KafkaApis(
            self.broker_id,
            self.cluster_id,
            self.zk,
            self.replica_manager,
            self.metadata_cache,
            self.controller,
            lambda: self.broker_epoch,
            self.admin_manager,
            QuotaManagers.create(
                self.replica_manager.now_ms,
                self.config.quota_window_num,
                self.config.quota_window_size_seconds,
                self.config.quota_producer_default,
                self.config.quota_consumer_default,
            ),
            inter_broker=self.inter_broker,
            authorizer=self.authorizer,
            metadata_wait_s=self.config.zookeeper_session_timeout_ms / 1000,
        )
        self.credential_provider = CredentialProvider()
        self.socket_server = SocketServer(self.config, self.apis, self.credential_provider)
        self._loop_thread.start()
        self.endpoints = self._run(self.socket_server.startup())
        self._listening = True
        self._loop.call_soon_threadsafe(self.replica_manager.start_background_tasks)
        DynamicConfigManager(
            self.broker_id,
            self.zk,
            self.replica_manager,
            self._loop,
            self._stopped.is_set,
            self.dynamic_config,
            self.apis.quotas,
            self.credential_provider,
        ).startup()
        self.broker_epoch = self._register_waiting_for_stale_session()
        # Requests are processed only from here on (Kafka binds early but starts its request processors
        # after registering): a broker still waiting out its predecessor's session must not tell clients
        # the cluster has no brokers.
        self._loop.call_soon_threadsafe(self.socket_server.start_processing_requests)
        self.zk.kazoo.add_listener(self._session_state_changed)
        self.controller.startup()
        self._controller_started = True
        log.info("[KafkaServer id=%s] started (%s)", self.broker_id, ", ".join(map(str, self.endpoints)))
        stale = protocol.PURE_PYTHON_REASON == STALE_BUILD
        log.log(logging.WARNING if stale else logging.INFO, "Wire codec: %s", protocol.codec_description())

    def _controller_candidate(self) -> KafkaController:
        """This broker's controller component; it competes for `/controller` once started."""
        config = self.config
        return KafkaController(
            ControllerSettings(
                broker_id=self.broker_id,
                delete_topic_enable=config.delete_topic_enable,
                unclean_leader_election_enable=config.unclean_leader_election_enable,
                auto_leader_rebalance_enable=config.auto_leader_rebalance_enable,
                leader_imbalance_per_broker_percentage=config.leader_imbalance_per_broker_percentage,
                leader_imbalance_check_interval_s=config.leader_imbalance_check_interval_seconds,
                inter_broker_listener_name=self.inter_broker.listener_name,
                inter_broker_channel=self.inter_broker.channel,
            ),
            self.zk,
            self.state_change_log,
            self.clock,
        )

    def _reconfigure(self, dynamic: DynamicBrokerConfig) -> None:
        """New dynamic broker configs (on the thread that read them): the replica manager and the logs take
        theirs on the loop, the controller its own through its event queue."""
        overrides = dynamic.dynamic_overrides()
        try:
            log_defaults: LogConfig | None = LogConfig.from_mapping(dynamic.log_defaults())
        except KafkaOpsError as error:
            log.error("Ignoring invalid dynamic log configs: %s", error)
            log_defaults = None
        self._loop.call_soon_threadsafe(self.replica_manager.apply_broker_config, overrides, log_defaults)
        unclean = dynamic.current().get("unclean.leader.election.enable", "false").strip().lower() == "true"
        self.controller.set_unclean_leader_election_enable(unclean)

    def _log_dir_offline(self, directory: Path) -> None:
        """The log manager lost a dir (on whatever thread found it): the replica manager acts on the loop."""
        self._loop.call_soon_threadsafe(self.replica_manager.handle_log_dir_failure, directory)

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
            # Kafka's registration maps the advertised listeners only
            listener_security_protocol_map={
                e.listener: self.config.security_protocol(e.listener) for e in self.endpoints
            },
        )

    def shutdown(self, controlled: bool = True) -> None:
        if self._stopped.is_set():
            return
        self._stopped.set()
        if controlled and self.config.controlled_shutdown_enable:
            self._controlled_shutdown()
        if self._listening:  # Kafka's order: no more requests, then the rest
            with contextlib.suppress(Exception):
                self._run(self.socket_server.stop_processing_requests())
        if self._controller_started:
            with contextlib.suppress(Exception):
                self.controller.shutdown()
        if self._listening:
            self._loop.call_soon_threadsafe(self.admin_manager.shutdown)
            self._loop.call_soon_threadsafe(self.apis.group_metadata_manager.shutdown)
        if self._listening:
            with contextlib.suppress(Exception):
                self._run(self.replica_manager.shutdown())
            self._run(end_loop_work(self._executor, EXECUTOR_DRAIN_S))  # the connections ended above
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._loop_thread.join(10)
        with contextlib.suppress(Exception):
            self.log_manager.shutdown()
        with contextlib.suppress(Exception):
            self.zk.close()
        self.state_change_log.close()
        log.info("[KafkaServer id=%s] shut down", self.broker_id)

    def _run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(30)

    # --- ZooKeeper session -------------------------------------------------------------------------

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

    # --- controlled shutdown -----------------------------------------------------------------------

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
        """The partitions this broker still leads, as the controller answered; None without a controller."""
        controller_id = self.zk.get_controller_id()
        if controller_id is None:
            return None
        if controller_id == self.broker_id and self.controller.is_active:
            return self.controller.controlled_shutdown(self.broker_id, self.broker_epoch)
        endpoint = broker_endpoint(self.zk, controller_id, self.inter_broker)
        if endpoint is None:
            return None
        body = send_request(
            endpoint.host,
            endpoint.port,
            ApiKey.CONTROLLED_SHUTDOWN,
            2,
            {"broker_id": self.broker_id, "broker_epoch": self.broker_epoch},
            f"broker-{self.broker_id}",
            channel=self.inter_broker.channel,
        )
        if body["error_code"] != 0:
            raise KafkaOpsError(f"ControlledShutdown answered error {body['error_code']}")
        return {TopicPartition(p["topic_name"], p["partition_index"]) for p in body["remaining_partitions"]}


async def end_loop_work(executor: Executor, drain_s: float) -> None:
    """Cancel every task on the running loop but the caller's and wait for them, then for the jobs they
    handed to `executor` (the loop's: a periodic flush or checkpoint, a ZooKeeper write), which cancelling
    a task does not stop: the logs close after this, and the process exits without joining the executor's
    threads (`__main__.exit_now`). A job still running after `drain_s` is left behind (asyncio's own
    `shutdown_default_executor` would wait for it however long it takes). The executor takes no more jobs."""
    tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    loop = asyncio.get_running_loop()
    drained: asyncio.Future[None] = loop.create_future()

    def drained_now() -> None:
        if not drained.done():  # not given up on already
            drained.set_result(None)

    def drain() -> None:
        executor.shutdown(wait=True)
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nobody is waiting
            loop.call_soon_threadsafe(drained_now)

    threading.Thread(target=drain, name="executor-drain", daemon=True).start()
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(drained, drain_s)


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
        delete_retention_ms=config.log_cleaner_delete_retention_ms,
        min_compaction_lag_ms=config.log_cleaner_min_compaction_lag_ms,
        max_compaction_lag_ms=config.log_cleaner_max_compaction_lag_ms,
        min_cleanable_dirty_ratio=config.log_cleaner_min_cleanable_ratio,
    )


def cleaner_config(config: BrokerConfig) -> CleanerConfig:
    """The broker's `log.cleaner.*` settings (Kafka's `LogCleaner.cleanerConfig`)."""
    return CleanerConfig(
        num_threads=config.log_cleaner_threads,
        dedupe_buffer_size=config.log_cleaner_dedupe_buffer_size,
        dedupe_buffer_load_factor=config.log_cleaner_io_buffer_load_factor,
        io_buffer_size=config.log_cleaner_io_buffer_size,
        max_message_size=config.message_max_bytes,
        max_io_bytes_per_second=config.log_cleaner_io_max_bytes_per_second,
        backoff_ms=config.log_cleaner_backoff_ms,
        enable_cleaner=config.log_cleaner_enable,
    )
