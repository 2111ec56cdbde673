"""`kafkaops cluster demo`: the README's main job — a local cluster and a walk through the tools.

Each step runs the real `kafkaops` executable against the local ZooKeeper and prints the command
and its output, exactly as an operator would see them.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Annotated

import typer

from kafkaops.cli.common import state_dir
from kafkaops.cli.output import kafka_errors
from kafkaops.cluster.local.standin import register_standin_brokers
from kafkaops.cluster.local.zookeeper import LocalZooKeeper, four_letter_word, free_port
from kafkaops.cluster.zk.client import KafkaZkClient

CHROOT = "/kafkaops-demo"
RACKS = {0: "rack-a", 1: "rack-b", 2: "rack-c"}

STEPS: list[list[str]] = [
    ["topics", "--create", "--topic", "orders", "--partitions", "6", "--replication-factor", "3"],
    [
        "topics",
        "--create",
        "--topic",
        "payments",
        "--replica-assignment",
        "0:1,1:2,2:0",
        "--config",
        "retention.ms=86400000",
    ],
    ["topics", "--create", "--topic", "bad topic!", "--partitions", "1", "--replication-factor", "1"],
    ["topics", "--create", "--topic", "orders", "--partitions", "1", "--replication-factor", "4"],
    ["topics", "--list"],
    ["topics", "--describe", "--topic", "orders|payments"],
    ["topics", "--alter", "--topic", "orders", "--partitions", "8"],
    ["configs", "--alter", "--topic", "orders", "--add-config", "retention.ms=3600000,cleanup.policy=[compact,delete]"],
    [
        "configs",
        "--alter",
        "--entity-type",
        "brokers",
        "--entity-default",
        "--add-config",
        "follower.replication.throttled.rate=10485760",
    ],
    ["configs", "--describe", "--entity-type", "topics"],
    ["configs", "--describe", "--entity-type", "brokers"],
    ["topics", "--describe", "--topics-with-overrides"],
    ["topics", "--delete", "--topic", "payments"],
    ["topics", "--list", "--output", "json"],
]


def demo_command(
    state: Annotated[Path | None, typer.Option("--state-dir", help="Where the local ZooKeeper keeps its data.")] = None,
    keep_running: Annotated[bool, typer.Option("--keep-running", help="Leave ZooKeeper running afterwards.")] = False,
) -> None:
    """Start a local ZooKeeper, register three brokers and walk through topics and configs."""
    run_demo(state_dir(state), keep_running)


@kafka_errors()
def run_demo(state: Path, keep_running: bool) -> None:
    zk_server = LocalZooKeeper.from_state_dir(state)
    if zk_server.pid() is None and four_letter_word(zk_server.host, zk_server.port, "ruok", 0.5) is not None:
        zk_server.port = free_port()  # someone else's ZooKeeper holds the port
    started = zk_server.start()
    say(
        f"ZooKeeper {'started' if started else 'already running'} at {zk_server.connect_string} (data: {zk_server.home})"
    )
    connect = zk_server.connect_string + CHROOT
    try:
        with KafkaZkClient(zk_server.connect_string) as root:
            root.kazoo.delete(CHROOT, recursive=True)  # start every demo from an empty chroot
        with KafkaZkClient(connect) as brokers_session:
            # Stand-in registrations (ephemeral, Kafka 2.8's JSON) until the Python brokers land.
            register_standin_brokers(brokers_session, list(RACKS), RACKS)
            say(f"Registered brokers {', '.join(map(str, RACKS))} in racks {', '.join(RACKS.values())} under {connect}")
            env = {**os.environ, "KAFKAOPS_ZOOKEEPER": connect}
            for step in STEPS:
                say("$ kafkaops " + shlex.join(step))
                completed = subprocess.run(
                    [sys.executable, "-m", "kafkaops.cli", *step], env=env, capture_output=True, text=True, check=False
                )
                sys.stdout.write(completed.stdout)
                sys.stdout.write(completed.stderr)
                if completed.returncode:
                    say(f"(exit code {completed.returncode})")
                sys.stdout.write("\n")
    finally:
        if not keep_running and started:
            zk_server.stop()
            say(f"ZooKeeper stopped (start it with: kafkaops cluster zookeeper start --port {zk_server.port})")


def say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()
