"""What every part of a run shares: the cluster it drives (ZooKeeper ensemble, brokers, the `kafkaops`
executable), the event log, the episodes' bookkeeping, and the findings the report reads."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

from kafkaops.cluster.common import log4j
from kafkaops.cluster.local.cluster import LocalCluster
from kafkaops.cluster.local.zookeeper import ZooKeeperEnsemble
from kafkaops.cluster.zk import znodes
from kafkaops.cluster.zk.client import KafkaZkClient
from kafkaops.cluster.zk.values import TopicPartition

from .schedule import DOOMED_PREFIX, SURVIVING_PREFIX, ChaosConfig, admin_rounds, plan_schedule
from .workload import GroupCommitConsumer, LiveConsumer, ProducerWorker, kafka_python_settings, librdkafka_settings

if TYPE_CHECKING:
    from kafkaops.admin.kafka_client import KafkaClient
    from kafkaops.admin.kafka_client.metadata import PartitionInfo

    from .checks import DataVerdict

T = TypeVar("T")

POLL_S = 0.25
"""How often the run's waits look again (`wait_for`'s interval)."""


def as_text(output: str | bytes | None) -> str:
    if output is None:
        return ""
    return output.decode(errors="replace") if isinstance(output, bytes) else output


def last_line(output: str) -> str:
    lines = output.strip().splitlines()
    return lines[-1] if lines else ""


class EventLog:
    """Every action, with wall-clock time and seconds since the chaos phase began, to a file and stdout."""

    def __init__(self, path: Path, echo: TextIO | None) -> None:
        self.path = path
        self._file = open(path, "a", buffering=1)  # noqa: SIM115 - closed by close()
        self._echo = echo
        self.origin = time.monotonic()
        self._lock = threading.Lock()

    def now(self) -> float:
        return time.monotonic() - self.origin

    def __call__(self, message: str) -> None:
        # log4j's timestamp, as in the state-change logs, to line the two up
        line = f"[{log4j.timestamp(datetime.now())}] +{self.now():8.1f}s {message}"
        with self._lock:
            self._file.write(line + "\n")
            if self._echo is not None:
                self._echo.write(line + "\n")
                self._echo.flush()

    def close(self) -> None:
        self._file.close()


class Interrupted(Exception):
    """The run is being stopped: a signal to the runner, or teardown reaching an episode."""


@dataclass
class Intent:
    kind: str
    at: float
    detail: str
    target: dict[str, Any] = field(default_factory=dict)
    exit_code: int | None = None
    output: str = ""
    status: str = "started"
    """started → completed | failed (a controller refused it and said why, as Kafka does) | refused (the CLI
    said no; no intent was written) | not completed."""
    reason: str = ""


class ChaosContext:
    """The run's shared state. `lock` guards the bookkeeping episodes write from their threads (impaired,
    counters, anomalies, warnings, faults); the chaos loop's thread owns the rest until the end phase."""

    def __init__(self, config: ChaosConfig, state_dir: Path, echo: TextIO | None, consumer_debug: bool = False) -> None:
        self.config = config
        self.state_dir = state_dir
        self.schedule = plan_schedule(config)
        self.log = EventLog(state_dir / "chaos-events.log", echo)
        self.ensemble = ZooKeeperEnsemble(state_dir)
        self.local = LocalCluster(state_dir / "cluster")
        self.zk: KafkaZkClient | None = None
        self.client_properties: dict[str, str] = {}
        """The cluster's `client.properties` (its security mode's), once it is up; none for PLAINTEXT."""
        self.zk_lock = threading.Lock()
        self.surviving = [f"{SURVIVING_PREFIX}{i}" for i in range(config.topics)]
        self.doomed = [f"{DOOMED_PREFIX}{i}" for i in range(admin_rounds(self.schedule))]
        self.producers: dict[str, ProducerWorker] = {}
        self.consumer: LiveConsumer | None = None
        self.group_consumer: GroupCommitConsumer | None = None
        self.consumer_debug = consumer_debug
        self.lock = threading.RLock()
        self.impaired: set[int] = set()
        """Brokers an episode holds: down, frozen, expired or not yet back in every ISR."""
        self.zk_busy = False
        self.episodes: list[threading.Thread] = []
        self.ending = threading.Event()
        """The chaos phase is over: holds are cut short."""
        self.closing = threading.Event()
        """Teardown: episodes stop instead of starting processes."""
        self.cli_env = {**os.environ, "KAFKAOPS_STATE_DIR": str(state_dir / "cli-state")}
        self.cli_env.pop("KAFKAOPS_CONFIG", None)
        self.cli_env.pop("KAFKAOPS_ZOOKEEPER", None)
        # findings, for the checks and the report
        self.slow_stops: list[tuple[int, float]] = []
        self.warnings: list[str] = []
        """Misbehaviour reported but not failing the run (no data or progress at stake): a broker's partial
        Metadata answer."""
        self.skipped: Counter[str] = Counter()
        self.action_errors: list[str] = []
        self.anomalies: list[str] = []
        self.intents: list[Intent] = []
        self.faults: list[dict[str, Any]] = []
        """Every fault injected, in order: its kind, when (`at`) and its details."""
        self.checks: dict[str, tuple[bool | None, str]] = {}
        self.verdict_data: DataVerdict | None = None
        self.unavailability: dict[tuple[str, int], tuple[float, float]] = {}
        self.chaos_end = 0.0
        self.producer_stop: float | None = None
        self.consumed_per_topic: dict[str, int] = {}
        self.unacked_per_topic: dict[str, int] = {}
        self.consumer_stalls: list[tuple[float, float]] = []
        """(start, seconds) of each stretch in which the live consumer read nothing while acks went on."""

    @property
    def deleted(self) -> list[str]:
        """The doomed topics a deletion was started for, in order."""
        return [i.target["topic"] for i in self.intents if i.kind == "topic_deletion"]

    @property
    def injected(self) -> Counter[str]:
        """Faults injected, by kind (in the order each kind was first injected)."""
        with self.lock:
            return Counter(fault["kind"] for fault in self.faults)

    # -- the cluster --

    @property
    def connect(self) -> str:
        return self.ensemble.connect_string

    def zk_call(self, what: Callable[[KafkaZkClient], T], timeout_s: float = 60.0) -> T:
        """A ZooKeeper read, retried while the ensemble re-forms (a node just killed)."""
        deadline = time.monotonic() + timeout_s
        while True:
            client = None
            try:
                with self.zk_lock:
                    if self.zk is None:
                        self.zk = KafkaZkClient(self.connect, session_timeout_ms=30000, connection_timeout_ms=10000)
                    client = self.zk
                return what(client)
            except Exception as error:  # noqa: BLE001 - ConnectionLoss, SessionExpired, unreachable: retried
                if time.monotonic() > deadline:
                    raise
                if "Expired" in type(error).__name__ or "Unreachable" in type(error).__name__:
                    with self.zk_lock:
                        if self.zk is client and client is not None:
                            with contextlib.suppress(Exception):
                                client.close()
                            self.zk = None
                time.sleep(0.5)

    def exists(self, path: str) -> bool:
        return bool(self.zk_call(lambda zk: zk.exists(path)))

    def surviving_partitions(self) -> list[tuple[str, int]]:
        return [(t, p) for t in self.surviving for p in range(self.config.partitions)]

    def endpoints(self) -> dict[int, str]:
        """Each broker's host:port (fixed in its broker.yaml, so the same across restarts)."""
        found = {}
        for broker_id in self.local.broker_ids():
            config = (self.local.broker_dir(broker_id) / "broker.yaml").read_text()
            for line in config.splitlines():
                if line.startswith("listeners:"):
                    found[broker_id] = line.split("//", 1)[1].strip()
        return found

    def bootstrap(self) -> str:
        return ",".join(self.endpoints().values())

    def load_client_properties(self) -> None:
        from kafkaops.admin.configs import load_properties

        path = self.local.client_properties
        self.client_properties = load_properties(path) if path is not None else {}

    def command_config(self) -> list[str]:
        """`--command-config <client.properties>` for a tool given --bootstrap-server (none for PLAINTEXT)."""
        path = self.local.client_properties
        return ["--command-config", str(path)] if path is not None and self.client_properties else []

    def kafka_client(self, bootstrap: str, client_id: str, request_timeout_ms: int, **options: Any) -> KafkaClient:
        """Our own client, connecting as the cluster's client properties say (TLS, SASL login)."""
        from kafkaops.admin.kafka_client import KafkaClient
        from kafkaops.admin.kafka_client.client_config import channel_from_properties

        return KafkaClient(
            bootstrap,
            client_id=client_id,
            request_timeout_ms=request_timeout_ms,
            channel=channel_from_properties(self.client_properties),
            **options,
        )

    def librdkafka_settings(self) -> dict[str, Any]:
        return librdkafka_settings(self.client_properties)

    def kafka_python_settings(self) -> dict[str, Any]:
        return kafka_python_settings(self.client_properties)

    def partition_states(self, partitions: Sequence[tuple[str, int]]) -> dict[tuple[str, int], Any]:
        found = self.zk_call(lambda zk: zk.get_partition_states(TopicPartition(t, p) for t, p in partitions))
        return {(tp.topic, tp.partition): (s.leader_and_isr if s is not None else None) for tp, s in found.items()}

    def assignments(self, topics: Sequence[str]) -> dict[tuple[str, int], list[int]]:
        found = self.zk_call(lambda zk: zk.get_topic_assignments(topics))
        return {(t, p): replicas for t, a in found.items() for p, replicas in a.replicas.items()}

    def registration_owner(self, broker_id: int) -> int | None:
        entry = self.zk_call(lambda zk: zk.get(znodes.BrokerIdZNode.path(broker_id)))
        return None if entry is None else int(entry[1].ephemeralOwner)

    def isrs_full(self, partitions: Sequence[tuple[str, int]]) -> bool:
        topics = sorted({t for t, _ in partitions})
        replicas = self.assignments(topics)
        states = self.partition_states(partitions)
        return all(
            (s := states.get(tp)) is not None and s.leader >= 0 and set(s.isr) == set(replicas.get(tp, ()))
            for tp in partitions
        )

    def cli(self, *args: str, timeout_s: float = 120.0) -> tuple[int, str]:
        command = [sys.executable, "-m", "kafkaops.cli", *args]
        try:
            done = subprocess.run(
                command, capture_output=True, text=True, timeout=timeout_s, env=self.cli_env, check=False
            )
        except subprocess.TimeoutExpired as error:
            return 124, f"timed out after {timeout_s:.0f}s: {as_text(error.stdout)}{as_text(error.stderr)}"
        return done.returncode, (done.stdout + done.stderr).strip()

    def server_lines(self, broker_id: int, name: str = "server.out") -> list[str]:
        """The lines of one of a broker's logs (none if it has not written it)."""
        path = self.local.broker_dir(broker_id) / "logs" / name
        return path.read_text(errors="replace").splitlines() if path.exists() else []

    def server_tail(self, broker_id: int, lines: int = 15) -> str:
        out = []
        for name in ("server.out", "server.log"):
            out += self.server_lines(broker_id, name)[-lines:]
        return "\n    ".join(out)

    def metadata_views(
        self, partitions: Sequence[tuple[str, int]]
    ) -> tuple[dict[tuple[str, int], Any], dict[int, dict[tuple[str, int], PartitionInfo] | str]]:
        """ZooKeeper's state of each of `partitions`, and each broker's own Metadata answer for them (what
        failed, for a broker down or frozen): a client stuck on a leader no broker names is told apart from a
        broker serving a stale cache."""
        states = self.partition_states(partitions)
        topics = sorted({t for t, _ in partitions})
        answers: dict[int, dict[tuple[str, int], PartitionInfo] | str] = {}
        for broker, endpoint in self.endpoints().items():
            try:
                with self.kafka_client(endpoint, "chaos-metadata-probe", 5000, retries=0) as client:
                    found = client.metadata(topics).topics
            except Exception as problem:  # noqa: BLE001 - a broker down or frozen: said so
                answers[broker] = f"{type(problem).__name__}: {problem}"
                continue
            answers[broker] = {
                (t, p.partition): p for t in topics if (info := found.get(t)) is not None for p in info.partitions
            }
        return states, answers

    # -- episodes and their bookkeeping --

    def skip(self, kind: str, why: str) -> None:
        with self.lock:
            self.skipped[kind] += 1
        self.log(f"skip {kind}: {why}")

    def spawn(self, name: str, body: Callable[[], None]) -> None:
        thread = threading.Thread(target=self.attempt, args=(name, body), name=name, daemon=True)
        self.episodes.append(thread)
        thread.start()

    def attempt(self, what: str, run: Callable[[], None]) -> None:
        try:
            run()
        except Interrupted:
            self.log(f"{what}: stopped (the run is ending)")
        except Exception as error:  # noqa: BLE001 - one action failing must not end the run
            self.action_error(what, error)

    def action_error(self, what: str, error: BaseException) -> None:
        message = f"{what} failed: {type(error).__name__}: {error}"
        with self.lock:
            self.action_errors.append(message)
        self.log(f"ERROR {message}")

    def anomaly(self, message: str) -> None:
        with self.lock:
            self.anomalies.append(message)
        self.log(f"ANOMALY {message}")

    def record(self, kind: str, **detail: Any) -> dict[str, Any]:
        fault = {"kind": kind, "at": round(self.log.now(), 2), **detail}
        with self.lock:
            self.faults.append(fault)
        return fault

    def reserve(self, broker: int) -> bool:
        with self.lock:
            if broker in self.impaired:
                return False
            self.impaired.add(broker)
            return True

    def release(self, broker: int) -> None:
        with self.lock:
            self.impaired.discard(broker)

    def hold(self, seconds: float) -> None:
        """Wait out a fault's hold time; cut short when the chaos phase ends."""
        self.ending.wait(seconds)
        if self.closing.is_set():
            raise Interrupted("closing")
