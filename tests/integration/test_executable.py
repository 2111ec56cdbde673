"""The installed `kafkaops` executable, run as a CI script would run it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kafkaops.cluster.local.cluster import LocalCluster
from kafkaops.cluster.local.zookeeper import LocalZooKeeper, free_port

KAFKAOPS = str(Path(sys.executable).parent / "kafkaops")


def run(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([KAFKAOPS, *args], env=env, capture_output=True, text=True, timeout=240, check=False)


def test_topics_and_configs_from_a_script(brokers, cli_env):
    brokers([0, 1])
    created = run("topics", "--create", "--topic", "ci", "--partitions", "2", "--replication-factor", "2", env=cli_env)
    assert (created.returncode, created.stdout, created.stderr) == (0, "Created topic ci.\n", "")
    altered = run("configs", "--alter", "--topic", "ci", "--add-config", "retention.ms=1", env=cli_env)
    assert altered.stdout == "Completed updating config for entity: topic 'ci'.\n"
    described = json.loads(run("topics", "--describe", "--topic", "ci", "--output", "json", env=cli_env).stdout)
    assert described[0]["configs"] == {"retention.ms": "1"}
    again = run("topics", "--create", "--topic", "ci", "--partitions", "2", "--replication-factor", "2", env=cli_env)
    assert again.returncode == 1
    assert again.stderr == "Error while executing topic command : Topic 'ci' already exists.\n"


def test_bad_flags_exit_1(cli_env):
    for args in (["topics", "--no-such-flag"], ["topics", "--create", "--partitions", "abc"], ["nosuchcommand"]):
        result = run(*args, env=cli_env)
        assert result.returncode == 1, args
        assert "Traceback" not in result.stderr


def test_local_zookeeper_lifecycle(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    state = ["--state-dir", str(tmp_path / "state")]
    port = free_port()
    server = LocalZooKeeper(tmp_path / "state", port)
    try:
        started = run("cluster", "zookeeper", "start", *state, "--port", str(port), env=env)
        assert started.returncode == 0, started.stderr
        assert started.stdout.startswith(f"Started ZooKeeper at 127.0.0.1:{port} (pid ")
        again = run("cluster", "zookeeper", "start", *state, env=env)
        assert again.stdout.startswith(f"Already running: ZooKeeper at 127.0.0.1:{port}")
        status = run("cluster", "zookeeper", "status", *state, env=env)
        assert status.returncode == 0 and "Mode: standalone" in status.stdout
        listed = run("topics", "--list", env={**env, "KAFKAOPS_STATE_DIR": str(tmp_path / "state")})
        assert (listed.returncode, listed.stdout) == (0, "")
        stopped = run("cluster", "zookeeper", "stop", *state, env=env)
        assert stopped.stdout == f"Stopped ZooKeeper at 127.0.0.1:{port}\n"
        assert run("cluster", "zookeeper", "status", *state, env=env).returncode == 1
    finally:
        server.stop()


@pytest.mark.slow  # starts three broker processes
def test_demo_runs_end_to_end(tmp_path):
    """The README's main job: a 3-broker cluster, records produced with acks=all, a broker killed and back
    (the records still readable), configs, deletion."""
    demo = run("cluster", "demo", "--state-dir", str(tmp_path / "state"), env={"PATH": "/usr/bin:/bin"})
    assert demo.returncode == 0, demo.stderr
    for expected in (
        "Created topic orders.",
        "Broker 1 stopped",
        "records sent,",
        "Processed a total of 3 messages",
        "... done in",
        "Broker 1 running (pid ",
        "Completed updating config for entity: default brokers.",
        "Topic payments is marked for deletion.",
        "Cluster stopped",
    ):
        assert expected in demo.stdout
    assert "still not done" not in demo.stdout
    local = LocalCluster(tmp_path / "state" / "demo")
    assert all(local.broker_pid(b) is None for b in (0, 1, 2))
    assert LocalZooKeeper.from_state_dir(tmp_path / "state" / "demo").pid() is None
