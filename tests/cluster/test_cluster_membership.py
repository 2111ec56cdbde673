"""Kafka's "Expanding your cluster" and "Decommissioning brokers" with `kafkaops cluster`, and `cluster down`:
the commands as an operator types them, against real broker processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from kafkaops.admin import topics as admin_topics
from kafkaops.cluster.local import processes
from kafkaops.cluster.local.cluster import LocalCluster
from kafkaops.cluster.local.waiting import wait_for
from kafkaops.cluster.log import LogManager
from kafkaops.cluster.log.segment import LogSegment
from kafkaops.cluster.zk import znodes
from kafkaops.cluster.zk.client import KafkaZkClient
from kafkaops.cluster.zk.values import TopicPartition
from tests.cluster.clients_util import (
    assert_consumed_exactly,
    kafka_python_consume,
    kafka_python_produce,
    make_records,
)

KAFKAOPS = str(Path(sys.executable).parent / "kafkaops")


def run(local: LocalCluster, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "KAFKAOPS_STATE_DIR": str(local.state_dir), "KAFKAOPS_ZOOKEEPER": local.zookeeper_connect}
    env.pop("KAFKAOPS_CONFIG", None)
    return subprocess.run([KAFKAOPS, *args], env=env, capture_output=True, text=True, timeout=120, check=False)


def leaders_known(zk: KafkaZkClient, topic: str, partitions: int) -> bool:
    found = zk.get_partition_states(TopicPartition(topic, p) for p in range(partitions))
    return all(s is not None and s.leader_and_isr.leader >= 0 for s in found.values())


def unclean_shutdown_lines(local: LocalCluster) -> list[str]:
    return [
        line
        for log in local.state_dir.glob("brokers/*/logs/*")
        for line in log.read_text(errors="replace").splitlines()
        if "unclean shutdown" in line.lower()
    ]


def test_add_a_broker_then_drain_and_remove_it(cluster, zk):
    local = cluster(brokers=2)
    added = run(local, "cluster", "add-broker", "--rack", "rack-x")
    assert added.returncode == 0, added.stderr
    assert added.stdout.startswith("Broker 2 running (pid ") and "PLAINTEXT://127.0.0.1:" in added.stdout
    config = yaml.safe_load((local.broker_dir(2) / "broker.yaml").read_text())
    assert config["broker.rack"] == "rack-x" and config["zookeeper.connect"] == local.zookeeper_connect
    assert config["log.dirs"] == str(local.broker_dir(2) / "data")
    assert config["zookeeper.session.timeout.ms"] == 6000  # the cluster's broker settings, as `up` was given
    registration = zk.get_broker(2)
    assert registration is not None and registration.rack == "rack-x"
    assert config["listeners"] == f"PLAINTEXT://127.0.0.1:{registration.endpoints[0].port}"
    taken = run(local, "cluster", "add-broker", "--id", "2")
    assert taken.returncode == 1 and "Broker 2 is already part of the cluster in " in taken.stderr
    status = run(local, "cluster", "status")
    assert "Broker 2: registered, pid " in status.stdout

    admin_topics.create_topic(zk, "drained", None, None, {0: [2, 0], 1: [1, 2], 2: [0, 1]}, {})
    wait_for(lambda: leaders_known(zk, "drained", 3))
    bootstrap = local.status().bootstrap_servers
    records = make_records(0, 50, "d") + make_records(1, 50, "d") + make_records(2, 50, "d")
    produced = kafka_python_produce(bootstrap, "drained", records)
    assert not produced.errors

    refused = run(local, "cluster", "remove-broker", "2")
    assert refused.returncode == 1
    assert refused.stderr.startswith("Broker 2 still holds replicas of 2 partition(s) (drained-0,drained-1): ")
    assert local.broker_pid(2) is not None and (local.broker_dir(2) / "data").is_dir()

    plan = local.state_dir / "drain.json"
    plan.write_text(
        json.dumps(
            {
                "version": 1,
                "partitions": [
                    {"topic": "drained", "partition": 0, "replicas": [0, 1]},
                    {"topic": "drained", "partition": 1, "replicas": [1, 0]},
                ],
            }
        )
    )
    executed = run(local, "reassign-partitions", "--execute", "--reassignment-json-file", str(plan))
    assert executed.returncode == 0, executed.stderr
    verify = ("reassign-partitions", "--verify", "--reassignment-json-file", str(plan))
    wait_for(lambda: run(local, *verify).stdout.count("is complete.") == 2, timeout_s=60)
    wait_for(lambda: not zk.exists(znodes.ReassignPartitionsZNode.path()), timeout_s=30)

    pid = local.broker_pid(2)
    removed = run(local, "cluster", "remove-broker", "2")
    assert removed.returncode == 0, removed.stderr
    assert removed.stdout == f"Broker 2 removed ({local.broker_dir(2)} deleted)\n"
    assert not local.broker_dir(2).exists() and local.broker_ids() == [0, 1]
    assert pid is not None and not processes.alive(pid)
    wait_for(lambda: zk.get_broker(2) is None)
    assert "Broker 2" not in run(local, "cluster", "status").stdout
    consumed = kafka_python_consume(bootstrap.split(",")[0], "drained", [0, 1, 2], expect={0: 50, 1: 50, 2: 50})
    assert_consumed_exactly(produced.acked, consumed)


def test_down_stops_every_broker_cleanly_and_up_brings_back_the_added_one(cluster, zk, monkeypatch: pytest.MonkeyPatch):
    local = cluster(brokers=3)
    assert run(local, "cluster", "add-broker").returncode == 0
    admin_topics.create_topic(zk, "kept", 6, 3, None, {})
    wait_for(lambda: leaders_known(zk, "kept", 6))
    records = [r for p in range(6) for r in make_records(p, 30, "k")]
    produced = kafka_python_produce(local.status().bootstrap_servers, "kept", records)
    assert not produced.errors
    pids = [local.broker_pid(b) for b in local.broker_ids()]
    assert len(pids) == 4 and None not in pids

    down = run(local, "cluster", "down")
    assert down.returncode == 0 and down.stdout == "Cluster stopped\n"
    assert all(not processes.alive(pid) for pid in pids)
    assert all(local.broker_pid(b) is None for b in local.broker_ids())
    assert unclean_shutdown_lines(local) == []
    assert all((local.broker_dir(b) / "data" / ".kafka_cleanshutdown").exists() for b in local.broker_ids())
    wait_for(lambda: zk.get_sorted_broker_ids() == [])

    def no_recovery(*_: object, **__: object) -> int:
        raise AssertionError("a clean shutdown leaves nothing to recover")

    with monkeypatch.context() as patched:  # each process flushed and closed its logs before its exit
        patched.setattr(LogSegment, "recover", no_recovery)
        replicas = 0
        for broker_id in local.broker_ids():
            manager = LogManager([local.broker_dir(broker_id) / "data"])
            manager.startup()
            kept = [log.log_end_offset for (topic, _), log in manager.logs.items() if topic == "kept"]
            manager.shutdown()  # clean again, for `up`
            assert kept == [30] * len(kept), broker_id
            replicas += len(kept)
        assert replicas == 6 * 3

    up = run(local, "cluster", "up")  # the ZooKeeper and broker settings of cluster.yaml, every broker it holds
    assert up.returncode == 0, up.stderr
    assert all(f"Broker {b}: registered, pid " in up.stdout for b in range(4))
    wait_for(lambda: leaders_known(zk, "kept", 6))
    consumed = kafka_python_consume(
        local.status().bootstrap_servers, "kept", list(range(6)), expect=dict.fromkeys(range(6), 30)
    )
    assert_consumed_exactly(produced.acked, consumed)


def test_status_prints_the_values_to_paste(cluster):
    local = cluster(brokers=2)
    status = run(local, "cluster", "status")
    assert status.returncode == 0
    ports = [str(b.endpoint).rsplit(":", 1)[1] for b in local.status().brokers]
    assert status.stdout.splitlines()[-2:] == [
        f"--zookeeper {local.zookeeper_connect}",
        f"--bootstrap-server 127.0.0.1:{ports[0]},127.0.0.1:{ports[1]}",
    ]
    document = json.loads(run(local, "cluster", "status", "--output", "json").stdout)
    assert document["bootstrap_servers"] == f"127.0.0.1:{ports[0]},127.0.0.1:{ports[1]}"
    unknown = run(local, "cluster", "remove-broker", "7")
    assert unknown.returncode == 1 and unknown.stderr == f"Broker 7 is not part of the cluster in {local.state_dir}\n"
