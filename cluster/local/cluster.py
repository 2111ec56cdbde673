"""A local cluster: ZooKeeper plus N broker processes, each with its own directory under the state dir.

    <state-dir>/cluster.yaml            zookeeper.connect, broker ids
    <state-dir>/zookeeper/...           see `zookeeper.py` (only if this cluster started it)
    <state-dir>/brokers/<id>/broker.yaml, data/ (log.dirs), logs/ (state-change.log, server.log), broker.pid

Brokers run as `python -m kafkaops.cluster.server --config broker.yaml`, in their own session so
they outlive the command that started them, and stop on SIGTERM (controlled shutdown) or SIGKILL.
"""

from __future__ import annotations

import dataclasses
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from kafkaops.cluster.common.errors import KafkaOpsError, UserError
from kafkaops.cluster.local import processes
from kafkaops.cluster.local.zookeeper import LocalZooKeeper, free_port
from kafkaops.cluster.zk import znodes
from kafkaops.cluster.zk.client import KafkaZkClient


class ClusterError(KafkaOpsError):
    pass


@dataclasses.dataclass(frozen=True)
class BrokerStatus:
    broker_id: int
    pid: int | None
    registered: bool
    endpoint: str | None
    broker_epoch: int | None = None


@dataclasses.dataclass(frozen=True)
class ClusterStatus:
    zookeeper: str
    zookeeper_serving: bool
    brokers: tuple[BrokerStatus, ...]
    controller_id: int | None
    controller_epoch: int | None


