"""Scale mode: many brokers in one process, each with its own ZooKeeper session, listener and directory.

A 50-broker cluster with 100k partitions does not fit this 2-core machine as 50 Python processes;
as 50 `KafkaServer` objects in one process it does. Used by tests and benchmarks; every broker is
a real one (registration, listener, controller candidate), only the process is shared.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kafkaops.cluster.broker.config import parse_broker_config
from kafkaops.cluster.server.kafka_server import KafkaServer


class InProcessCluster:
    def __init__(
        self, zookeeper_connect: str, state_dir: Path, brokers: int, overrides: Mapping[str, Any] | None = None
    ) -> None:
        self.zookeeper_connect = zookeeper_connect
        self.state_dir = state_dir
        self.servers: dict[int, KafkaServer] = {}
        self._configs = {
            broker_id: parse_broker_config(
                {
                    "broker.id": broker_id,
                    "listeners": "PLAINTEXT://127.0.0.1:0",
                    "log.dirs": str(state_dir / f"broker-{broker_id}" / "data"),
                    "zookeeper.connect": zookeeper_connect,
                    **(overrides or {}),
                }
            )
            for broker_id in range(brokers)
        }

    def start(self, broker_id: int | None = None) -> None:
        for bid in [broker_id] if broker_id is not None else sorted(self._configs):
            server = KafkaServer(self._configs[bid])
            server.startup()
            self.servers[bid] = server

    def kill(self, broker_id: int) -> None:
        """The in-process SIGKILL: the session closes at once, nothing is handed over."""
        self.servers.pop(broker_id).shutdown(controlled=False)

    def stop(self, broker_id: int) -> None:
        """The in-process SIGTERM: controlled shutdown, then exit."""
        self.servers.pop(broker_id).shutdown(controlled=True)

    def controller(self) -> KafkaServer | None:
        return next((s for s in self.servers.values() if s.controller.is_active), None)

    def shutdown(self) -> None:
        for broker_id in list(self.servers):
            self.kill(broker_id)
