"""Every long-running command stops on Ctrl-C whatever signal dispositions it inherited.

Each is started with SIGINT ignored, as a background job of a non-interactive shell, `nohup` or a CI runner
starts it, then sent SIGINT: it must exit 130 (Kafka's code) without a traceback, having closed what it
opened. `kafkaops` installs its handlers in `main()`; the chaos runner's own test does the same for it.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

from kafkaops.admin import topics as admin_topics
from kafkaops.admin.assignment import JavaRandom
from kafkaops.cluster.local.cluster import LocalCluster
from kafkaops.cluster.zk.client import KafkaZkClient
from tests.cluster.clients_util import all_bootstraps, wait_partitions
from tests.conftest import start_with_sigint_ignored

KAFKAOPS = str(Path(sys.executable).parent / "kafkaops")


def interrupt(process: subprocess.Popen[str]) -> tuple[str, str]:
    """Wait for the process's first line on stdout (it is running: `main()` has installed its handlers),
    send SIGINT, and return its stdout and stderr once it has exited (30 s at most)."""
    assert process.stdout is not None
    first = process.stdout.readline()
    process.send_signal(signal.SIGINT)
    try:
        out, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    return first + out, err


def test_verify_wait_stops_on_sigint(zk: KafkaZkClient, brokers, cli_env: dict[str, str], tmp_path: Path) -> None:
    brokers([0, 1, 2])
    admin_topics.create_topic(zk, "moving", None, None, {0: [0, 1]}, {})
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [{"topic": "moving", "partition": 0, "replicas": [1, 2]}]}))
    executed = subprocess.run(
        [KAFKAOPS, "reassign-partitions", "--execute", "--reassignment-json-file", str(plan)],
        env=cli_env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert executed.returncode == 0, executed.stderr
    # no controller runs on the stand-in brokers: the reassignment stays in progress, --wait waits
    waiting = start_with_sigint_ignored(
        [KAFKAOPS, "reassign-partitions", "--verify", "--wait", "--reassignment-json-file", str(plan)],
        env=cli_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    out, err = interrupt(waiting)
    assert waiting.returncode == 130, f"exit {waiting.returncode}: {err}"
    assert "Traceback" not in err, err
    assert "moving-0" in out, out
    assert zk.exists("/admin/reassign_partitions"), "Ctrl-C of --verify must leave the reassignment running"


def test_console_consumer_and_replica_verification_stop_on_sigint(cluster, zk: KafkaZkClient) -> None:
    local: LocalCluster = cluster(brokers=2)
    admin_topics.create_topic(zk, "quiet", 1, 2, None, {}, rng=JavaRandom(1))
    wait_partitions(zk, "quiet", 1, isr_size=2)
    servers = all_bootstraps(local)

    # reads the one record there is, then waits for more
    produced = subprocess.run(
        [KAFKAOPS, "console-producer", "--bootstrap-server", servers, "--topic", "quiet"],
        input="only\n",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert produced.returncode == 0, produced.stderr
    consumer = start_with_sigint_ignored(
        [KAFKAOPS, "console-consumer", "--bootstrap-server", servers, "--topic", "quiet", "--from-beginning"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    out, err = interrupt(consumer)
    assert consumer.returncode == 130, f"exit {consumer.returncode}: {err}"
    assert "Traceback" not in err, err
    assert (out, err) == ("only\n", "Processed a total of 1 messages\n")

    verification = start_with_sigint_ignored(
        [KAFKAOPS, "replica-verification", "--broker-list", servers, "--topic-white-list", "quiet"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    out, err = interrupt(verification)
    assert verification.returncode == 130, f"exit {verification.returncode}: {err}"
    assert "Traceback" not in err, err
    assert out.endswith("verification process is started.\n"), out
