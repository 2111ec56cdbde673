"""`kafkaops consumer-groups` (kafka-consumer-groups.sh) against a real 3-broker cluster with real group
members (confluent-kafka, kafka-python, and our own `console-consumer --group`):

* `--describe` prints each partition's committed offset, log end and LAG = log end - committed;
* `--reset-offsets ... --execute` on an empty group, then the members resume at the new offsets; an
  active group is refused with Kafka's text and nothing is committed; `--delete` of a non-empty group is
  refused;
* bad input (an unknown group, a malformed reset file, conflicting options) gets Kafka's message, exit 1,
  and commits nothing.

One cluster for the module; each test has its own topic and group."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer
from confluent_kafka import TopicPartition as CkTopicPartition
from kafka import KafkaConsumer
from typer.testing import CliRunner

from kafkaops.admin import topics as admin_topics
from kafkaops.cli.app import app
from kafkaops.cluster.local.cluster import LocalCluster
from kafkaops.cluster.local.waiting import wait_for
from kafkaops.cluster.zk.client import KafkaZkClient
from tests.cluster.clients_util import bootstrap_of, confluent_produce, make_records, wait_partitions
from tests.cluster.conftest import FAST, module_cluster

SETTINGS = {
    **FAST,
    "offsets.topic.num.partitions": 3,
    "group.initial.rebalance.delay.ms": 0,
}
SESSION_MS = 6000


@pytest.fixture(scope="module")
def groups_cluster(zookeeper_server: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    with module_cluster(zookeeper_server, tmp_path_factory, "consumer-groups", SETTINGS) as local:
        yield local


@pytest.fixture(scope="module")
def gzk(groups_cluster: LocalCluster) -> Iterator[KafkaZkClient]:
    client = KafkaZkClient(groups_cluster.zookeeper_connect)
    try:
        yield client
    finally:
        client.close()


def _topic(local: LocalCluster, zk: KafkaZkClient, name: str, counts: dict[int, int]) -> None:
    """A topic with one partition per entry of `counts`, holding that many records."""
    admin_topics.create_topic(zk, name, len(counts), 3, None, {})
    wait_partitions(zk, name, len(counts), isr_size=3)
    for partition, count in counts.items():
        confluent_produce(bootstrap_of(local), name, make_records(partition, count))


def groups(local: LocalCluster, *args: str) -> Any:
    """`kafkaops consumer-groups --bootstrap-server <the cluster> <args>` in-process."""
    return CliRunner().invoke(
        app, ["consumer-groups", "--bootstrap-server", bootstrap_of(local), *args], catch_exceptions=False
    )


def _member(local: LocalCluster, group: str, topic: str) -> Consumer:
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap_of(local),
            "group.id": group,
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
            "session.timeout.ms": SESSION_MS,
            "heartbeat.interval.ms": 500,
        }
    )
    consumer.subscribe([topic])
    return consumer


def _poll_until_assigned(consumer: Consumer, partitions: int) -> None:
    deadline = time.monotonic() + 30
    while len(consumer.assignment()) < partitions:
        assert time.monotonic() < deadline, "no assignment within 30 s"
        consumer.poll(0.2)


def _committed(local: LocalCluster, group: str, topic: str, partitions: int) -> dict[int, int]:
    probe = Consumer({"bootstrap.servers": bootstrap_of(local), "group.id": group, "enable.auto.commit": False})
    try:
        found = probe.committed([CkTopicPartition(topic, p) for p in range(partitions)], timeout=15)
        return {tp.partition: tp.offset for tp in found}
    finally:
        probe.close()


def _rows(stdout: str) -> list[dict[str, str]]:
    """The offsets table as dicts by column header."""
    lines = [line for line in stdout.splitlines() if line.strip()]
    header = lines[0].split()
    assert header == [
        "GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID",
    ]  # fmt: skip
    return [dict(zip(header, line.split(), strict=True)) for line in lines[1:]]


def _describe_stable(local: LocalCluster, group: str) -> Any:
    """--describe once the group is Stable (no rebalancing warning)."""
    result: list[Any] = []

    def stable() -> bool:
        result[:] = [groups(local, "--describe", "--group", group)]
        return result[0].exit_code == 0 and "rebalancing" not in result[0].stderr and "CONSUMER-ID" in result[0].stdout

    wait_for(stable, 30, interval_s=0.5, what=f"group {group} stable")
    return result[0]


def test_describe_prints_lag_as_log_end_minus_committed_and_refuses_resets_of_an_active_group(
    groups_cluster: LocalCluster, gzk: KafkaZkClient
) -> None:
    _topic(groups_cluster, gzk, "lagging", {0: 10, 1: 6})
    consumer = _member(groups_cluster, "lag-group", "lagging")
    try:
        _poll_until_assigned(consumer, 2)
        consumer.commit(
            offsets=[CkTopicPartition("lagging", 0, 3), CkTopicPartition("lagging", 1, 6)], asynchronous=False
        )
        described = _describe_stable(groups_cluster, "lag-group")
        rows = {int(r["PARTITION"]): r for r in _rows(described.stdout)}
        assert {p: (r["CURRENT-OFFSET"], r["LOG-END-OFFSET"], r["LAG"]) for p, r in rows.items()} == {
            0: ("3", "10", "7"),
            1: ("6", "6", "0"),
        }
        assert all(r["CONSUMER-ID"] != "-" and r["GROUP"] == "lag-group" for r in rows.values())
        as_json = json.loads(groups(groups_cluster, "--describe", "--group", "lag-group", "--output", "json").stdout)
        (group,) = as_json["groups"]
        assert group["state"] == "Stable"
        assert sorted((p["partition"], p["lag"]) for p in group["partitions"]) == [(0, 7), (1, 0)]
        # an active group: Kafka's refusal, exit 1, nothing committed
        refused = groups(
            groups_cluster,
            "--reset-offsets",
            "--group",
            "lag-group",
            "--topic",
            "lagging",
            "--to-earliest",
            "--execute",
        )
        assert refused.exit_code == 1
        assert (
            "Error: Assignments can only be reset if the group 'lag-group' is inactive, but the current state is Stable."
            in refused.stdout
        )
        deleted = groups(groups_cluster, "--delete", "--group", "lag-group")
        assert deleted.exit_code == 1
        assert (
            "* Group 'lag-group' could not be deleted due to: org.apache.kafka.common.errors.GroupNotEmptyException: "
            "The group is not empty." in deleted.stdout
        )
        members = groups(groups_cluster, "--describe", "--group", "lag-group", "--members", "--verbose")
        assert "lagging(0,1)" in members.stdout and "#PARTITIONS" in members.stdout
        state = groups(groups_cluster, "--describe", "--group", "lag-group", "--state")
        assert "range" in state.stdout and "Stable" in state.stdout
    finally:
        consumer.close()
    assert _committed(groups_cluster, "lag-group", "lagging", 2) == {0: 3, 1: 6}
    listed = groups(groups_cluster, "--list", "--state", "empty")
    assert listed.exit_code == 0 and "lag-group" in listed.stdout.split()  # LeaveGroup on close: Empty at once


def test_reset_offsets_of_an_empty_group_then_members_resume_there(
    groups_cluster: LocalCluster, gzk: KafkaZkClient, tmp_path: Path
) -> None:
    _topic(groups_cluster, gzk, "resetting", {0: 8, 1: 8})
    consumer = _member(groups_cluster, "reset-group", "resetting")
    try:
        _poll_until_assigned(consumer, 2)
        consumer.commit(offsets=[CkTopicPartition("resetting", p, 8) for p in (0, 1)], asynchronous=False)
    finally:
        consumer.close()
    # a dry run (the default) changes nothing
    planned = groups(
        groups_cluster, "--reset-offsets", "--group", "reset-group", "--topic", "resetting:0", "--shift-by", "-5"
    )
    assert planned.exit_code == 0 and "WARN: No action will be performed" in planned.stderr
    assert [line.split() for line in planned.stdout.splitlines() if line.strip()] == [
        ["GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"],
        ["reset-group", "resetting", "0", "3"],
    ]
    assert _committed(groups_cluster, "reset-group", "resetting", 2) == {0: 8, 1: 8}
    # exported, then executed from the file
    exported = groups(
        groups_cluster,
        "--reset-offsets",
        "--group",
        "reset-group",
        "--all-topics",
        "--to-offset",
        "2",
        "--dry-run",
        "--export",
    )
    assert sorted(exported.stdout.split()) == ["resetting,0,2", "resetting,1,2"]
    plan = tmp_path / "plan.csv"
    plan.write_text(exported.stdout)
    done = groups(groups_cluster, "--reset-offsets", "--group", "reset-group", "--from-file", str(plan), "--execute")
    assert done.exit_code == 0, done.stdout
    assert _committed(groups_cluster, "reset-group", "resetting", 2) == {0: 2, 1: 2}
    # a kafka-python member of the group resumes at the reset offsets
    member = KafkaConsumer(
        "resetting",
        bootstrap_servers=bootstrap_of(groups_cluster),
        group_id="reset-group",
        enable_auto_commit=False,
        session_timeout_ms=SESSION_MS,
        heartbeat_interval_ms=500,
        consumer_timeout_ms=15000,
    )
    try:
        first: dict[int, int] = {}
        for record in member:
            first.setdefault(record.partition, record.offset)
            if len(first) == 2:
                break
    finally:
        member.close()
    assert first == {0: 2, 1: 2}


def test_console_consumer_group_joins_commits_and_shows_in_describe(
    groups_cluster: LocalCluster, gzk: KafkaZkClient
) -> None:
    _topic(groups_cluster, gzk, "console-grouped", {0: 5, 1: 4})
    consumed = CliRunner().invoke(
        app,
        [
            "console-consumer", "--bootstrap-server", bootstrap_of(groups_cluster), "--topic", "console-grouped",
            "--group", "console-group", "--from-beginning", "--max-messages", "9",
            "--consumer-property", f"session.timeout.ms={SESSION_MS}",
        ],
        catch_exceptions=False,
    )  # fmt: skip
    assert consumed.exit_code == 0, consumed.stderr
    assert len(consumed.stdout.splitlines()) == 9
    assert _committed(groups_cluster, "console-group", "console-grouped", 2) == {0: 5, 1: 4}
    described = groups(groups_cluster, "--describe", "--group", "console-group")
    assert "Consumer group 'console-group' has no active members." in described.stderr
    assert sorted((r["PARTITION"], r["LAG"]) for r in _rows(described.stdout)) == [("0", "0"), ("1", "0")]
    perf = CliRunner().invoke(
        app,
        [
            "consumer-perf-test", "--bootstrap-server", bootstrap_of(groups_cluster), "--topic", "console-grouped",
            "--messages", "9", "--timeout", "15000", "--group", "perf-group",
        ],
        catch_exceptions=False,
    )  # fmt: skip
    lines = perf.stdout.splitlines()
    assert lines[0].startswith("start.time, end.time, data.consumed.in.MB") and lines[1].split(", ")[4] == "9"


def test_bad_input_gets_kafkas_message_exit_1_and_commits_nothing(
    groups_cluster: LocalCluster, gzk: KafkaZkClient, tmp_path: Path
) -> None:
    _topic(groups_cluster, gzk, "guarded", {0: 4})
    consumer = _member(groups_cluster, "guarded-group", "guarded")
    try:
        _poll_until_assigned(consumer, 1)
        consumer.commit(offsets=[CkTopicPartition("guarded", 0, 4)], asynchronous=False)
    finally:
        consumer.close()
    unknown = groups(groups_cluster, "--describe", "--group", "no-such-group")
    assert unknown.exit_code == 1 and "Error: Consumer group 'no-such-group' does not exist." in unknown.stdout
    malformed = tmp_path / "bad.csv"
    malformed.write_text("guarded,zero,1\n")
    refused = groups(
        groups_cluster, "--reset-offsets", "--group", "guarded-group", "--from-file", str(malformed), "--execute"
    )
    assert refused.exit_code == 1
    assert refused.stdout.startswith("\nError: Executing consumer group command failed due to ")
    conflicting = groups(
        groups_cluster,
        "--reset-offsets",
        "--group",
        "guarded-group",
        "--all-topics",
        "--to-earliest",
        "--to-latest",
        "--execute",
    )
    assert conflicting.exit_code == 1
    assert 'Option "[to-earliest]" can\'t be used with option "[to-latest]"' in conflicting.stderr
    assert _committed(groups_cluster, "guarded-group", "guarded", 1) == {0: 4}


def test_delete_of_an_empty_group(groups_cluster: LocalCluster, gzk: KafkaZkClient) -> None:
    _topic(groups_cluster, gzk, "deleting", {0: 2})
    consumer = _member(groups_cluster, "deleted-group", "deleting")
    try:
        _poll_until_assigned(consumer, 1)
        consumer.commit(offsets=[CkTopicPartition("deleting", 0, 2)], asynchronous=False)
    finally:
        consumer.close()
    gone = groups(groups_cluster, "--delete", "--group", "deleted-group")
    assert (
        gone.exit_code == 0 and "Deletion of requested consumer groups ('deleted-group') was successful." in gone.stdout
    )
    assert _committed(groups_cluster, "deleted-group", "deleting", 1) == {0: -1001}
