"""A local cluster: ZooKeeper plus N broker processes, each with its own directory under the state dir.

    <state-dir>/cluster.yaml            zookeeper.connect, broker ids, broker.overrides (given to every broker),
                                        security (the mode of `up --security`), listener.names
    <state-dir>/client.properties       the tools' client settings for a secured cluster (security.py)
    <state-dir>/zookeeper/...           see `zookeeper.py` (only if this cluster started it)
    <state-dir>/brokers/<id>/broker.yaml, data/ (log.dirs), logs/ (state-change.log, server.log), broker.pid

Brokers run as `python -m kafkaops.cluster.server --config broker.yaml`, in their own session so
they outlive the command that started them, and stop on SIGTERM (controlled shutdown) or SIGKILL.
"""

from __future__ import annotations

import dataclasses
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from kafkaops.cluster.common.errors import KafkaOpsError, UserError
from kafkaops.cluster.local import processes
from kafkaops.cluster.local.security import CLIENT_PROPERTIES, security_mode, write_client_properties
from kafkaops.cluster.local.zookeeper import LocalZooKeeper, free_port, free_ports, zookeeper_answers
from kafkaops.cluster.server import SIGNAL_STOP_UNCONTROLLED
from kafkaops.cluster.zk import znodes
from kafkaops.cluster.zk.client import KafkaZkClient
from kafkaops.cluster.zk.values import TopicAssignment, TopicPartition


class ClusterError(KafkaOpsError):
    pass


def replicas_held(broker_id: int, assignments: Mapping[str, TopicAssignment]) -> list[TopicPartition]:
    """The partitions ZooKeeper assigns to `broker_id`: as a replica, or as one a reassignment is adding."""
    return [
        TopicPartition(topic, partition)
        for topic, assignment in sorted(assignments.items())
        for partition, replicas in sorted(assignment.partitions.items())
        if broker_id in replicas.replicas or broker_id in replicas.adding_replicas
    ]


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

    @property
    def bootstrap_servers(self) -> str:
        """The registered brokers' addresses, as `--bootstrap-server` takes them (empty if none)."""
        return ",".join(b.endpoint.split("://", 1)[-1] for b in self.brokers if b.registered and b.endpoint)


