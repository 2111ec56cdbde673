"""`kafkaops cluster demo`: the README's main job — what a CI script does to a cluster that grows.

A local 3-broker cluster gets topics and records; a fourth broker joins; a balanced plan is generated for
it, executed under a throttle and verified until complete (which clears the throttles); every replica is
checked to hold the same records; the preferred leaders are elected; the records read back as they were
sent. The admin tools speak the Admin API (`--bootstrap-server`), so the same steps run against Kafka 2.4 to
4.x. Each step runs the real `kafkaops` executable and prints the command as an operator types it, then the
tool's own output. Any step that fails stops the demo with exit code 1, as `set -e` stops a CI script;
whatever happens (Ctrl-C and SIGTERM included), the demo stops the processes it started.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer

from kafkaops.cli.common import ENV_CONFIG, ENV_STATE_DIR, ENV_ZOOKEEPER, state_dir
from kafkaops.cli.output import kafka_errors
from kafkaops.cluster.common.errors import UserError
from kafkaops.cluster.local.cluster import LocalCluster
from kafkaops.cluster.local.zookeeper import LocalZooKeeper

RACKS = {0: "rack-a", 1: "rack-b", 2: "rack-c"}
NEW_BROKER_RACK = "rack-d"
TOPICS = {"orders": (6, 3), "clicks": (3, 2)}  # name: (partitions, replication factor)
ORDERS = 2000
"""Keyed records sent to `orders` and read back, compared one by one."""
CLICKS = 5000
"""1 KiB records sent to `clicks`: enough bytes for the throttle to be seen at work."""
THROTTLE = 1_000_000
"""Bytes/s of `--execute --throttle`: the replicas moving to the new broker copy a few MB under it."""
SHOWN_LINES = 5
"""Of a long output (the records read back), the first lines printed; the rest is counted."""


class DemoStepFailed(UserError):
    """A step's tool exited non-zero: the demo stops there, as a CI script run with `set -e` does."""


@dataclass(frozen=True)
class Demo:
    """Where the steps run: the cluster's addresses, the environment and the directory of the JSON files."""

    cluster: LocalCluster
    env: dict[str, str]
    work_dir: Path
    bootstrap_server: str

    @property
    def target(self) -> list[str]:
        """The connection flags of every admin step: the Admin API of one broker, as against Kafka 3.x/4.x."""
        return ["--bootstrap-server", self.bootstrap_server]


def demo_command(
    state: Annotated[Path | None, typer.Option("--state-dir", help="Where the demo cluster keeps its data.")] = None,
    keep_running: Annotated[bool, typer.Option("--keep-running", help="Leave the cluster running afterwards.")] = False,
) -> None:
    """Start ZooKeeper and three brokers, then grow the cluster as a CI script does: add a broker, move
    partitions onto it under a throttle, verify, elect the preferred leaders, read the records back."""
    run_demo(state_dir(state) / "demo", keep_running)


@kafka_errors()
def run_demo(state: Path, keep_running: bool) -> None:
    cluster = LocalCluster(state)
    if cluster.config_file.exists():
        cluster.down()
    shutil.rmtree(state, ignore_errors=True)  # every demo starts from an empty cluster
    say(f"$ kafkaops cluster up --brokers 3   (state dir {state})")
    demo: Demo | None = None
    try:
        # inside the `try`: a Ctrl-C or SIGTERM while ZooKeeper and the brokers start stops them too
        status = cluster.up(brokers=3, racks=RACKS)
        work_dir = state / "ci"
        work_dir.mkdir()
        demo = Demo(cluster, tool_env(cluster), work_dir, status.bootstrap_servers.split(",")[0])
        walk_through(demo)
    finally:
        if demo is None:
            # --keep-running keeps a cluster that came up, not a half-started one nothing else would stop
            stop_started(cluster)
        elif not keep_running:
            step(demo, "cluster", "down", check=False)


def tool_env(cluster: LocalCluster) -> dict[str, str]:
    """The environment of every step: `cluster` commands find the demo's state dir; the admin tools get their
    cluster from the flags printed with them, whatever the caller's environment points at."""
    env = {**os.environ, ENV_STATE_DIR: str(cluster.state_dir)}
    env.pop(ENV_ZOOKEEPER, None)
    env.pop(ENV_CONFIG, None)
    return env


def stop_started(cluster: LocalCluster) -> None:
    """Stop what an unfinished `cluster.up` started: the brokers it recorded, then its ZooKeeper."""
    say("... stopping the processes the demo started")
    if cluster.config_file.exists():
        cluster.down()
    else:  # interrupted while ZooKeeper started, before any broker
        LocalZooKeeper.from_state_dir(cluster.state_dir).stop()


def walk_through(demo: Demo) -> None:
    step(demo, "cluster", "status")
    sent = create_topics_with_data(demo)
    grow_and_rebalance(demo)
    step(demo, "replica-verification", "--broker-list", demo.bootstrap_server, "--time", "-2", "--once")
    step(
        demo,
        "leader-election",
        *demo.target,
        "--election-type",
        "preferred",
        "--all-topic-partitions",
    )
    step(demo, "topics", *demo.target, "--describe", "--topic", "orders")
    read_back(demo, sent)


