"""Kafka 2.8's "Basic Kafka Operations" chapter, runbook after runbook, against one local cluster, typed as an
operator types it: every tool finds the cluster through `--state-dir`, no config file is edited by hand.

Covered: adding, modifying and deleting topics; graceful shutdown; balancing leadership; racks; expanding the
cluster (`cluster add-broker`, then generate / execute with a throttle / verify, which clears the throttles);
decommissioning a broker (drain, then `cluster remove-broker`); increasing the replication factor; and the
data, read back intact at the end. Quotas ("Setting quotas") come with client quotas (issue 19, item 5).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from kafkaops.cluster.local.cluster import LocalCluster
from kafkaops.cluster.local.waiting import wait_for
from kafkaops.cluster.zk.client import KafkaZkClient
from kafkaops.cluster.zk.values import TopicPartition
from tests.cluster.clients_util import (
    assert_consumed_exactly,
    kafka_python_consume,
    kafka_python_produce,
    make_records,
)

KAFKAOPS = str(Path(sys.executable).parent / "kafkaops")
RACKS = {0: "r0", 1: "r1", 2: "r2"}


def kafkaops(local: LocalCluster, *args: str) -> subprocess.CompletedProcess[str]:
    """`kafkaops <args> --state-dir <the cluster's>`, with nothing else pointing at a cluster."""
    env = {k: v for k, v in os.environ.items() if k not in ("KAFKAOPS_ZOOKEEPER", "KAFKAOPS_CONFIG")}
    env["KAFKAOPS_STATE_DIR"] = str(local.state_dir.parent / "elsewhere")  # --state-dir must win
    return subprocess.run(
        [KAFKAOPS, *args, "--state-dir", str(local.state_dir)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def ok(local: LocalCluster, *args: str) -> str:
    result = kafkaops(local, *args)
    assert result.returncode == 0, (args, result.stdout, result.stderr)
    return result.stdout


def states(zk: KafkaZkClient, topic: str, partitions: int) -> dict[int, tuple[int, list[int]]]:
    """partition -> (leader, ISR)."""
    found = zk.get_partition_states(TopicPartition(topic, p) for p in range(partitions))
    return {
        tp.partition: (s.leader_and_isr.leader, list(s.leader_and_isr.isr)) if s else (-1, [])
        for tp, s in found.items()
    }


def replicas(zk: KafkaZkClient, topic: str) -> dict[int, list[int]]:
    return zk.get_topic_assignments([topic])[topic].replicas


def fully_replicated(zk: KafkaZkClient, topic: str) -> bool:
    current = replicas(zk, topic)
    return all(
        leader in current[p] and sorted(isr) == sorted(current[p])
        for p, (leader, isr) in states(zk, topic, len(current)).items()
    )


def reassign_and_verify(local: LocalCluster, plan: Path, *execute_options: str) -> str:
    """--execute, then --verify until every partition is complete; the last --verify's output."""
    ok(local, "reassign-partitions", "--execute", "--reassignment-json-file", str(plan), *execute_options)
    return verify_until_complete(local, plan)


def verify_until_complete(local: LocalCluster, plan: Path) -> str:
    """--verify until every partition of the plan is complete; the last --verify's output."""
    verify = ("reassign-partitions", "--verify", "--reassignment-json-file", str(plan))
    entries = len(json.loads(plan.read_text())["partitions"])
    return wait_for(lambda: (out := ok(local, *verify)).count(" is complete.") == entries and out, timeout_s=90)


def proposed_plan(local: LocalCluster, tmp_path: Path, topics: list[str], broker_list: str, name: str) -> Path:
    """--generate; the proposed plan saved as a file, as the docs tell."""
    topics_file = tmp_path / f"{name}-topics.json"
    topics_file.write_text(json.dumps({"topics": [{"topic": t} for t in topics], "version": 1}))
    lines = ok(
        local,
        "reassign-partitions",
        "--generate",
        "--topics-to-move-json-file",
        str(topics_file),
        "--broker-list",
        broker_list,
    ).splitlines()
    plan = tmp_path / f"{name}.json"
    plan.write_text(lines[lines.index("Proposed partition reassignment configuration") + 1])
    return plan


def unclean_shutdown_lines(local: LocalCluster) -> list[str]:
    return [
        line
        for log in local.state_dir.glob("brokers/*/logs/*")
        for line in log.read_text(errors="replace").splitlines()
        if "unclean shutdown" in line.lower()
    ]


