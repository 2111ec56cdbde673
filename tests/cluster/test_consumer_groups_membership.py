"""Consumer groups with real clients (issue 16 item 1): confluent-kafka and kafka-python consumers with a
`group.id` against one 3-broker cluster shared by the module (each test its own topic and group).

* two members split the partitions, a third joins and the group rebalances;
* a member SIGKILLed (a consumer in a subprocess) loses its partitions after its session timeout;
* a clean close leaves at once (LeaveGroup): the coordinator no longer lists it when close() returns;
* static members (group.instance.id) rejoin without a rebalance;
* ListGroups and DescribeGroups through kafka-python's KafkaAdminClient and confluent-kafka's AdminClient.

The brokers run with `group.initial.rebalance.delay.ms=0` and a low `group.min.session.timeout.ms`, so that
groups form at once and a dead member's session ends in seconds.
"""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer as ConfluentConsumer
from confluent_kafka import KafkaException
from confluent_kafka import TopicPartition as CkTopicPartition
from confluent_kafka.admin import AdminClient
from kafka import KafkaConsumer
from kafka.admin import KafkaAdminClient
from kafka.consumer.subscription_state import ConsumerRebalanceListener

from kafkaops.admin import topics as admin_topics
from kafkaops.admin.assignment import JavaRandom
from kafkaops.cluster.broker.group_metadata_manager import GROUP_METADATA_TOPIC_NAME, partition_for
from kafkaops.cluster.local.cluster import LocalCluster
from kafkaops.cluster.local.waiting import wait_for
from kafkaops.cluster.zk.client import KafkaZkClient
from tests.cluster.clients_util import (
    Background,
    all_bootstraps,
    kafka_python_produce,
    leader_of,
    make_records,
    wait_metadata_everywhere,
    wait_partitions,
)
from tests.cluster.conftest import FAST, module_cluster

OFFSETS_PARTITIONS = 5
GROUP_SETTINGS = {
    "group.initial.rebalance.delay.ms": 0,
    "group.min.session.timeout.ms": 1000,
    "offsets.topic.num.partitions": OFFSETS_PARTITIONS,
    # coordinators stay where they are unless a test moves them
    "auto.leader.rebalance.enable": False,
    # a killed broker leaves the ISRs soon: commits (acks=all) to __consumer_offsets go on without it
    "replica.lag.time.max.ms": 3000,
}
SESSION_MS = 4000
PARTITIONS = 6
WAIT_S = 60.0


@dataclass
class Groups:
    local: LocalCluster
    zk: KafkaZkClient
    bootstrap: str

    def topic(self, partitions: int = PARTITIONS) -> str:
        name = f"t-{uuid.uuid4().hex[:8]}"
        admin_topics.create_topic(self.zk, name, partitions, 2, None, {}, rng=JavaRandom(1))
        wait_partitions(self.zk, name, partitions, isr_size=2)
        wait_metadata_everywhere(self.local, name, partitions)
        return name


@pytest.fixture(scope="module")
def groups(zookeeper_server: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Groups]:
    with (
        module_cluster(zookeeper_server, tmp_path_factory, "groups", {**FAST, **GROUP_SETTINGS}) as local,
        KafkaZkClient(local.zookeeper_connect) as zk,
    ):
        yield Groups(local, zk, all_bootstraps(local))


# --- consumers on threads ------------------------------------------------------------------------------------


@dataclass
class Member:
    """A consumer polling on a thread: its current assignment and how many assignments it was given."""

    assignment: frozenset[int] = frozenset()
    assigned: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    background: Background | None = None
    close: Callable[[], None] = lambda: None

    def record(self, partitions: frozenset[int], new_assignment: bool) -> None:
        with self.lock:
            self.assignment = partitions
            self.assigned += new_assignment

    def stop(self) -> None:
        if self.background is not None:
            self.background.stop()
            self.background = None


