"""`kafkaops cluster demo`: the README's main job — a local 3-broker cluster and a walk through the tools.

Each step runs the real `kafkaops` executable and prints the command and its output, exactly as an
operator would see them: topics coming online, a broker killed and its leaderships moving, the
broker's return, configs, deletion.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from kafkaops.cli.common import state_dir
from kafkaops.cli.output import kafka_errors
from kafkaops.cluster.local.cluster import LocalCluster
from kafkaops.cluster.local.zookeeper import LocalZooKeeper
from kafkaops.cluster.zk.client import KafkaZkClient
from kafkaops.cluster.zk.values import TopicPartition

RACKS = {0: "rack-a", 1: "rack-b", 2: "rack-c"}
BROKER_OVERRIDES = {"zookeeper.session.timeout.ms": 6000, "controlled.shutdown.retry.backoff.ms": 500}


DEMO_RECORDS = 1000


def demo_command(
    state: Annotated[Path | None, typer.Option("--state-dir", help="Where the demo cluster keeps its data.")] = None,
    keep_running: Annotated[bool, typer.Option("--keep-running", help="Leave the cluster running afterwards.")] = False,
) -> None:
    """Start ZooKeeper and three brokers, then walk through topics, failures and configs."""
    run_demo(state_dir(state) / "demo", keep_running)


@kafka_errors()
def run_demo(state: Path, keep_running: bool) -> None:
    cluster = LocalCluster(state)
    if cluster.config_file.exists():
        cluster.down()
    shutil.rmtree(state, ignore_errors=True)  # every demo starts from an empty cluster
    say(f"$ kafkaops cluster up --brokers 3   (state dir {state})")
    env: dict[str, str] | None = None
    try:
        # inside the `try`: a Ctrl-C or SIGTERM while ZooKeeper and the brokers start stops them too
        cluster.up(brokers=3, broker_overrides=BROKER_OVERRIDES, racks=RACKS)
        env = tool_env(cluster)
        walk_through(cluster, env)
    finally:
        if env is None:
            # --keep-running keeps a cluster that came up, not a half-started one nothing else would stop
            stop_started(cluster)
        elif not keep_running:
            step(env, "cluster", "down")


def tool_env(cluster: LocalCluster) -> dict[str, str]:
    """The environment of every step: the demo's cluster, whatever the caller's config points at."""
    env = {**os.environ, "KAFKAOPS_STATE_DIR": str(cluster.state_dir), "KAFKAOPS_ZOOKEEPER": cluster.zookeeper_connect}
    env.pop("KAFKAOPS_CONFIG", None)
    return env


def stop_started(cluster: LocalCluster) -> None:
    """Stop what an unfinished `cluster.up` started: the brokers it recorded, then its ZooKeeper."""
    say("... stopping the processes the demo started")
    if cluster.config_file.exists():
        cluster.down()
    else:  # interrupted while ZooKeeper started, before any broker
        LocalZooKeeper.from_state_dir(cluster.state_dir).stop()


def walk_through(cluster: LocalCluster, env: dict[str, str]) -> None:
    with KafkaZkClient(cluster.zookeeper_connect) as zk:
        create_topics(env, zk)
        bootstrap = ",".join(b.endpoint.removeprefix("PLAINTEXT://") for b in cluster.status().brokers if b.endpoint)
        produce(env, bootstrap)
        fail_broker(env, zk, bootstrap)
        restart_broker(env, zk)
        alter_configs_and_delete(env, zk, cluster)


def online(zk: KafkaZkClient, topic: str, partitions: int, without: int | None = None) -> bool:
    found = zk.get_partition_states(TopicPartition(topic, p) for p in range(partitions))
    return all(s is not None and s.leader_and_isr.leader not in (-1, without) for s in found.values())


def create_topics(env: dict[str, str], zk: KafkaZkClient) -> None:
    step(env, "cluster", "status")
    step(env, "topics", "--create", "--topic", "orders", "--partitions", "6", "--replication-factor", "3")
    step(
        env,
        "topics",
        "--create",
        "--topic",
        "payments",
        "--replica-assignment",
        "0:1,1:2,2:0",
        "--config",
        "retention.ms=86400000",
    )
    step(env, "topics", "--create", "--topic", "bad topic!", "--partitions", "1", "--replication-factor", "1")
    step(env, "topics", "--create", "--topic", "orders", "--partitions", "1", "--replication-factor", "4")
    wait(lambda: online(zk, "orders", 6) and online(zk, "payments", 3), "the controller brings the partitions online")
    step(env, "topics", "--describe")


def produce(env: dict[str, str], bootstrap: str) -> None:
    # Real records, replicated to the ISR before they are acknowledged (acks=all).
    step(
        env,
        "console-producer",
        "--bootstrap-server",
        bootstrap,
        "--topic",
        "orders",
        "--request-required-acks",
        "all",
        "--property",
        "parse.key=true",
        "--property",
        "key.separator=:",
        stdin="".join(f"order-{i}:amount={i * 10}\n" for i in range(DEMO_RECORDS)),
    )
    step(
        env,
        "producer-perf-test",
        "--topic",
        "orders",
        "--num-records",
        "20000",
        "--record-size",
        "1024",
        "--throughput",
        "-1",
        "--producer-props",
        f"bootstrap.servers={bootstrap}",
        "acks=all",
    )


def fail_broker(env: dict[str, str], zk: KafkaZkClient, bootstrap: str) -> None:
    step(env, "cluster", "stop-broker", "1", "--hard")
    wait(
        lambda: online(zk, "orders", 6, without=1) and online(zk, "payments", 3, without=1),
        "broker 1's session expires; the controller moves its leaderships to in-sync replicas",
        30,
    )
    step(env, "topics", "--describe", "--topic", "orders")
    step(env, "topics", "--describe", "--under-replicated-partitions")
    # Every acknowledged record is still there, served by the new leaders.
    step(
        env,
        "console-consumer",
        "--bootstrap-server",
        bootstrap,
        "--topic",
        "orders",
        "--partition",
        "0",
        "--from-beginning",
        "--max-messages",
        "3",
        "--property",
        "print.key=true",
        "--property",
        "print.offset=true",
    )


def restart_broker(env: dict[str, str], zk: KafkaZkClient) -> None:
    step(env, "cluster", "start-broker", "1")
    step(env, "cluster", "status")
    wait(
        lambda: all(
            s is not None and len(s.leader_and_isr.isr) == 3
            for s in zk.get_partition_states(TopicPartition("orders", p) for p in range(6)).values()
        ),
        "broker 1 truncates to the new leaders' logs, catches up and rejoins every ISR",
        60,
    )
    step(env, "topics", "--describe", "--under-replicated-partitions")


def alter_configs_and_delete(env: dict[str, str], zk: KafkaZkClient, cluster: LocalCluster) -> None:
    step(
        env,
        "configs",
        "--alter",
        "--topic",
        "orders",
        "--add-config",
        "retention.ms=3600000,cleanup.policy=[compact,delete]",
    )
    step(
        env,
        "configs",
        "--alter",
        "--entity-type",
        "brokers",
        "--entity-default",
        "--add-config",
        "follower.replication.throttled.rate=10485760",
    )
    step(env, "configs", "--describe", "--entity-type", "topics")
    step(env, "topics", "--describe", "--topics-with-overrides")
    step(env, "topics", "--delete", "--topic", "payments")
    wait(lambda: not zk.exists("/brokers/topics/payments"), "the controller deletes the topic's replicas")
    step(env, "topics", "--list", "--output", "json")
    # every broker wrote state-change.log in Kafka's words: one timeline for one partition
    logs = ",".join(str(cluster.broker_dir(b) / "logs" / "state-change.log") for b in sorted(RACKS))
    step(
        env,
        "state-change-log-merger",
        "--logs",
        logs,
        "--topic",
        "orders",
        "--partitions",
        "0",
        "--level",
        "INFO",
    )


def step(env: dict[str, str], *args: str, stdin: str | None = None) -> None:
    say("$ kafkaops " + shlex.join(args) + (f"   ({stdin.count(chr(10))} lines on stdin)" if stdin else ""))
    completed = subprocess.run(
        [sys.executable, "-m", "kafkaops.cli", *args],
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
    )
    sys.stdout.write(completed.stdout)
    sys.stdout.write(completed.stderr)
    if completed.returncode:
        say(f"(exit code {completed.returncode})")
    sys.stdout.write("\n")


def wait(condition: Callable[[], bool], what: str, timeout_s: float = 20.0) -> None:
    say(f"... waiting: {what}")
    started = time.monotonic()
    while not condition():
        if time.monotonic() - started > timeout_s:
            say(f"... still not done after {timeout_s:.0f}s")
            return
        time.sleep(0.2)
    say(f"... done in {time.monotonic() - started:.1f}s\n")


def say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()
