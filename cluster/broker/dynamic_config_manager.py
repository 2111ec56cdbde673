"""Configs that change while the broker runs (Kafka's `DynamicConfigManager` with its topic and broker
config handlers, ZooKeeper mode).

Each `/config/changes/config_change_*` created after start-up names an entity: a topic's overrides are
re-read and handed to the replica manager (`apply_topic_config`); this broker's dynamic configs,
`/config/brokers/<default>` and `/config/brokers/<id>`, are re-read into its `DynamicBrokerConfig`, which
tells the parts that honour them (Kafka's reconfigurables: the replica manager's throttle rates and
min.insync.replicas default, the log defaults, the controller's unclean.leader.election.enable). Read
once at start-up too.

Threads: the watch fires on kazoo's thread and reads ZooKeeper there; the replica manager is told on
the broker's event loop (`loop.call_soon_threadsafe`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

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
    ) -> None:
        self.broker_id = broker_id
        self.zk = zk
        self.replica_manager = replica_manager
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

    def _load_broker_config(self) -> None:
        found = self.zk.get_entity_configs(znodes.ConfigType.BROKER, [znodes.DEFAULT_ENTITY_NAME, str(self.broker_id)])
        if self.dynamic_config is not None:
            self.dynamic_config.update(found.get(znodes.DEFAULT_ENTITY_NAME, {}), found.get(str(self.broker_id), {}))
            return
        overrides = {**found.get(znodes.DEFAULT_ENTITY_NAME, {}), **found.get(str(self.broker_id), {})}
        self.loop.call_soon_threadsafe(self.replica_manager.apply_broker_config, overrides)
