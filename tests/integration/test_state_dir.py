"""The tools find a local cluster through its state dir (`--state-dir`, `$KAFKAOPS_STATE_DIR`), and say at once
when there is none, instead of waiting out a connection time-out. A real ZooKeeper, no brokers: a "running
broker" of a state dir is a broker.yaml with the pid of a live process (this test's)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from kafkaops.admin import topics as admin_topics
from kafkaops.cli.common import find_bootstrap_server, find_zookeeper, resolve_bootstrap_server, resolve_zookeeper
from kafkaops.cluster.common.errors import UserError
from kafkaops.cluster.local.zookeeper import free_port

# nothing from the caller's environment: no ZooKeeper, config file or state dir of theirs
NO_ENV = {"KAFKAOPS_ZOOKEEPER": None, "KAFKAOPS_CONFIG": None}


def write_cluster(state: Path, zookeeper_connect: str, brokers: dict[int, int] | None = None) -> Path:
    """A state dir as `cluster up` leaves it: cluster.yaml, and per broker its broker.yaml (and broker.pid)."""
    state.mkdir(parents=True, exist_ok=True)
    (state / "cluster.yaml").write_text(yaml.safe_dump({"zookeeper.connect": zookeeper_connect}))
    for broker_id, port in (brokers or {}).items():
        directory = state / "brokers" / str(broker_id)
        directory.mkdir(parents=True)
        (directory / "broker.yaml").write_text(
            yaml.safe_dump({"broker.id": broker_id, "listeners": f"PLAINTEXT://127.0.0.1:{port}"})
        )
        (directory / "broker.pid").write_text(f"{os.getpid()}\n")
    return state


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The in-process resolver's environment: a default state dir of this test's, nothing else."""
    for name in NO_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("KAFKAOPS_STATE_DIR", str(tmp_path / "default-state"))
    return tmp_path / "default-state"


def test_no_cluster_is_said_at_once_with_the_state_dir_looked_at(run_cli, tmp_path):
    empty = tmp_path / "empty"
    result = run_cli("topics", "--list", "--state-dir", str(empty), env=NO_ENV)
    assert result.exit_code == 1
    assert result.stderr == (
        f"Error while executing topic command : No --zookeeper given and there is no local cluster in {empty}: "
        f"start one with `kafkaops cluster up --state-dir {empty}`, or pass --zookeeper <host:port>\n"
    )
    default = tmp_path / "default"
    result = run_cli(
        "configs", "--describe", "--entity-type", "topics", env={**NO_ENV, "KAFKAOPS_STATE_DIR": str(default)}
    )
    assert result.exit_code == 1
    assert result.stderr == (
        f"No --zookeeper given and there is no local cluster in {default}: start one with `kafkaops cluster up`, "
        "or pass --zookeeper <host:port>\n"
    )


def test_a_stopped_cluster_is_named_with_its_zookeeper(run_cli, tmp_path):
    dead = f"127.0.0.1:{free_port()}"
    state = write_cluster(tmp_path / "stopped", dead)
    for args in (
        ("preferred-replica-election",),
        ("leader-election", "--election-type", "preferred", "--all-topic-partitions"),
        ("reassign-partitions", "--list"),
    ):
        result = run_cli(*args, "--state-dir", str(state), env=NO_ENV)
        assert result.exit_code == 1, args
        assert (
            f"No --zookeeper given and the local cluster in {state} is not running (its ZooKeeper {dead} does not "
            f"answer): start one with `kafkaops cluster up --state-dir {state}`, or pass --zookeeper <host:port>"
        ) in result.stderr, args