def test_basic_kafka_operations(cluster, zk, tmp_path):
    local = cluster(brokers=3, racks=RACKS, **{"auto.leader.rebalance.enable": False})

    # --- Adding and removing topics; modifying topics --------------------------------------------------------
    out = ok(
        local, "topics", "--create", "--topic", "my_topic_name", "--partitions", "4", "--replication-factor", "3",
        "--config", "max.message.bytes=64000",
    )  # fmt: skip
    assert out.endswith("Created topic my_topic_name.\n")
    assert all(sorted(r) == [0, 1, 2] for r in replicas(zk, "my_topic_name").values())  # one replica per rack
    out = ok(local, "topics", "--alter", "--topic", "my_topic_name", "--partitions", "6")
    assert out == (
        "WARNING: If partitions are increased for a topic that has a key, the partition logic or ordering of the "
        "messages will be affected\nAdding partitions succeeded!\n"
    )
    configs = ("configs", "--entity-type", "topics", "--entity-name", "my_topic_name")
    assert ok(local, *configs, "--alter", "--add-config", "flush.messages=1") == (
        "Completed updating config for entity: topic 'my_topic_name'.\n"
    )
    assert ok(local, *configs, "--describe") == (
        "Configs for topic 'my_topic_name' are max.message.bytes=64000,flush.messages=1\n"
    )
    ok(local, *configs, "--alter", "--delete-config", "flush.messages")
    assert ok(local, *configs, "--describe") == "Configs for topic 'my_topic_name' are max.message.bytes=64000\n"
    assert ok(local, "topics", "--delete", "--topic", "my_topic_name") == (
        "Topic my_topic_name is marked for deletion.\nNote: This will have no impact if delete.topic.enable is not "
        "set to true.\n"
    )
    wait_for(lambda: "my_topic_name" not in ok(local, "topics", "--list"), timeout_s=30)

    # --- data for the runbooks that follow ---------------------------------------------------------------------
    ok(local, "topics", "--create", "--topic", "foo", "--partitions", "3", "--replication-factor", "3")
    wait_for(lambda: fully_replicated(zk, "foo"))
    records = [r for p in range(3) for r in make_records(p, 100, "foo")]
    produced = kafka_python_produce(local.status().bootstrap_servers, "foo", records)
    assert not produced.errors
    preferred = {p: r[0] for p, r in replicas(zk, "foo").items()}

    # --- Graceful shutdown: leaderships move before the broker exits; nothing goes offline ---------------------
    assert ok(local, "cluster", "stop-broker", "1") == "Broker 1 stopped\n"
    after = states(zk, "foo", 3)
    assert all(leader not in (-1, 1) and 1 not in isr for leader, isr in after.values()), after
    assert (local.broker_dir(1) / "data" / ".kafka_cleanshutdown").exists()
    assert ok(local, "cluster", "start-broker", "1").startswith("Broker 1 running (pid ")
    wait_for(lambda: fully_replicated(zk, "foo"), timeout_s=30)

    # --- Balancing leadership ----------------------------------------------------------------------------------
    assert {p: leader for p, (leader, _) in states(zk, "foo", 3).items()} != preferred
    assert ok(local, "preferred-replica-election") == (
        "Created preferred replica election path with foo-0,foo-1,foo-2\n"
        "Successfully started preferred replica election for partitions Set(foo-0, foo-1, foo-2)\n"
    )
    wait_for(lambda: {p: leader for p, (leader, _) in states(zk, "foo", 3).items()} == preferred, timeout_s=30)

    # --- Expanding your cluster, with a throttled migration ----------------------------------------------------
    assert ok(local, "cluster", "add-broker", "--rack", "r0").startswith("Broker 3 running (pid ")
    plan = proposed_plan(local, tmp_path, ["foo"], "1,2,3", "expand")
    assert {b for r in json.loads(plan.read_text())["partitions"] for b in r["replicas"]} == {1, 2, 3}
    ok(local, "reassign-partitions", "--execute", "--reassignment-json-file", str(plan), "--throttle", "50000000")
    assert "leader.replication.throttled.rate=50000000" in ok(
        local, "configs", "--describe", "--entity-type", "brokers", "--entity-name", "1"
    )
    # --verify, not a second --execute: one while the throttled move still runs is refused, as in Kafka
    verified = verify_until_complete(local, plan)
    assert (
        "Clearing broker-level throttles on brokers 0,1,2,3\nClearing topic-level throttles on topic foo\n" in verified
    )
    assert "throttled" not in ok(local, "configs", "--describe", "--entity-type", "brokers", "--entity-name", "1")
    assert all(set(r) == {1, 2, 3} for r in replicas(zk, "foo").values())

    # --- Decommissioning brokers -------------------------------------------------------------------------------
    refused = kafkaops(local, "cluster", "remove-broker", "3")
    assert refused.returncode == 1 and refused.stderr.startswith("Broker 3 still holds replicas of 3 partition(s) ")
    reassign_and_verify(local, proposed_plan(local, tmp_path, ["foo"], "0,1,2", "drain"))
    assert ok(local, "cluster", "remove-broker", "3") == f"Broker 3 removed ({local.broker_dir(3)} deleted)\n"
    assert not local.broker_dir(3).exists()

    # --- Increasing replication factor -------------------------------------------------------------------------
    ok(local, "topics", "--create", "--topic", "rf", "--replica-assignment", "0")
    wait_for(lambda: fully_replicated(zk, "rf"))
    rf_records = make_records(0, 50, "rf")
    rf_produced = kafka_python_produce(local.status().bootstrap_servers, "rf", rf_records)
    assert not rf_produced.errors
    increase = tmp_path / "increase-replication-factor.json"
    increase.write_text(
        json.dumps({"version": 1, "partitions": [{"topic": "rf", "partition": 0, "replicas": [0, 1, 2]}]})
    )
    reassign_and_verify(local, increase)
    wait_for(lambda: fully_replicated(zk, "rf"), timeout_s=30)
    assert "\tTopic: rf\tPartition: 0\tLeader: 0\tReplicas: 0,1,2\tIsr: " in ok(
        local, "topics", "--describe", "--topic", "rf"
    )

    # --- the data, after all of it -----------------------------------------------------------------------------
    bootstrap = local.status().bootstrap_servers
    assert_consumed_exactly(
        produced.acked, kafka_python_consume(bootstrap, "foo", [0, 1, 2], expect={0: 100, 1: 100, 2: 100})
    )
    assert_consumed_exactly(rf_produced.acked, kafka_python_consume(bootstrap, "rf", [0], expect={0: 50}))
    assert ok(local, "cluster", "down") == "Cluster stopped\n"
    assert unclean_shutdown_lines(local) == []