@dataclasses.dataclass
class LocalCluster:
    state_dir: Path

    @property
    def config_file(self) -> Path:
        return self.state_dir / "cluster.yaml"

    def broker_dir(self, broker_id: int) -> Path:
        return self.state_dir / "brokers" / str(broker_id)

    def exists(self) -> bool:
        return self.config_file.exists()

    def load(self) -> dict[str, Any]:
        if not self.config_file.exists():
            raise UserError(f"No local cluster in {self.state_dir}: run `kafkaops cluster up` first")
        return yaml.safe_load(self.config_file.read_text()) or {}

    def _save(
        self, zookeeper_connect: str, overrides: Mapping[str, Any] | None, security: Mapping[str, Any] | None = None
    ) -> None:
        """`security`: the `security` and `listener.names` entries (kept from the file when not given)."""
        previous = yaml.safe_load(self.config_file.read_text()) or {} if self.config_file.exists() else {}
        document: dict[str, Any] = {"zookeeper.connect": zookeeper_connect, "brokers": self.broker_ids()}
        if overrides:
            document["broker.overrides"] = dict(overrides)
        for key in ("security", "listener.names"):
            value = (security or {}).get(key, previous.get(key))
            if value is not None:
                document[key] = value
        self.config_file.write_text(yaml.safe_dump(document, sort_keys=False))

    @property
    def client_properties(self) -> Path | None:
        """`<state dir>/client.properties` of a secured cluster (the tools' `--command-config`), else None."""
        path = self.state_dir / CLIENT_PROPERTIES
        return path if path.exists() else None

    @property
    def security(self) -> str:
        """The mode `up --security` set the cluster up with (plaintext for clusters made before the option)."""
        return str(self.load().get("security") or "plaintext") if self.config_file.exists() else "plaintext"

    @property
    def listener_names(self) -> list[str]:
        """The listeners every broker gets (`listener.names` of cluster.yaml; PLAINTEXT by default)."""
        if not self.config_file.exists():
            return ["PLAINTEXT"]
        return [str(n) for n in self.load().get("listener.names") or ["PLAINTEXT"]]

    def _prepare_security(
        self, security: str | None, listener_names: Sequence[str] | None, overrides: Mapping[str, Any] | None
    ) -> tuple[dict[str, Any], dict[str, Any], Callable[[str], None] | None]:
        """A new cluster's security mode: its files, the overrides and cluster.yaml entries it adds, and what
        to do in ZooKeeper before the brokers start. An existing cluster keeps its mode (UserError if another
        is asked for)."""
        if self.config_file.exists():
            existing = self.load()
            current = str(existing.get("security") or "plaintext")
            if security is not None and security_mode(security).name != current:
                raise UserError(
                    f"The cluster in {self.state_dir} was set up with --security {current}: "
                    f"remove the state dir to start it with --security {security}"
                )
            return dict(overrides or existing.get("broker.overrides") or {}), {}, None
        mode = security_mode(security or "plaintext")
        setup = mode.prepare(self.state_dir)
        if setup.client_properties:
            write_client_properties(self.state_dir / CLIENT_PROPERTIES, setup.client_properties)
        names = [n.upper() for n in (listener_names or [mode.security_protocol])]
        entries = {"security": mode.name, "listener.names": names}
        return {**setup.broker_overrides, **(overrides or {})}, entries, setup.before_brokers

    @property
    def zookeeper_connect(self) -> str:
        return str(self.load()["zookeeper.connect"])

    @property
    def broker_overrides(self) -> dict[str, Any]:
        """The broker settings `up` was given: every broker added later gets them too."""
        return dict(self.load().get("broker.overrides") or {})

    def broker_ids(self) -> list[int]:
        """Every broker the state dir holds (a directory with a broker.yaml), whoever started it."""
        brokers = self.state_dir / "brokers"
        if not brokers.is_dir():
            return []
        return sorted(int(d.name) for d in brokers.iterdir() if d.name.isdigit() and (d / "broker.yaml").exists())

    def owns_zookeeper(self) -> bool:
        """Whether the cluster's ZooKeeper is the one `up` started in this state dir (not a `--zookeeper`)."""
        local = LocalZooKeeper.from_state_dir(self.state_dir)
        return self.zookeeper_connect.split("/", 1)[0] == local.connect_string and local.pid_file.parent.exists()

    # --- lifecycle ---------------------------------------------------------------------------

    def up(
        self,
        brokers: int = 3,
        zookeeper_connect: str | None = None,
        broker_overrides: Mapping[str, Any] | None = None,
        racks: Mapping[int, str] | None = None,
        timeout_s: float = 60.0,
        security: str | None = None,
        listener_names: Sequence[str] | None = None,
    ) -> ClusterStatus:
        """Start ZooKeeper (unless given) and the brokers: those the state dir holds (added ones included,
        removed ones not), or ids 0..`brokers`-1 for a new cluster; wait until a controller is elected and
        every one is registered.

        A new cluster is set up in `security` mode (security.py's table; plaintext by default), its brokers
        listening on `listener_names` (default: one listener named after the mode's protocol, each on a free
        port). Raises UserError for an unknown mode, or another mode than an existing cluster's."""
        self.state_dir.mkdir(parents=True, exist_ok=True)
        broker_overrides, security_entries, before_brokers = self._prepare_security(
            security, listener_names, broker_overrides
        )
        if self.config_file.exists():
            existing = self.load()
            if zookeeper_connect is None and self.owns_zookeeper():
                # `down` stopped the ZooKeeper this state dir runs: start it again on its port
                LocalZooKeeper.from_state_dir(self.state_dir).start()
            zookeeper_connect = zookeeper_connect or existing.get("zookeeper.connect")
        if zookeeper_connect is None:
            zookeeper = LocalZooKeeper.from_state_dir(self.state_dir)
            if zookeeper.pid() is None:
                zookeeper.port = free_port()
            zookeeper.start()
            zookeeper_connect = zookeeper.connect_string
        ids = self.broker_ids() or list(range(brokers))
        if not self.broker_ids() and brokers < 3:
            # as Kafka's quickstart server.properties does for its one broker: with the default of 3, the
            # consumer groups' coordinator would stay unavailable until three brokers are alive
            broker_overrides = {"offsets.topic.replication.factor": brokers, **broker_overrides}
        self._save(zookeeper_connect, broker_overrides, security_entries)
        for broker_id in ids:
            self.write_broker_config(broker_id, zookeeper_connect, broker_overrides, (racks or {}).get(broker_id))
        self._save(zookeeper_connect, broker_overrides)
        if before_brokers is not None:
            before_brokers(zookeeper_connect)
        # A registration (and a controller) left by brokers that were stopped with the ZooKeeper they used
        # lives on, restored with their sessions, until those expire: wait for our brokers' own, and for a
        # controller elected after them, or the cluster would be reported up before it serves.
        before = self.status()
        stale = {b.broker_id: b.broker_epoch for b in before.brokers if b.registered and b.pid is None}
        stale_controller_epoch = (
            before.controller_epoch
            if before.controller_id is not None and self.broker_pid(before.controller_id) is None
            else None
        )
        for broker_id in ids:
            self.start_broker(broker_id, wait=False)
        self.wait_until(
            lambda s: (
                s.controller_id is not None
                and (stale_controller_epoch is None or s.controller_epoch != stale_controller_epoch)
                and all(
                    b.registered and (b.broker_id not in stale or b.broker_epoch != stale[b.broker_id])
                    for b in s.brokers
                )
            ),
            timeout_s,
        )
        return self.status()

    def add_broker(self, rack: str | None = None, broker_id: int | None = None, timeout_s: float = 30.0) -> int:
        """Kafka's "Expanding your cluster": a new broker with a free port, its own dirs and the cluster's
        ZooKeeper and broker settings, started and registered. Returns its id (by default one past the highest
        id in the state dir or registered in ZooKeeper)."""
        config = self.load()
        connect = str(config["zookeeper.connect"])
        status = self.status()
        if not status.zookeeper_serving:
            raise UserError(f"ZooKeeper {connect} is not answering: start the cluster with `kafkaops cluster up`")
        known = {b.broker_id for b in status.brokers}
        if broker_id is None:
            broker_id = max(known, default=-1) + 1
        elif broker_id < 0:
            raise UserError(f"Broker id must be a non-negative number, not {broker_id}")
        elif broker_id in self.broker_ids():
            raise UserError(f"Broker {broker_id} is already part of the cluster in {self.state_dir}")
        elif broker_id in known:
            raise UserError(f"Broker {broker_id} is already registered in ZooKeeper {connect}")
        self.write_broker_config(broker_id, connect, config.get("broker.overrides"), rack)
        self._save(connect, config.get("broker.overrides"))
        self.start_broker(broker_id, timeout_s=timeout_s)
        return broker_id

    def remove_broker(self, broker_id: int, timeout_s: float = 60.0) -> None:
        """Kafka's "Decommissioning brokers", last step: stop a drained broker (controlled) and delete its dirs.

        Raises UserError, changing nothing, while ZooKeeper still assigns it replicas (a reassignment adding
        it included) or cannot be read."""
        if broker_id not in self.broker_ids():
            raise UserError(f"Broker {broker_id} is not part of the cluster in {self.state_dir}")
        connect = self.zookeeper_connect
        try:
            with KafkaZkClient(connect, connection_timeout_ms=3000) as zk:
                assignments = zk.get_topic_assignments(zk.get_all_topics())
                pending = zk.get(znodes.ReassignPartitionsZNode.path())
            # a reassignment written but not yet taken up by the controller may still move replicas onto it
            targets = znodes.ReassignPartitionsZNode.decode(pending[0]) if pending is not None else {}
        except KafkaOpsError as error:
            raise UserError(
                f"Cannot tell whether broker {broker_id} still holds replicas: ZooKeeper {connect}: {error}"
            ) from None
        held = sorted(set(replicas_held(broker_id, assignments)) | {tp for tp, r in targets.items() if broker_id in r})
        if held:
            shown = ",".join(str(tp) for tp in held[:10]) + (",..." if len(held) > 10 else "")
            raise UserError(
                f"Broker {broker_id} still holds replicas of {len(held)} partition(s) ({shown}): move them to other "
                f"brokers first (reassign-partitions --generate with a --broker-list without {broker_id}, then "
                "--execute and --verify)"
            )
        self.stop_broker(broker_id, timeout_s=timeout_s)
        shutil.rmtree(self.broker_dir(broker_id))
        self._save(connect, self.load().get("broker.overrides"))

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
        names = self.listener_names
        inter_broker = (overrides or {}).get("inter.broker.listener.name")
        if inter_broker is not None and str(inter_broker) not in names:
            names = [str(inter_broker)]  # a cluster whose overrides name its one listener (SASL_PLAINTEXT)
        config: dict[str, Any] = {
            "broker.id": broker_id,
            "listeners": ",".join(
                f"{name}://127.0.0.1:{port}" for name, port in zip(names, free_ports(len(names)), strict=True)
            ),
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
            raise UserError(
                f"Broker {broker_id} is not part of the cluster in {self.state_dir}: add it with "
                f"`kafkaops cluster add-broker --id {broker_id}`"
            )
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
                (process, directory / "logs" / "server.out"),
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

    def down(self, timeout_s: float = 30.0) -> list[int]:
        """Stop every broker the state dir holds, then the ZooKeeper this cluster started; returns the ids of
        the brokers that were running.

        No leader moves when everything stops: every broker gets SIGNAL_STOP_UNCONTROLLED at once and shuts down
        cleanly (its controller component first, then its logs, checkpointed, then its session) without a
        controlled shutdown. A controlled shutdown would hand each broker's leaderships to brokers that are
        stopping too, and the last brokers, with nobody left to take over, can only retry and give up (Kafka's
        "unclean shutdown" after `controlled.shutdown.max.retries`). ZooKeeper keeps the leaders and ISRs of the
        moment, so the next `up` starts where this one stopped."""
        running = {b: pid for b in self.broker_ids() if (pid := self.broker_pid(b)) is not None}
        processes.stop_all(list(running.values()), SIGNAL_STOP_UNCONTROLLED, timeout_s)
        for broker_id in running:
            (self.broker_dir(broker_id) / "broker.pid").unlink(missing_ok=True)
        LocalZooKeeper.from_state_dir(self.state_dir).stop()
        return sorted(running)

    # --- observation -------------------------------------------------------------------------

    def running_zookeeper(self) -> str | None:
        """The connect string of this state dir's ZooKeeper if it answers: the cluster's (cluster.yaml), else the
        one `cluster zookeeper start` runs here (or the default port's); None if nothing answers."""
        if self.config_file.exists():
            connect = str(self.load().get("zookeeper.connect") or "")
        else:
            connect = LocalZooKeeper.from_state_dir(self.state_dir).connect_string
        return connect if connect and zookeeper_answers(connect) else None

    def running_bootstrap_servers(self) -> str | None:
        """`host:port,...` of the brokers of this state dir whose process runs (their configured listeners)."""
        addresses = []
        for broker_id in self.broker_ids():
            if self.broker_pid(broker_id) is None:
                continue
            config = yaml.safe_load((self.broker_dir(broker_id) / "broker.yaml").read_text()) or {}
            listener = str(config.get("listeners", "")).split(",")[0]
            if "://" in listener:
                addresses.append(listener.split("://", 1)[1])
        return ",".join(addresses) or None

    def listener_addresses(self) -> set[str]:
        """`host:port` of every listener of every broker of this state dir (their broker.yaml)."""
        addresses = set()
        for broker_id in self.broker_ids():
            config = yaml.safe_load((self.broker_dir(broker_id) / "broker.yaml").read_text()) or {}
            for listener in str(config.get("listeners", "")).split(","):
                if "://" in listener:
                    addresses.add(listener.split("://", 1)[1].strip())
        return addresses

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

    def wait_until(
        self, condition: Any, timeout_s: float, starting: tuple[subprocess.Popen[bytes], Path] | None = None
    ) -> ClusterStatus:
        """Poll `status()` until `condition` holds; with `starting` (a broker process and its output file),
        fail at once if that process exits."""
        deadline = time.monotonic() + timeout_s
        while True:
            status = self.status()
            if condition(status):
                return status
            if starting is not None and starting[0].poll() is not None:
                code = starting[0].returncode
                raise ClusterError(f"The broker exited with code {code} while starting: see {starting[1]}")
            if time.monotonic() > deadline:
                raise ClusterError(f"The local cluster did not get there within {timeout_s:.0f}s: {status}")
            time.sleep(0.2)