def kafka_python_member(bootstrap: str, topic: str, group: str, instance_id: str | None = None) -> Member:
    member = Member()
    started = threading.Event()

    class Listener(ConsumerRebalanceListener):
        def on_partitions_revoked(self, revoked: Any) -> None:
            member.record(frozenset(), False)

        def on_partitions_assigned(self, assigned: Any) -> None:
            member.record(frozenset(tp.partition for tp in consumer.assignment()), True)

    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap,
        group_id=group,
        group_instance_id=instance_id,
        client_id=f"kp-{instance_id or uuid.uuid4().hex[:4]}",
        session_timeout_ms=SESSION_MS if instance_id is None else 30_000,
        heartbeat_interval_ms=500,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
    )
    consumer.subscribe([topic], listener=Listener())
    # kafka-python 3.0.12 takes its group's metadata snapshot at a metadata answer, not at subscribe(): a first
    # join before one rejoins when it comes, and a rejoin for that reason whose SyncGroup answer comes after a
    # poll's timeout is never completed (need_rejoin() is already false: the member stops heartbeating, for
    # good). A metadata answer now, before the first poll, takes that snapshot.
    assert topic in consumer.topics(), f"kafka-python does not see {topic}"

    def poll(stop: threading.Event) -> None:
        started.set()
        while not stop.is_set():
            consumer.poll(timeout_ms=100)

    def close() -> None:
        member.stop()
        member.close = lambda: None
        consumer.close()

    member.background = Background(poll)
    member.close = close
    started.wait(10)
    return member


def confluent_member(
    bootstrap: str, topic: str, group: str, instance_id: str | None = None, strategy: str = "range"
) -> Member:
    member = Member()
    config = {
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "session.timeout.ms": SESSION_MS if instance_id is None else 30_000,
        "heartbeat.interval.ms": 500,
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
        "partition.assignment.strategy": strategy,
    }
    if instance_id is not None:
        config["group.instance.id"] = instance_id
    consumer = ConfluentConsumer(config)

    cooperative = strategy == "cooperative-sticky"
    closing = threading.Event()

    def on_assign(c: Any, partitions: Any) -> None:
        if cooperative:
            c.incremental_assign(partitions)  # what it is given is added to what it keeps
        if closing.is_set():  # as in on_revoke: no assignment() from a callback that close() raises
            return
        member.record(frozenset(p.partition for p in (c.assignment() if cooperative else partitions)), True)

    def on_revoke(c: Any, partitions: Any) -> None:
        kept: frozenset[int] = frozenset()
        if cooperative:
            with contextlib.suppress(KafkaException):  # closing: the handle is going away
                c.incremental_unassign(partitions)
                # not while closing: librdkafka's assignment() from the revoke that close() raises can wait
                # forever for its own main thread (librdkafka #4041, #4527; a CI run hung here)
                if not closing.is_set():
                    kept = frozenset(p.partition for p in c.assignment())
        member.record(kept, False)

    consumer.subscribe([topic], on_assign=on_assign, on_revoke=on_revoke)

    def poll(stop: threading.Event) -> None:
        while not stop.is_set():
            consumer.poll(0.1)

    def close() -> None:
        member.stop()
        member.close = lambda: None
        closing.set()
        consumer.close()

    member.background = Background(poll)
    member.close = close
    return member


def cooperative_member(bootstrap: str, topic: str, group: str, instance_id: str | None = None) -> Member:
    """librdkafka's cooperative-sticky assignor: incremental rebalances, the coordinator only relays them."""
    return confluent_member(bootstrap, topic, group, instance_id, strategy="cooperative-sticky")


MEMBERS = {
    "kafka-python": kafka_python_member,
    "confluent-kafka": confluent_member,
    "confluent-kafka-cooperative": cooperative_member,
}


@contextlib.contextmanager
def members(*made: Member) -> Iterator[tuple[Member, ...]]:
    try:
        yield made
    finally:
        for member in made:
            with contextlib.suppress(Exception):
                member.close()


def split_evenly(*group: Member, partitions: int = PARTITIONS) -> bool:
    """Every partition assigned once, every member some."""
    assignments = [m.assignment for m in group]
    return all(assignments) and sorted(p for a in assignments for p in a) == list(range(partitions))


# --- the tests ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("client", sorted(MEMBERS))
def test_members_split_the_partitions_and_a_third_rebalances_the_group(groups: Groups, client: str) -> None:
    make = MEMBERS[client]
    topic, group = groups.topic(), f"g-{uuid.uuid4().hex[:8]}"
    with members(make(groups.bootstrap, topic, group), make(groups.bootstrap, topic, group)) as (a, b):
        wait_for(lambda: split_evenly(a, b), WAIT_S, what=f"two members splitting {topic}")
        with members(make(groups.bootstrap, topic, group)) as (c,):
            wait_for(lambda: split_evenly(a, b, c), WAIT_S, what="three members splitting it")
            assert [len(m.assignment) for m in (a, b, c)] == [2, 2, 2]


