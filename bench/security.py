"""Benchmark (issue 17): what TLS and SASL cost, measured against PLAINTEXT in the same run.

Two 3-broker local clusters on one LocalZooKeeper (each under its own chroot), started one after the other:

    plaintext   `up --security plaintext`: every listener PLAINTEXT
    sasl_ssl    `up --security sasl_ssl`: every listener SASL_SSL, inter-broker included (the brokers log
                in to each other with SCRAM-SHA-512 over TLS); clients log in as the cluster's admin user
                (SCRAM-SHA-512) with `<state dir>/client.properties`

On each, measured:

    produce     confluent-kafka producing --record-bytes (1 KB) records flat out for --duration seconds to
                a topic of --partitions partitions, RF 3, acks=all, min.insync.replicas=2 (bench/produce.py's
                `produce`): MB/s of acknowledged records and the p99 of each record's delivery latency
                (from produce() to its acknowledgement, time in the client's queue included: at saturation).
                The ratio SASL_SSL / PLAINTEXT is the cost of TLS (and of SASL's one login per connection).
    connections --threads threads opening fresh connections to broker 0 for --connect-seconds:
                  PLAINTEXT: TCP connect + one ApiVersions round trip, closed (the baseline);
                  SASL_SSL: TCP connect + TLS handshake + SaslHandshake + SCRAM-SHA-512 SaslAuthenticate
                  (our own client, cluster/protocol/sasl_client_authenticator.py's `connect_channel`), closed.
                Printed: connections (authentications) per second, and the ratio.

Every process started (ZooKeeper, the brokers) is stopped at the end, also on an error, Ctrl-C or SIGTERM,
and the state dir (a fresh temporary one unless --state-dir) is removed. No goal is set for these figures
(issue 17 asks for them, not for a bound): the rows say "report".

Usage: .venv/bin/python bench/security.py [--duration 10] [--record-bytes 1000] [--partitions 3]
                                          [--threads 4] [--connect-seconds 5] [--state-dir DIR] [--json PATH]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# bench/ is not an installed package: run as a script, this file finds its neighbours from the repository's root
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.produce import ProduceResult, produce, wait_online  # noqa: E402 - after the path it is found on
from bench.table import Row, format_table, write_rows  # noqa: E402
from kafkaops.cluster.local.signals import run_program, stop_started  # noqa: E402

BROKER_OVERRIDES = {
    "zookeeper.session.timeout.ms": 18000,
    "auto.leader.rebalance.enable": False,
    "auto.create.topics.enable": False,
}
TOPIC = "bench-security-rf3"
GOAL = "report"


@dataclass(frozen=True)
class SecuredCluster:
    """A running cluster of this run: its bootstrap servers and its clients' settings."""

    mode: str
    bootstrap: str
    properties: dict[str, str]
    """Kafka's client properties (`<state dir>/client.properties`; none for PLAINTEXT)."""

    def confluent(self) -> dict[str, Any]:
        """The same settings in librdkafka's names (the CA file as ssl.ca.location, the login's user)."""
        from kafkaops.cluster.common.sasl import client_login

        props = self.properties
        if not props:
            return {}
        settings: dict[str, Any] = {"security.protocol": props["security.protocol"]}
        if "ssl.truststore.location" in props:
            settings["ssl.ca.location"] = props["ssl.truststore.location"]
        if "sasl.mechanism" in props:
            login = client_login(props["sasl.mechanism"], props["sasl.jaas.config"])
            settings.update(
                {"sasl.mechanism": login.mechanism, "sasl.username": login.username, "sasl.password": login.password}
            )
        return settings

    @property
    def first_broker(self) -> tuple[str, int]:
        host, port = self.bootstrap.split(",")[0].rsplit(":", 1)
        return host, int(port)


def start_cluster(
    state: Path, zk_connect: str, mode: str, started: list[Callable[[], None]], partitions: int
) -> SecuredCluster:
    """Start a 3-broker cluster in `mode` (its stop registered in `started`), create the RF 3 topic."""
    from kafkaops.admin import topics as admin_topics
    from kafkaops.admin.assignment import JavaRandom
    from kafkaops.admin.configs import load_properties
    from kafkaops.cluster.local.cluster import LocalCluster
    from kafkaops.cluster.zk.client import KafkaZkClient

    cluster = LocalCluster(state / mode)

    def stop() -> None:
        for broker_id in cluster.broker_ids() if cluster.config_file.exists() else []:
            cluster.stop_broker(broker_id, hard=True)

    started.append(stop)
    connect = f"{zk_connect}/bench-security-{mode}"
    status = cluster.up(brokers=3, zookeeper_connect=connect, broker_overrides=BROKER_OVERRIDES, security=mode)
    with KafkaZkClient(connect) as zk:
        admin_topics.create_topic(zk, TOPIC, partitions, 3, None, {"min.insync.replicas": "2"}, rng=JavaRandom(1))
        wait_online(zk, TOPIC, partitions, 3)
    path = cluster.client_properties
    properties = load_properties(path) if path is not None else {}
    return SecuredCluster(mode, status.bootstrap_servers, properties)


# --- connections per second --------------------------------------------------------------------------------


def plaintext_connection(host: str, port: int) -> None:
    """TCP connect, one ApiVersions (v0) round trip, close."""
    from kafkaops.cluster.common.client_channel import PLAINTEXT_CHANNEL
    from kafkaops.cluster.protocol.framing import frame, read_frame_blocking
    from kafkaops.cluster.protocol.messages import RequestHeader, decode_response, encode_request
    from kafkaops.cluster.protocol.schemas import ApiKey

    with PLAINTEXT_CHANNEL.connect(host, port, 10.0) as sock:
        sock.sendall(frame(encode_request(RequestHeader(ApiKey.API_VERSIONS, 0, 1, "bench-connect"), {})))
        answer = decode_response(ApiKey.API_VERSIONS, 0, read_frame_blocking(sock))[1]
        if answer["error_code"]:
            raise RuntimeError(f"ApiVersions answered error {answer['error_code']}")