@dataclasses.dataclass
class LocalCluster:
    state_dir: Path

    @property
    def config_file(self) -> Path:
        return self.state_dir / "cluster.yaml"

    def broker_dir(self, broker_id: int) -> Path:
        return self.state_dir / "brokers" / str(broker_id)

    def load(self) -> dict[str, Any]:
        if not self.config_file.exists():
            raise UserError(f"No local cluster in {self.state_dir}: run `kafkaops cluster up` first")
        return yaml.safe_load(self.config_file.read_text()) or {}

    @property
    def zookeeper_connect(self) -> str:
        return str(self.load()["zookeeper.connect"])

    def broker_ids(self) -> list[int]:
        return sorted(int(b) for b in self.load().get("brokers", []))

    # --- lifecycle ---------------------------------------------------------------------------

    def up(
        self,
        brokers: int = 3,
        zookeeper_connect: str | None = None,
        broker_overrides: Mapping[str, Any] | None = None,
        racks: Mapping[int, str] | None = None,
        timeout_s: float = 60.0,
    ) -> ClusterStatus:
        """Start ZooKeeper (unless given) and `brokers` brokers; wait until a controller is elected."""
        self.state_dir.mkdir(parents=True, exist_ok=True)
        if self.config_file.exists():
            existing = self.load()
            zookeeper_connect = zookeeper_connect or existing.get("zookeeper.connect")
        if zookeeper_connect is None:
            zookeeper = LocalZooKeeper.from_state_dir(self.state_dir)
            if zookeeper.pid() is None:
                zookeeper.port = free_port()
            zookeeper.start()
            zookeeper_connect = zookeeper.connect_string
        ids = list(range(brokers))
        self.config_file.write_text(
            yaml.safe_dump({"zookeeper.connect": zookeeper_connect, "brokers": ids}, sort_keys=False)
        )
        for broker_id in ids:
            self.write_broker_config(broker_id, zookeeper_connect, broker_overrides, (racks or {}).get(broker_id))
            self.start_broker(broker_id, wait=False)
        self.wait_until(lambda s: s.controller_id is not None and all(b.registered for b in s.brokers), timeout_s)
        return self.status()

    def write_broker_config(
        self, broker_id: int, zookeeper_connect: str, overrides: Mapping[str, Any] | None, rack: str | None
    ) -> Path:
        directory = self.broker_dir(broker_id)
        path = directory / "broker.yaml"
        if path.exists():
            # keep the broker's listener and overrides; follow the ZooKeeper it is started with
            existing = yaml.safe_load(path.read_text()) or {}
            existing["zookeeper.connect"] = zookeeper_connect
            path.write_text(yaml.safe_dump(existing, sort_keys=False))
            return path
        (directory / "data").mkdir(parents=True, exist_ok=True)
        (directory / "logs").mkdir(parents=True, exist_ok=True)
        config: dict[str, Any] = {
            "broker.id": broker_id,
            "listeners": f"PLAINTEXT://127.0.0.1:{free_port()}",
            "log.dirs": str(directory / "data"),
            "zookeeper.connect": zookeeper_connect,
        }
        if rack is not None:
            config["broker.rack"] = rack
        config.update(overrides or {})
        path.write_text(yaml.safe_dump(config, sort_keys=False))
        return path

    def start_broker(self, broker_id: int, wait: bool = True, timeout_s: float = 30.0) -> int:
        """Start one broker process (unless it runs); returns its pid."""
        directory = self.broker_dir(broker_id)
        if not (directory / "broker.yaml").exists():
            raise UserError(f"Broker {broker_id} is not part of the cluster in {self.state_dir}")
        running = self.broker_pid(broker_id)
        if running is not None:
            return running
        with open(directory / "logs" / "server.out", "ab") as out:
            process = subprocess.Popen(
                [sys.executable, "-m", "kafkaops.cluster.server", "--config", str(directory / "broker.yaml")],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                close_fds=True,
            )
        (directory / "broker.pid").write_text(f"{process.pid}\n")
        if wait:
            # a hard-killed predecessor's registration lingers until its session expires: wait for ours
            stale = next((b.broker_epoch for b in self.status().brokers if b.broker_id == broker_id), None)
            self.wait_until(
                lambda s: any(b.broker_id == broker_id and b.registered and b.broker_epoch != stale for b in s.brokers),
                timeout_s,
            )
        return process.pid

    def stop_broker(self, broker_id: int, hard: bool = False, timeout_s: float = 60.0) -> bool:
        """SIGTERM (controlled shutdown) or SIGKILL one broker; False if it was not running."""
        pid = self.broker_pid(broker_id)
        if pid is None:
            return False
        processes.stop(pid, signal.SIGKILL if hard else signal.SIGTERM, timeout_s)
        (self.broker_dir(broker_id) / "broker.pid").unlink(missing_ok=True)
        return True

    def down(self) -> None:
        """Stop every broker (controlled), then the ZooKeeper this cluster started."""
        for broker_id in self.broker_ids():
            self.stop_broker(broker_id)
        LocalZooKeeper.from_state_dir(self.state_dir).stop()

    # --- observation -------------------------------------------------------------------------

    def broker_pid(self, broker_id: int) -> int | None:
        return processes.read_pid(self.broker_dir(broker_id) / "broker.pid")

    def status(self) -> ClusterStatus:
        connect = self.zookeeper_connect
        ids = self.broker_ids()
        try:
            with KafkaZkClient(connect, connection_timeout_ms=3000) as zk:
                registered = {b.broker_id: b for b in zk.get_all_brokers()}
                found = zk.get_many(znodes.BrokerIdZNode.path(b) for b in registered)
                epochs = {b: entry[1].czxid for b in registered if (entry := found[znodes.BrokerIdZNode.path(b)])}
                controller = zk.get_controller_id()
                epoch = zk.get_controller_epoch()
            serving = True
        except KafkaOpsError:
            registered, epochs, controller, epoch, serving = {}, {}, None, None, False
        brokers = tuple(
            BrokerStatus(
                b,
                self.broker_pid(b),
                b in registered,
                str(registered[b].endpoints[0]) if b in registered and registered[b].endpoints else None,
                epochs.get(b),
            )
            for b in sorted(set(ids) | set(registered))
        )
        return ClusterStatus(connect, serving, brokers, controller, epoch[0] if epoch else None)

    def wait_until(self, condition: Any, timeout_s: float) -> ClusterStatus:
        deadline = time.monotonic() + timeout_s
        while True:
            status = self.status()
            if condition(status):
                return status
            if time.monotonic() > deadline:
                raise ClusterError(f"The local cluster did not get there within {timeout_s:.0f}s: {status}")
            time.sleep(0.2)
