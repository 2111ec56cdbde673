"""Benchmark: the brokers' Admin API against the `--zookeeper` path, same run, same local cluster.

1. create: N topics x P partitions through CreateTopics over the wire (our `KafkaClient.controller_request`,
   `--batch` topics per request as an admin client batches them; the controller answers once every new
   partition has a leader in its metadata cache), and N other topics through the admin library writing
   znodes as `kafkaops topics --create --zookeeper` does (one call per topic), then until every one of
   their partitions has a leader in ZooKeeper (what CreateTopics waits for, in effect). Topics/s each way
   and the ratio.
2. describe: DescribeConfigs of the N wire topics in one request to a broker (every config with its
   source, as Kafka answers) against the admin library reading the same N topics' config znodes as
   `kafkaops configs --describe --zookeeper` does (one call per topic). Topics/s each way and the ratio.

Usage: .venv/bin/python bench/admin_api.py [--topics 1000] [--partitions 10] [--replication-factor 1]
       [--batch 1000] [--brokers 3]
Starts its own ZooKeeper and brokers under a temporary directory and stops them at the end.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from kafkaops.admin import configs as admin_configs
from kafkaops.admin import topics as admin_topics
from kafkaops.admin.kafka_client.client import KafkaClient
from kafkaops.cluster.local.cluster import LocalCluster
from kafkaops.cluster.local.processes import raise_open_files_limit
from kafkaops.cluster.local.signals import stop_started
from kafkaops.cluster.local.zookeeper import LocalZooKeeper, free_port
from kafkaops.cluster.protocol.schemas import ApiKey
from kafkaops.cluster.zk import znodes
from kafkaops.cluster.zk.client import KafkaZkClient
from kafkaops.cluster.zk.values import TopicPartition

OVERRIDES = {
    "auto.leader.rebalance.enable": False,
    # a shared 2-core machine: a busy broker must not lose its session
    "zookeeper.session.timeout.ms": 30000,
}
TOPIC_RESOURCE = 2


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def wait(condition: Callable[[], bool], timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        time.sleep(0.1)


def all_led(zk: KafkaZkClient, names: Sequence[str], partitions: int) -> bool:
    tps = [TopicPartition(t, p) for t in names for p in range(partitions)]
    states = zk.get_partition_states(tps)
    return all(states.get(tp) is not None and states[tp].leader_and_isr.leader >= 0 for tp in tps)  # type: ignore[union-attr]


def create_over_the_wire(client: KafkaClient, names: Sequence[str], args: argparse.Namespace) -> float:
    start = time.perf_counter()
    for i in range(0, len(names), args.batch):
        batch = names[i : i + args.batch]
        body = {
            "topics": [
                {
                    "name": name,
                    "num_partitions": args.partitions,
                    "replication_factor": args.replication_factor,
                    "assignments": [],
                    "configs": [],
                }
                for name in batch
            ],
            "timeout_ms": int(args.timeout * 1000),
            "validate_only": False,
        }
        _, answer = client.controller_request(ApiKey.CREATE_TOPICS, body, extra_timeout_ms=int(args.timeout * 1000))
        failed = [t for t in answer["topics"] if t["error_code"] != 0]
        if failed:
            raise RuntimeError(f"CreateTopics failed for {len(failed)} topics, first: {failed[0]}")
    return time.perf_counter() - start


def create_through_zookeeper(zk: KafkaZkClient, names: Sequence[str], args: argparse.Namespace) -> tuple[float, float]:
    start = time.perf_counter()
    for name in names:
        admin_topics.create_topic(zk, name, args.partitions, args.replication_factor, None, {})
    written = time.perf_counter() - start
    wait(lambda: all_led(zk, names, args.partitions), args.timeout, "the --zookeeper topics' leaders")
    return written, time.perf_counter() - start


def describe_over_the_wire(client: KafkaClient, broker_id: int, names: Sequence[str]) -> float:
    body = {
        "resources": [
            {"resource_type": TOPIC_RESOURCE, "resource_name": name, "configuration_keys": None} for name in names
        ],
        "include_synonyms": False,
        "include_documentation": False,
    }
    start = time.perf_counter()
    _, answer = client.broker_request(broker_id, ApiKey.DESCRIBE_CONFIGS, body)
    elapsed = time.perf_counter() - start
    bad = [r for r in answer["results"] if r["error_code"] != 0]
    if bad or len(answer["results"]) != len(names):
        raise RuntimeError(f"DescribeConfigs failed: {bad[:1]}")
    return elapsed


def describe_through_zookeeper(zk: KafkaZkClient, names: Sequence[str]) -> float:
    start = time.perf_counter()
    for name in names:
        admin_configs.describe_configs(zk, admin_configs.ConfigEntity(znodes.ConfigType.TOPIC, name))
    return time.perf_counter() - start


def run(args: argparse.Namespace, state: Path, started: list[Callable[[], None]]) -> None:
    print(f"load average at start: {load()}  ({os.cpu_count()} CPUs)", flush=True)
    raise_open_files_limit(200_000)
    zookeeper = LocalZooKeeper(state / "zk", free_port(), heap_mb=1024)
    zookeeper.start()
    started.append(lambda: zookeeper.stop(hard=True))
    cluster = LocalCluster(state / "cluster")

    def kill_brokers() -> None:
        for broker_id in cluster.broker_ids():
            with contextlib.suppress(Exception):
                cluster.stop_broker(broker_id, hard=True)

    started.append(kill_brokers)
    cluster.up(brokers=args.brokers, zookeeper_connect=zookeeper.connect_string, broker_overrides=OVERRIDES)
    bootstrap = ",".join(b.endpoint.removeprefix("PLAINTEXT://") for b in cluster.status().brokers if b.endpoint)
    wire = [f"wire-{i:05d}" for i in range(args.topics)]
    zk_names = [f"zk-{i:05d}" for i in range(args.topics)]
    timeout_ms = int(args.timeout * 1000)
    with KafkaZkClient(zookeeper.connect_string) as zk, KafkaClient(bootstrap, request_timeout_ms=timeout_ms) as client:
        wait(lambda: zk.get_controller_id() is not None, 60, "a controller")
        wire_s = create_over_the_wire(client, wire, args)
        written_s, led_s = create_through_zookeeper(zk, zk_names, args)
        describe_wire = [describe_over_the_wire(client, 0, wire) for _ in range(3)]
        describe_zk = [describe_through_zookeeper(zk, wire) for _ in range(3)]
    n = args.topics
    print(
        f"topics={n} partitions/topic={args.partitions} replication-factor={args.replication_factor} "
        f"brokers={args.brokers} batch={args.batch}  (load average now {load()})"
    )
    print(
        f"create    CreateTopics {n / wire_s:8.1f} topics/s ({wire_s:6.2f} s, answered once led)   "
        f"--zookeeper {n / written_s:8.1f} topics/s written ({written_s:6.2f} s), "
        f"{n / led_s:8.1f} topics/s until led ({led_s:6.2f} s)   "
        f"topics/s ratio wire:zk {led_s / wire_s:5.2f} (until led), {written_s / wire_s:5.2f} (written)"
    )
    best_wire, best_zk = min(describe_wire), min(describe_zk)
    print(
        f"describe  DescribeConfigs {n / best_wire:8.1f} topics/s ({best_wire:6.3f} s, one request, "
        f"every config with its source)   --zookeeper {n / best_zk:8.1f} topics/s ({best_zk:6.3f} s, overrides "
        f"only)   topics/s ratio wire:zk {best_zk / best_wire:5.2f}  (best of 3)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--topics", type=int, default=1000)
    parser.add_argument("--partitions", type=int, default=10)
    parser.add_argument("--replication-factor", type=int, default=1)
    parser.add_argument("--batch", type=int, default=1000, help="topics per CreateTopics request")
    parser.add_argument("--brokers", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds a creation may take")
    parser.add_argument("--state-dir", type=Path, help="keep the cluster's directories here (default: temporary)")
    args = parser.parse_args()
    if min(args.topics, args.partitions, args.replication_factor, args.batch, args.brokers) < 1:
        parser.error("sizes must be positive")
    if args.replication_factor > args.brokers:
        parser.error("--replication-factor cannot exceed --brokers")
    state = args.state_dir or Path(tempfile.mkdtemp(prefix="bench-admin-api-"))
    state.mkdir(parents=True, exist_ok=True)
    started: list[Callable[[], None]] = []
    try:
        run(args, state, started)
    finally:
        stop_started(started)
        if args.state_dir is None:
            shutil.rmtree(state, ignore_errors=True)


if __name__ == "__main__":
    from kafkaops.cluster.local.signals import run_program  # Ctrl-C stops it, even inherited ignored

    run_program(main)