KILLABLE = """
import json, sys
from kafka import KafkaConsumer
bootstrap, topic, group, session_ms = sys.argv[1:5]
consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, session_timeout_ms=int(session_ms),
                         heartbeat_interval_ms=500, enable_auto_commit=False)
consumer.subscribe([topic])
consumer.topics()  # the group's metadata snapshot before the first join (see kafka_python_member)
while True:
    consumer.poll(timeout_ms=100)
    print(json.dumps(sorted(tp.partition for tp in consumer.assignment())), flush=True)
"""


def test_a_killed_member_loses_its_partitions_after_its_session(groups: Groups) -> None:
    topic, group = groups.topic(), f"g-{uuid.uuid4().hex[:8]}"
    process = subprocess.Popen(
        [sys.executable, "-c", KILLABLE, groups.bootstrap, topic, group, str(SESSION_MS)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=Path(__file__).parent,
    )
    # its assignments, read on a thread: a blocking read in the wait would hang the test if the process hung
    printed: list[list[int]] = []
    stdout = process.stdout
    assert stdout is not None
    reader = threading.Thread(
        target=lambda: printed.extend(json.loads(line) for line in iter(stdout.readline, "")), daemon=True
    )
    reader.start()
    try:
        with members(kafka_python_member(groups.bootstrap, topic, group)) as (survivor,):
            wait_for(lambda: printed and printed[-1] and survivor.assignment, WAIT_S, what="the group of two")
            assert len(survivor.assignment) < PARTITIONS
            process.send_signal(signal.SIGKILL)
            process.wait(10)
            wait_for(lambda: survivor.assignment == frozenset(range(PARTITIONS)), WAIT_S, what="the survivor alone")
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)


@pytest.mark.parametrize("client", sorted(MEMBERS))
def test_a_clean_close_leaves_the_group_at_once(groups: Groups, client: str) -> None:
    make = MEMBERS[client]
    topic, group = groups.topic(), f"g-{uuid.uuid4().hex[:8]}"
    admin = KafkaAdminClient(bootstrap_servers=groups.bootstrap)
    try:
        with members(make(groups.bootstrap, topic, group), make(groups.bootstrap, topic, group)) as (a, b):
            wait_for(lambda: split_evenly(a, b), WAIT_S, what="two members")
            b.close()  # sends LeaveGroup before it returns
            described = admin.describe_groups([group])[group]
            assert len(described["members"]) == 1  # gone without waiting for its session to end
            wait_for(lambda: a.assignment == frozenset(range(PARTITIONS)), WAIT_S, what="the member left alone")
    finally:
        admin.close()


@pytest.mark.parametrize("client", sorted(MEMBERS))
def test_a_static_member_rejoins_without_a_rebalance(groups: Groups, client: str) -> None:
    make = MEMBERS[client]
    topic, group = groups.topic(), f"g-{uuid.uuid4().hex[:8]}"
    with members(make(groups.bootstrap, topic, group, "a"), make(groups.bootstrap, topic, group, "b")) as (a, b):
        wait_for(lambda: split_evenly(a, b), WAIT_S, what="two static members")
        before, assigned_b = a.assignment, b.assigned
        a.close()  # gone without a LeaveGroup (a static member never sends one), its session still running
        with members(make(groups.bootstrap, topic, group, "a")) as (again,):
            wait_for(lambda: again.assignment, WAIT_S, what="the restarted static member's assignment")
            assert again.assignment == before
            assert b.assigned == assigned_b and b.assignment == frozenset(range(PARTITIONS)) - before


