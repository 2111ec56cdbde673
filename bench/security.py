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
                Then the same paced at --paced-rate records/s (10 MB/s) for --paced-duration seconds, the
                same load on both clusters: the p99 of a cluster that keeps up.
                The ratio SASL_SSL / PLAINTEXT is the cost of TLS (and of SASL's one login per connection).
    connections --threads threads opening fresh connections to broker 0 for --connect-seconds:
                  PLAINTEXT: TCP connect + one ApiVersions round trip, closed (the baseline);
                  SASL_SSL, no login: TCP connect + TLS handshake + ApiVersions (answered before
                  SaslHandshake, KIP-35), closed: what TLS alone costs a connection;
                  SASL_SSL, login: TCP connect + TLS handshake + SaslHandshake + SCRAM-SHA-512
                  SaslAuthenticate (our own client, cluster/protocol/sasl_client_authenticator.py's
                  `connect_channel`), closed: SCRAM authentications per second.
                Printed: connections per second, and the ratios to the baseline.

Every process started (ZooKeeper, the brokers) is stopped at the end, also on an error, Ctrl-C or SIGTERM,
and the state dir (a fresh temporary one unless --state-dir) is removed. No goal is set for these figures
(issue 17 asks for them, not for a bound): the rows say "report".

Usage: .venv/bin/python bench/security.py [--duration 10] [--record-bytes 1000] [--partitions 3]
                                          [--paced-rate 10000] [--paced-duration 5] [--threads 4]
                                          [--connect-seconds 5] [--state-dir DIR] [--json PATH]
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
from typing import TYPE_CHECKING, Any

# bench/ is not an installed package: run as a script, this file finds its neighbours from the repository's root
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.chaos_runner.workload import librdkafka_settings  # noqa: E402 - after the path it is found on
from bench.produce import ProduceResult, produce, wait_online  # noqa: E402
from bench.table import Row, format_table, write_rows  # noqa: E402
from kafkaops.cluster.local.signals import run_program, stop_started  # noqa: E402

if TYPE_CHECKING:
    from kafkaops.cluster.common.client_channel import ClientChannel

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
        return librdkafka_settings(self.properties)

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


def api_versions_connection(channel: ClientChannel) -> Callable[[str, int], None]:
    """A function doing TCP connect (and TLS handshake, as `channel` says), one ApiVersions (v0) round trip,
    close: no login (a SASL listener answers ApiVersions before SaslHandshake, KIP-35)."""
    from kafkaops.cluster.protocol.framing import frame, read_frame_blocking
    from kafkaops.cluster.protocol.messages import RequestHeader, decode_response, encode_request
    from kafkaops.cluster.protocol.schemas import ApiKey

    request = frame(encode_request(RequestHeader(ApiKey.API_VERSIONS, 0, 1, "bench-connect"), {}))

    def connect(host: str, port: int) -> None:
        with channel.connect(host, port, 10.0) as sock:
            sock.sendall(request)
            answer = decode_response(ApiKey.API_VERSIONS, 0, read_frame_blocking(sock))[1]
            if answer["error_code"]:
                raise RuntimeError(f"ApiVersions answered error {answer['error_code']}")

    return connect


def sasl_login_connection(channel: ClientChannel) -> Callable[[str, int], None]:
    """A function doing TCP connect, TLS handshake, SaslHandshake + SaslAuthenticate (the channel's
    mechanism and login), close."""
    from kafkaops.cluster.protocol.sasl_client_authenticator import connect_channel

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


@dataclass(frozen=True)
class Measured:
    flat: ProduceResult
    paced: ProduceResult | None
    rates: dict[str, float]
    """Connections per second: `api_versions` (no login), `login` (SASL clusters)."""


def _print_produce(mode: str, what: str, result: ProduceResult, record_bytes: int) -> None:
    errors = f", {result.failed} failed (first: {result.first_error})" if result.failed else ""
    print(
        f"{mode:9s} produce RF 3 acks=all {what}: {result.mb_s:7.1f} MB/s, {result.records_s:8.0f} records/s "
        f"({result.acked} x {record_bytes} B in {result.seconds:.1f} s), latency p50 "
        f"{result.percentile_ms(0.50):7.1f} ms p99 {result.percentile_ms(0.99):7.1f} ms{errors}",
        flush=True,
    )


def measure(cluster: SecuredCluster, args: argparse.Namespace) -> Measured:
    """Produce flat out, then at --paced-rate (the same load on both clusters: latencies comparable); then
    connections per second: PLAINTEXT ones on a PLAINTEXT cluster; on a SASL_SSL one, TLS ones without a
    login (ApiVersions only) and TLS ones with the SCRAM login."""
    from kafkaops.admin.kafka_client.client_config import channel_from_properties

    settings = cluster.confluent()
    flat = produce(cluster.bootstrap, TOPIC, "all", args.duration, args.records, args.record_bytes, settings=settings)
    _print_produce(cluster.mode, "flat out", flat, args.record_bytes)
    paced = None
    if args.paced_rate > 0:
        paced = produce(
            cluster.bootstrap, TOPIC, "all", args.paced_duration, args.records, args.record_bytes,
            rate=args.paced_rate, settings=settings,
        )  # fmt: skip
        _print_produce(cluster.mode, f"at {args.paced_rate:.0f}/s", paced, args.record_bytes)
    host, port = cluster.first_broker
    channel = channel_from_properties(cluster.properties)
    tls = " + TLS" if channel.ssl_context is not None else ""
    kinds = {"api_versions": (f"connect{tls} + ApiVersions", api_versions_connection(channel))}
    if channel.sasl is not None:
        kinds["login"] = (f"connect{tls} + {channel.sasl.mechanism} login", sasl_login_connection(channel))
    rates = {}
    for kind, (what, connect) in kinds.items():
        rates[kind] = connections_per_second(connect, host, port, args.threads, args.connect_seconds)
        print(f"{cluster.mode:9s} connections: {rates[kind]:8.1f}/s ({what}, {args.threads} threads, broker 0)")
    return Measured(flat, paced, rates)


def table_rows(plain: Measured, secured: Measured, paced_rate: float) -> list[Row]:
    baseline = plain.rates["api_versions"]
    rows = [
        Row.measured(
            "produce RF 3 acks=all flat out over SASL_SSL (baseline: PLAINTEXT)",
            secured.flat.mb_s, "MB/s", plain.flat.mb_s, GOAL, True,
        ),
        Row.measured(
            "produce p99 latency flat out over SASL_SSL (baseline: PLAINTEXT)",
            secured.flat.percentile_ms(0.99), "ms", plain.flat.percentile_ms(0.99), GOAL, True,
        ),
    ]  # fmt: skip
    if plain.paced is not None and secured.paced is not None:
        rows.append(
            Row.measured(
                f"produce p99 latency paced at {paced_rate:.0f} records/s over SASL_SSL (baseline: PLAINTEXT)",
                secured.paced.percentile_ms(0.99),
                "ms",
                plain.paced.percentile_ms(0.99),
                GOAL,
                True,
            )  # fmt: skip
        )
    return [
        *rows,
        Row.measured(
            "TLS connections + ApiVersions, no login (baseline: PLAINTEXT connect + ApiVersions)",
            secured.rates["api_versions"], "conn/s", baseline, GOAL, True,
        ),
        Row.measured(
            "TLS connections + SCRAM-SHA-512 login (baseline: PLAINTEXT connect + ApiVersions)",
            secured.rates["login"], "conn/s", baseline, GOAL, True,
        ),
    ]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--duration", type=float, default=10.0, help="seconds of producing per cluster")
    parser.add_argument("--records", type=int, default=10_000_000, help="at most this many records per cluster")
    parser.add_argument("--record-bytes", type=int, default=1000)
    parser.add_argument("--partitions", type=int, default=3)
    parser.add_argument(
        "--paced-rate", type=float, default=10000.0, help="records/s of the paced run on both clusters (0: none)"
    )
    parser.add_argument("--paced-duration", type=float, default=5.0, help="seconds of the paced run")
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
        measured: dict[str, Measured] = {}
        for mode in ("plaintext", "sasl_ssl"):
            cluster = start_cluster(state, zookeeper.connect_string, mode, started, args.partitions)
            measured[mode] = measure(cluster, args)
            stop_cluster = started.pop()
            stop_cluster()  # one cluster at a time: the machine's cores go to the one measured
        rows = table_rows(measured["plaintext"], measured["sasl_ssl"], args.paced_rate)
    finally:
        stop_started(started)
    print(format_table(rows))
    if args.json is not None:
        write_rows(args.json, rows)


if __name__ == "__main__":
    run_program(main)