def create_topics_with_data(demo: Demo) -> list[str]:
    """The topics, `orders`' keyed records (returned, as the consumer prints them) and `clicks`' bulk."""
    for topic, (partitions, replication_factor) in TOPICS.items():
        step(
            demo,
            "topics",
            *demo.target,
            "--create",
            "--topic",
            topic,
            "--partitions",
            str(partitions),
            "--replication-factor",
            str(replication_factor),
        )
    records = [(f"order-{i}", f"amount={i * 10}") for i in range(ORDERS)]
    step(
        demo,
        "console-producer",
        "--bootstrap-server",
        demo.bootstrap_server,
        "--topic",
        "orders",
        "--request-required-acks",
        "all",
        "--property",
        "parse.key=true",
        "--property",
        "key.separator=:",
        stdin="".join(f"{key}:{value}\n" for key, value in records),
    )
    step(
        demo,
        "producer-perf-test",
        "--topic",
        "clicks",
        "--num-records",
        str(CLICKS),
        "--record-size",
        "1024",
        "--throughput",
        "-1",
        "--producer-props",
        f"bootstrap.servers={demo.bootstrap_server}",
        "acks=all",
    )
    return [f"{key}\t{value}" for key, value in records]


def grow_and_rebalance(demo: Demo) -> None:
    """Kafka's "Expanding your cluster": a new broker, a balanced plan onto it, executed under a throttle and
    verified until complete."""
    step(demo, "cluster", "add-broker", "--rack", NEW_BROKER_RACK)
    topics_to_move = {"topics": [{"topic": topic} for topic in TOPICS], "version": 1}
    show_file(demo, "topics-to-move.json", json.dumps(topics_to_move))
    generated = step(
        demo,
        "reassign-partitions",
        *demo.target,
        "--topics-to-move-json-file",
        "topics-to-move.json",
        "--broker-list",
        "0,1,2,3",
        "--generate",
    )
    # Kafka's --generate prints the current assignment, then the proposal: a CI script keeps both
    documents = [line for line in generated.stdout.splitlines() if line.startswith("{")]
    (demo.work_dir / "rollback.json").write_text(documents[0] + "\n")
    (demo.work_dir / "plan.json").write_text(documents[-1] + "\n")
    say("# the proposed assignment saved as plan.json, the current one as rollback.json\n")
    step(
        demo,
        "reassign-partitions",
        *demo.target,
        "--reassignment-json-file",
        "plan.json",
        "--execute",
        "--throttle",
        str(THROTTLE),
    )
    step(
        demo,
        "reassign-partitions",
        *demo.target,
        "--reassignment-json-file",
        "plan.json",
        "--verify",
        "--wait",
    )


def read_back(demo: Demo, sent: list[str]) -> None:
    """Every record of `orders`, read back through the new leaders and replicas, is compared with what was
    sent (as a multiset: the order is per partition)."""
    consumed = step(
        demo,
        "console-consumer",
        "--bootstrap-server",
        demo.bootstrap_server,
        "--topic",
        "orders",
        "--from-beginning",
        "--max-messages",
        str(len(sent)),
        "--property",
        "print.key=true",
        shown=SHOWN_LINES,
    )
    received = Counter(consumed.stdout.splitlines())
    missing = Counter(sent) - received
    unexpected = received - Counter(sent)
    if missing or unexpected:
        raise DemoStepFailed(
            f"The records read back differ from those sent: {sum(missing.values())} missing "
            f"(e.g. {', '.join(sorted(missing)[:3]) or '-'}), {sum(unexpected.values())} unexpected "
            f"(e.g. {', '.join(sorted(unexpected)[:3]) or '-'})"
        )
    say(f"# all {len(sent)} records read back intact: every key and value as sent\n")


def show_file(demo: Demo, name: str, text: str) -> None:
    """Write a file the next steps read, shown as `cat` shows it."""
    (demo.work_dir / name).write_text(text + "\n")
    say(f"$ cat {name}\n{text}\n")


def step(
    demo: Demo, *args: str, stdin: str | None = None, check: bool = True, shown: int | None = None
) -> subprocess.CompletedProcess[str]:
    """Run `kafkaops *args` as an operator would, in the demo's work dir; print the command and its output
    (of stdout, the first `shown` lines only). Raises DemoStepFailed if the tool fails and `check`."""
    say("$ kafkaops " + shlex.join(args) + (f"   ({stdin.count(chr(10))} lines on stdin)" if stdin else ""))
    completed = subprocess.run(
        [sys.executable, "-m", "kafkaops.cli", *args],
        env=demo.env,
        cwd=demo.work_dir,
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
    )
    lines = completed.stdout.splitlines(keepends=True)
    sys.stdout.writelines(lines if shown is None else lines[:shown])
    if shown is not None and len(lines) > shown:
        say(f"... ({len(lines) - shown} more lines)")
    sys.stdout.write(completed.stderr)
    if completed.returncode:
        say(f"(exit code {completed.returncode})")
    sys.stdout.write("\n")
    sys.stdout.flush()
    if check and completed.returncode:
        raise DemoStepFailed(f"The demo stopped: `kafkaops {shlex.join(args)}` exited with {completed.returncode}")
    return completed


def say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()