def sasl_connection_maker(properties: dict[str, str]) -> Callable[[str, int], None]:
    """A function doing TCP connect, TLS handshake, SaslHandshake + SaslAuthenticate (the properties'
    mechanism and login), close."""
    from kafkaops.admin.kafka_client.client_config import channel_from_properties
    from kafkaops.cluster.protocol.sasl_client_authenticator import connect_channel

    channel = channel_from_properties(properties)

    def connect(host: str, port: int) -> None:
        connect_channel(channel, host, port, 10.0, "bench-scram").close()

    return connect


def connections_per_second(
    connect: Callable[[str, int], None], host: str, port: int, threads: int, seconds: float
) -> float:
    """Fresh connections completed per second by `threads` threads for `seconds`; raises the first failure."""
    counts = [0] * threads
    failures: list[BaseException] = []
    deadline = time.perf_counter() + seconds

    def loop(index: int) -> None:
        try:
            while time.perf_counter() < deadline and not failures:
                connect(host, port)
                counts[index] += 1
        except BaseException as error:  # noqa: BLE001 - raised on the main thread
            failures.append(error)

    workers = [threading.Thread(target=loop, args=(i,), daemon=True) for i in range(threads)]
    started = time.perf_counter()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    elapsed = time.perf_counter() - started
    if failures:
        raise failures[0]
    return sum(counts) / elapsed


# --- the run -----------------------------------------------------------------------------------------------


def measure(cluster: SecuredCluster, args: argparse.Namespace) -> tuple[ProduceResult, float]:
    result = produce(
        cluster.bootstrap, TOPIC, "all", args.duration, args.records, args.record_bytes, settings=cluster.confluent()
    )
    errors = f", {result.failed} failed (first: {result.first_error})" if result.failed else ""
    print(
        f"{cluster.mode:9s} produce RF 3 acks=all: {result.mb_s:7.1f} MB/s, {result.records_s:8.0f} records/s "
        f"({result.acked} x {args.record_bytes} B in {result.seconds:.1f} s), latency p50 "
        f"{result.percentile_ms(0.50):7.1f} ms p99 {result.percentile_ms(0.99):7.1f} ms{errors}",
        flush=True,
    )
    host, port = cluster.first_broker
    connect = plaintext_connection if not cluster.properties else sasl_connection_maker(cluster.properties)
    rate = connections_per_second(connect, host, port, args.threads, args.connect_seconds)
    what = "connect + ApiVersions" if not cluster.properties else "connect + TLS + SCRAM-SHA-512 login"
    print(f"{cluster.mode:9s} connections: {rate:8.1f}/s ({what}, {args.threads} threads, broker 0)", flush=True)
    return result, rate


def table_rows(plain: tuple[ProduceResult, float], secured: tuple[ProduceResult, float]) -> list[Row]:
    (plain_produce, plain_rate), (sasl_produce, sasl_rate) = plain, secured
    return [
        Row.measured(
            "produce RF 3 acks=all over SASL_SSL (baseline: PLAINTEXT)",
            sasl_produce.mb_s, "MB/s", plain_produce.mb_s, GOAL, True,
        ),
        Row.measured(
            "produce p99 latency over SASL_SSL (baseline: PLAINTEXT)",
            sasl_produce.percentile_ms(0.99), "ms", plain_produce.percentile_ms(0.99), GOAL, True,
        ),
        Row.measured(
            "SCRAM-SHA-512 logins over TLS (baseline: PLAINTEXT connect + ApiVersions)",
            sasl_rate, "conn/s", plain_rate, GOAL, True,
        ),
    ]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--duration", type=float, default=10.0, help="seconds of producing per cluster")
    parser.add_argument("--records", type=int, default=10_000_000, help="at most this many records per cluster")
    parser.add_argument("--record-bytes", type=int, default=1000)
    parser.add_argument("--partitions", type=int, default=3)
    parser.add_argument("--threads", type=int, default=4, help="threads opening connections")
    parser.add_argument("--connect-seconds", type=float, default=5.0, help="seconds of opening connections")
    parser.add_argument("--state-dir", type=Path, default=None, help="where data goes (default: a fresh temp dir)")
    parser.add_argument("--json", type=Path, default=None, help="write the rows there (bench/all.py)")
    args = parser.parse_args()
    from kafkaops.cluster.local.zookeeper import LocalZooKeeper, free_port

    if args.state_dir is not None:
        args.state_dir.mkdir(parents=True, exist_ok=True)
    state = Path(tempfile.mkdtemp(prefix="kafkaops-bench-security-", dir=args.state_dir))
    started: list[Callable[[], None]] = [lambda: shutil.rmtree(state, ignore_errors=True)]
    try:
        zookeeper = LocalZooKeeper(state / "zk", free_port())

        def stop_zookeeper() -> None:
            zookeeper.stop()

        started.append(stop_zookeeper)
        zookeeper.start()
        measured = {}
        for mode in ("plaintext", "sasl_ssl"):
            cluster = start_cluster(state, zookeeper.connect_string, mode, started, args.partitions)
            measured[mode] = measure(cluster, args)
            stop_cluster = started.pop()
            stop_cluster()  # one cluster at a time: the machine's cores go to the one measured
        rows = table_rows(measured["plaintext"], measured["sasl_ssl"])
    finally:
        stop_started(started)
    print(format_table(rows))
    if args.json is not None:
        write_rows(args.json, rows)


if __name__ == "__main__":
    run_program(main)