def test_list_and_describe_groups_with_both_admin_clients(groups: Groups) -> None:
    topic, group = groups.topic(), f"g-{uuid.uuid4().hex[:8]}"
    with members(
        kafka_python_member(groups.bootstrap, topic, group), confluent_member(groups.bootstrap, topic, group)
    ) as (
        a,
        b,
    ):
        wait_for(lambda: split_evenly(a, b), WAIT_S, what="two members")
        admin = KafkaAdminClient(bootstrap_servers=groups.bootstrap)
        try:
            listed = {g["group_id"]: (g["protocol_type"], g["group_state"]) for g in admin.list_groups()}
            assert listed[group] == ("consumer", "Stable")
            stable = [g["group_id"] for g in admin.list_groups(states_filter=["Stable"])]
            empty = [g["group_id"] for g in admin.list_groups(states_filter=["Empty"])]
            assert group in stable and group not in empty
            described = admin.describe_groups([group])[group]
            assert (described["group_state"], described["protocol_type"], described["protocol_data"]) == (
                "Stable",
                "consumer",
                "range",
            )
            assert described["error"] is None and len(described["members"]) == 2
        finally:
            admin.close()
        confluent = AdminClient({"bootstrap.servers": groups.bootstrap})
        listed = confluent.list_consumer_groups(request_timeout=30).result()
        assert group in {g.group_id for g in listed.valid}
        description = confluent.describe_consumer_groups([group], request_timeout=30)[group].result()
        assert str(description.state).endswith("STABLE") and len(description.members) == 2
        assignments = sorted(p.partition for m in description.members for p in m.assignment.topic_partitions)
        assert assignments == list(range(PARTITIONS))
        admin = KafkaAdminClient(bootstrap_servers=groups.bootstrap)
        try:
            assert admin.delete_groups([group]) == {group: "NonEmptyGroupError"}
            a.close()
            b.close()
            wait_for(lambda: admin.describe_groups([group])[group]["group_state"] == "Empty", WAIT_S, what="empty")
            assert admin.delete_groups([group]) == {group: "OK"}
            assert admin.describe_groups([group])[group]["group_state"] == "Dead"
            assert admin.delete_groups([group]) == {group: "GroupIdNotFoundError"}
        finally:
            admin.close()


def assigned_after_poll(consumer: ConfluentConsumer) -> int:
    consumer.poll(0.1)
    return len(consumer.assignment())


def test_a_group_commits_and_resumes_across_a_kill_of_its_coordinator(groups: Groups) -> None:
    """Last in the module: it stops a broker (and starts it again)."""
    topic, group = groups.topic(partitions=2), f"g-{uuid.uuid4().hex[:8]}"
    kafka_python_produce(groups.bootstrap, topic, make_records(0, 10) + make_records(1, 10))
    config = {
        "group.id": group,
        "session.timeout.ms": 10_000,
        "heartbeat.interval.ms": 500,
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
    }
    consumer = ConfluentConsumer({"bootstrap.servers": groups.bootstrap, **config})
    coordinator = -1
    closed = False
    try:
        consumer.subscribe([topic])
        wait_for(
            lambda: assigned_after_poll(consumer) == 2,
            WAIT_S,
            what=f"the member's assignment of {topic}",
        )
        consumer.commit(offsets=[CkTopicPartition(topic, 0, 3), CkTopicPartition(topic, 1, 5)], asynchronous=False)
        coordinator = leader_of(groups.zk, GROUP_METADATA_TOPIC_NAME, partition_for(group, OFFSETS_PARTITIONS))
        groups.local.stop_broker(coordinator, hard=True)
        failures: list[str] = []

        def commit_again() -> bool:
            # the member finds the new coordinator, which loaded its group from the log
            consumer.poll(0.1)
            try:
                consumer.commit(
                    offsets=[CkTopicPartition(topic, 0, 4), CkTopicPartition(topic, 1, 6)], asynchronous=False
                )
            except KafkaException as error:
                failures.append(f"{time.strftime('%H:%M:%S')} {error}")
                return False
            return True

        try:
            wait_for(commit_again, WAIT_S, what="a commit to the new coordinator")
        except TimeoutError as timeout:
            raise AssertionError(f"{timeout}: {failures[:3]} ... {failures[-3:]}") from timeout
        consumer.close()
        closed = True
        alive = ",".join(
            b.endpoint.removeprefix("PLAINTEXT://")
            for b in groups.local.status().brokers
            if b.endpoint and b.broker_id != coordinator
        )
        resumed = ConfluentConsumer({"bootstrap.servers": alive, **config})
        try:
            resumed.subscribe([topic])
            wait_for(
                lambda: assigned_after_poll(resumed) == 2,
                WAIT_S,
                what="the new member's assignment",
            )
            # it resumes from the commits the new coordinator took
            committed = resumed.committed([CkTopicPartition(topic, 0), CkTopicPartition(topic, 1)], timeout=30)
            assert [tp.offset for tp in committed] == [4, 6]
        finally:
            resumed.close()
    finally:
        if not closed:
            with contextlib.suppress(Exception):
                consumer.close()
        if coordinator >= 0:
            groups.local.start_broker(coordinator)
