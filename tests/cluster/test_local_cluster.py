"""The `kafkaops cluster` commands and the broker's start-up rules, as an operator runs them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

from kafkaops.cluster.local.cluster import LocalCluster

KAFKAOPS = str(Path(sys.executable).parent / "kafkaops")


def run(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([KAFKAOPS, *args], env=env, capture_output=True, text=True, timeout=120, check=False)


def test_cluster_commands(zk_connect, tmp_path):
    env = {"PATH": "/usr/bin:/bin", "KAFKAOPS_STATE_DIR": str(tmp_path / "state")}
    local = LocalCluster(tmp_path / "state")
    try:
        up = run("cluster", "up", "--brokers", "2", "--zookeeper", zk_connect, env=env)
        assert up.returncode == 0, up.stderr
        assert "Controller: broker " in up.stdout and "(epoch 1)" in up.stdout
        killed = run("cluster", "stop-broker", "1", "--hard", env=env)
        assert killed.stdout == "Broker 1 stopped\n"
        # restarting at once: the new process waits for the dead session's registration to expire
        again = run("cluster", "start-broker", "1", env=env)
        assert again.returncode == 0, again.stderr
        status = run("cluster", "status", env=env)
        assert "Broker 1: registered, pid " in status.stdout
        down = run("cluster", "down", env=env)
        assert down.stdout == "Cluster stopped\n"
        assert all(local.broker_pid(b) is None for b in (0, 1))
    finally:
        for broker_id in (0, 1):
            local.stop_broker(broker_id, hard=True)


def test_broker_refuses_a_taken_id_and_bad_config(cluster, tmp_path):
    local = cluster(brokers=1)
    config = yaml.safe_load((local.broker_dir(0) / "broker.yaml").read_text())
    config["listeners"] = "PLAINTEXT://127.0.0.1:0"
    config["log.dirs"] = str(tmp_path / "other-data")
    config["zookeeper.session.timeout.ms"] = 2000
    duplicate = tmp_path / "duplicate.yaml"
    duplicate.write_text(yaml.safe_dump(config))
    result = subprocess.run(
        [KAFKAOPS, "cluster", "broker", "--config", str(duplicate)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 1
    assert "Error while creating ephemeral at /brokers/ids/0, node already exists and owner" in result.stderr
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({**config, "num.partitions": "many", "no.such.property": 1}))
    result = subprocess.run(
        [KAFKAOPS, "cluster", "broker", "--config", str(bad)], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "num.partitions" in result.stderr or "no.such.property" in result.stderr