def test_tools_use_the_state_dirs_zookeeper(run_cli, zk, zk_connect, brokers, tmp_path):
    brokers([0, 1])
    admin_topics.create_topic(zk, "found", 2, 2, None, {})
    state = write_cluster(tmp_path / "running", zk_connect)
    # --state-dir comes before $KAFKAOPS_ZOOKEEPER, which points nowhere here
    nowhere = {"KAFKAOPS_ZOOKEEPER": f"127.0.0.1:{free_port()}", "KAFKAOPS_CONFIG": None}
    result = run_cli("topics", "--list", "--state-dir", str(state), env=nowhere)
    assert (result.exit_code, result.stdout) == (0, "found\n"), result.stderr
    result = run_cli("topics", "--list", env={**NO_ENV, "KAFKAOPS_STATE_DIR": str(state)})
    assert (result.exit_code, result.stdout) == (0, "found\n"), result.stderr
    result = run_cli(
        "configs",
        "--describe",
        "--entity-type",
        "topics",
        "--entity-name",
        "found",
        "--state-dir",
        str(state),
        env=NO_ENV,
    )
    assert result.exit_code == 0 and result.stdout == "Configs for topic 'found' are \n"


def test_the_resolver_order(clean_env, zk_connect, tmp_path, monkeypatch):
    state = write_cluster(tmp_path / "running", zk_connect, {0: 9001, 2: 9003})
    assert find_zookeeper("flag:1", state) == "flag:1"
    assert find_zookeeper(None, state) == zk_connect
    assert find_zookeeper(None) is None  # the default state dir holds nothing
    with pytest.raises(UserError, match=f"there is no local cluster in {clean_env}: "):
        resolve_zookeeper(None)
    monkeypatch.setenv("KAFKAOPS_ZOOKEEPER", "env:2")
    assert find_zookeeper(None) == "env:2"
    assert find_zookeeper(None, state) == zk_connect
    assert find_bootstrap_server(None, state) == "127.0.0.1:9001,127.0.0.1:9003"
    assert find_bootstrap_server("b:1", state) == "b:1"
    assert find_bootstrap_server(None) is None
    monkeypatch.setenv("KAFKAOPS_STATE_DIR", str(state))
    assert resolve_bootstrap_server(None) == "127.0.0.1:9001,127.0.0.1:9003"
    (state / "brokers" / "2" / "broker.pid").write_text("999999999\n")  # no such process: not running
    assert resolve_bootstrap_server(None) == "127.0.0.1:9001"
    with pytest.raises(UserError, match="No --bootstrap-server given and there is no local cluster in "):
        resolve_bootstrap_server(None, tmp_path / "none")
    (state / "brokers" / "0" / "broker.pid").unlink()
    with pytest.raises(
        UserError, match=f"No --bootstrap-server given and no broker of the local cluster in {state} is "
    ):
        resolve_bootstrap_server(None, state)


def test_broker_tools_use_the_state_dirs_brokers_or_keep_kafkas_message(run_cli, tmp_path):
    none = tmp_path / "none"
    result = run_cli("console-producer", "--topic", "t", "--state-dir", str(none), env=NO_ENV)
    assert result.exit_code == 1
    assert result.stderr.startswith(f"No --bootstrap-server given and there is no local cluster in {none}: ")
    result = run_cli("replica-verification", "--once", "--state-dir", str(none), env=NO_ENV)
    assert result.exit_code == 1
    assert "pass --broker-list <host:port>" in result.stderr
    # without --state-dir, and nothing in the default one: Kafka's own message, as before
    empty_default = {**NO_ENV, "KAFKAOPS_STATE_DIR": str(tmp_path / "default")}
    result = run_cli("console-consumer", "--topic", "t", env=empty_default)
    assert result.exit_code == 1 and result.stderr.startswith('Missing required argument "[bootstrap-server]"\n')
    result = run_cli("zookeeper-security-migration", "--zookeeper.acl", "secure", env=empty_default)
    # Kafka's usage message, then the short usage (issue 19: option errors no longer print the whole help)
    assert result.exit_code == 1 and result.stderr.startswith("ZooKeeper Migration Tool Help. This tool updates")
    assert "Usage: kafkaops zookeeper-security-migration [OPTIONS]" in result.stderr
