"""Configs that change while the broker runs (Kafka's `DynamicConfigManager` with its topic and broker
config handlers, ZooKeeper mode), and the client quotas of users and clients (Kafka's `UserConfigHandler`
and `ClientIdConfigHandler`).

Each `/config/changes/config_change_*` created after start-up names an entity: a topic's overrides are
re-read and handed to the replica manager (`apply_topic_config`); this broker's dynamic configs,
`/config/brokers/<default>` and `/config/brokers/<id>`, are re-read into its `DynamicBrokerConfig`, which
tells the parts that honour them (Kafka's reconfigurables: the replica manager's throttle rates and
min.insync.replicas default, the log defaults, the controller's unclean.leader.election.enable). A
user's, a client's or a <user, client-id>'s config is re-read and its quotas handed to the client quota
managers. All read once at start-up too.

Threads: the watch fires on kazoo's thread and reads ZooKeeper there; the replica manager is told on
the broker's event loop (`loop.call_soon_threadsafe`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from kafkaops.cluster.broker.client_quota_manager import QuotaManagers, parse_quota_config
from kafkaops.cluster.broker.credential_provider import CredentialProvider
from kafkaops.cluster.broker.dynamic_broker_config import DynamicBrokerConfig
from kafkaops.cluster.broker.replica_manager import ReplicaManager
from kafkaops.cluster.common.errors import KafkaOpsError
from kafkaops.cluster.zk import znodes
from kafkaops.cluster.zk.client import KafkaZkClient

# The broker's own logger: these lines have always been the broker's in server.out.
log = logging.getLogger("kafkaops.broker")


class DynamicConfigManager:
    def __init__(
        self,
        broker_id: int,
        zk: KafkaZkClient,
        replica_manager: ReplicaManager,
        loop: asyncio.AbstractEventLoop,
        stopped: Callable[[], bool],
        dynamic_config: DynamicBrokerConfig | None = None,
        quotas: QuotaManagers | None = None,
        credentials: CredentialProvider | None = None,
    ) -> None:
        self.broker_id = broker_id
        self.zk = zk
        self.replica_manager = replica_manager
        self.quotas = quotas
        self.credentials = credentials
        self.loop = loop
        self.stopped = stopped
        self.dynamic_config = dynamic_config

    def startup(self) -> None:
        """Apply this broker's dynamic configs, then watch for changes (notifications older than now are
        history: only new ones are processed)."""
        path = znodes.ConfigEntityChangeNotificationZNode.path()
        self.zk.ensure_paths([path])
        seen = set(self.zk.get_children(path) or [])

        def changed(children: list[str]) -> bool:
            if self.stopped():
                return False
            for child in sorted(set(children) - seen):
                seen.add(child)
                self._process_notification(f"{path}/{child}", child)
            return True

        self._load_broker_config()
        self._load_client_quotas()
        self.zk.kazoo.ChildrenWatch(path, changed)

    def _process_notification(self, path: str, child: str) -> None:
        entry = self.zk.get(path)
        if entry is None:
            return
        try:
            entity = znodes.ConfigEntityChangeNotificationSequenceZNode.decode(entry[0])
        except KafkaOpsError as error:
            log.error("Ignoring config change notification %s: %s", child, error)
            return
        entity_type, _, name = entity.partition("/")
        if entity_type == znodes.ConfigType.TOPIC:
            overrides, _ = self.zk.get_entity_config(znodes.ConfigType.TOPIC, name)
            self.loop.call_soon_threadsafe(self.replica_manager.apply_topic_config, name, overrides)
        elif entity_type == znodes.ConfigType.BROKER and name in (str(self.broker_id), znodes.DEFAULT_ENTITY_NAME):
            self._load_broker_config()
        elif entity_type in (znodes.ConfigType.USER, znodes.ConfigType.CLIENT):
            self._process_quota_change(entity_type, name)

    def _process_quota_change(self, entity_type: str, name: str) -> None:
        """Kafka's `UserConfigHandler` (`<user>` or `<user>/clients/<client-id>`) and `ClientIdConfigHandler`."""
        parts = name.split("/")
        if entity_type == znodes.ConfigType.CLIENT:
            user, client_id = None, name
        elif len(parts) == 1:
            user, client_id = name, None
        elif len(parts) == 3:
            user, client_id = parts[0], parts[2]
        else:
            log.error(
                "Ignoring config change notification of %s/%s: Invalid quota entity path: %s", entity_type, name, name
            )
            return
        config, _ = self.zk.get_entity_config(entity_type, name)
        self._apply_quota_config(user, client_id, config)
        if user is not None and client_id is None:
            self._update_credentials(user, config)

    def _update_credentials(self, sanitized_user: str, config: dict[str, str]) -> None:
        if self.credentials is not None and sanitized_user != znodes.DEFAULT_ENTITY_NAME:
            self.credentials.update_credentials(znodes.desanitize_entity_name(sanitized_user), config)

    def _load_client_quotas(self) -> None:
        """Every quota configured when the broker starts: clients, users, and each user's clients."""
        clients = self.zk.get_all_entities(znodes.ConfigType.CLIENT)
        for client_id, config in self.zk.get_entity_configs(znodes.ConfigType.CLIENT, clients).items():
            self._apply_quota_config(None, client_id, config)
        users = self.zk.get_all_entities(znodes.ConfigType.USER)
        for user, config in self.zk.get_entity_configs(znodes.ConfigType.USER, users).items():
            self._apply_quota_config(user, None, config)
            self._update_credentials(user, config)
            pairs = [znodes.user_client_entity_path(user, c) for c in self.zk.get_user_client_entities(user)]
            for path, pair_config in self.zk.get_entity_configs(znodes.ConfigType.USER, pairs).items():
                self._apply_quota_config(user, path.rsplit("/", 1)[1], pair_config)

    def _apply_quota_config(self, user: str | None, client_id: str | None, config: dict[str, str]) -> None:
        if self.quotas is None:
            return
        try:
            quotas = parse_quota_config(config)
        except ValueError as error:  # a znode written by hand: Kafka's handler fails the same way
            log.error("Ignoring the quota config of user %s client-id %s: %s", user, client_id, error)
            return
        self.loop.call_soon_threadsafe(self.quotas.update_quotas, user, client_id, quotas)

    def _load_broker_config(self) -> None:
        found = self.zk.get_entity_configs(znodes.ConfigType.BROKER, [znodes.DEFAULT_ENTITY_NAME, str(self.broker_id)])
        if self.dynamic_config is not None:
            self.dynamic_config.update(found.get(znodes.DEFAULT_ENTITY_NAME, {}), found.get(str(self.broker_id), {}))
            return
        overrides = {**found.get(znodes.DEFAULT_ENTITY_NAME, {}), **found.get(str(self.broker_id), {})}
        self.loop.call_soon_threadsafe(self.replica_manager.apply_broker_config, overrides)
