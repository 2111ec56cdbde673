"""kafkaops preferred-replica-election and leader-election against a real ZooKeeper.

The controller is not run here: partition state znodes are written by hand, and where a test needs the
controller to act on `/admin/preferred_replica_election`, a small thread plays its part (elect, delete
the intent), so the tests pin the tools' reads, writes, waits and texts.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from kafkaops.admin import elections
from kafkaops.cluster.zk import znodes
from kafkaops.cluster.zk.values import LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition

ELECTION = znodes.PreferredReplicaElectionZNode.path()


def state(zk, topic: str, partition: int, leader: int, isr: list[int]) -> None:  # type: ignore[no-untyped-def]
    path = znodes.TopicPartitionStateZNode.path(topic, partition)
    data = znodes.TopicPartitionStateZNode.encode(LeaderIsrAndControllerEpoch(LeaderAndIsr(leader, 1, tuple(isr)), 1))
    if zk.exists(path):
        zk.kazoo.set(path, data)
    else:
        zk.kazoo.create(path, data, makepath=True)


def leader_of(zk, topic: str, partition: int) -> int:  # type: ignore[no-untyped-def]
    found = zk.get_partition_states([TopicPartition(topic, partition)])[TopicPartition(topic, partition)]
    return int(found.leader_and_isr.leader)


@pytest.fixture
def cluster(zk, brokers):  # type: ignore[no-untyped-def]
    """foo: 0 -> [0,1] led by 1, 1 -> [1,0] led by 1; gone: 0 -> [0] (marked for deletion)."""
    brokers([0, 1])
    zk.create_topic("foo", {0: [0, 1], 1: [1, 0]}, {})
    zk.create_topic("gone", {0: [0]}, {})
    state(zk, "foo", 0, 1, [0, 1])
    state(zk, "foo", 1, 1, [0, 1])
    state(zk, "gone", 0, 0, [0])
    zk.mark_topic_for_deletion("gone")
    return zk


@pytest.fixture
def jfile(tmp_path: Path):  # type: ignore[no-untyped-def]
    counter = iter(range(1000))

    def write(*partitions: tuple[str, int], text: str | None = None) -> str:
        path = tmp_path / f"election-{next(counter)}.json"
        document = {"partitions": [{"topic": t, "partition": p} for t, p in partitions]}
        path.write_text(text if text is not None else json.dumps(document))
        return str(path)

    return write


class FakeController:
    """Acts on `/admin/preferred_replica_election` as the controller does: elects the preferred replica
    of each listed partition (unless `refuse`), then deletes the intent."""

    def __init__(self, zk, refuse: bool = False) -> None:  # type: ignore[no-untyped-def]
        self.zk, self.refuse = zk, refuse
        self.seen: bytes | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> FakeController:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.is_set():
            entry = self.zk.get(ELECTION)
            if entry is not None:
                time.sleep(0.3)
                self.seen = entry[0]
                for tp in znodes.PreferredReplicaElectionZNode.decode(entry[0]):
                    preferred = self.zk.get_topic_assignments([tp.topic])[tp.topic].partitions[tp.partition].replicas[0]
                    if not self.refuse:
                        state(self.zk, tp.topic, tp.partition, preferred, [0, 1])
                self.zk.kazoo.delete(ELECTION)
            time.sleep(0.05)


# --- kafkaops preferred-replica-election --------------------------------------------------------


def test_preferred_replica_election_writes_the_existing_partitions(cluster, run_cli, jfile, zk_tree):
    before = zk_tree()
    result = run_cli("preferred-replica-election", "--path-to-json-file", jfile(("foo", 1), ("nope", 0), ("foo", 0)))
    assert result.exit_code == 0, result.stderr
    assert result.stdout == (
        "Created preferred replica election path with foo-1,foo-0\n"
        "Successfully started preferred replica election for partitions Set(foo-1, foo-0)\n"
        "Skipping preferred replica leader election for partition nope-0 since it doesn't exist.\n"
    )
    after = zk_tree()
    assert (
        after[ELECTION] == b'{"version":1,"partitions":[{"topic":"foo","partition":1},{"topic":"foo","partition":0}]}'
    )
    assert {k: v for k, v in after.items() if k != ELECTION} == before


def test_preferred_replica_election_of_every_partition(zk, brokers, run_cli):
    brokers([0, 1])
    zk.create_topic("wide", {p: [0, 1] for p in range(6)}, {})
    for p in range(6):
        state(zk, "wide", p, 0, [0, 1])
    zk.create_topic("new", {0: [1, 0]}, {})  # no partition znodes yet: not a partition Kafka knows
    result = run_cli("preferred-replica-election", "--zookeeper", zk.connect_string.hosts + zk.connect_string.chroot)
    assert result.exit_code == 0, result.stderr
    created, started = result.stdout.splitlines()
    expected = elections.PartitionSet.of([TopicPartition("wide", p) for p in range(6)])
    assert started == f"Successfully started preferred replica election for partitions {expected}"
    assert started.startswith("Successfully started preferred replica election for partitions HashSet(wide-")
    assert created == "Created preferred replica election path with " + ",".join(map(str, expected.items))
    written = json.loads(zk.get(ELECTION)[0])["partitions"]
    assert [(e["topic"], e["partition"]) for e in written] == [
        (x.topic, x.partition) for x in elections.election_znode_order(expected)
    ]


def test_preferred_replica_election_in_progress(cluster, run_cli, jfile, zk_tree):
    cluster.ensure_paths(["/admin"])
    cluster.create(ELECTION, znodes.PreferredReplicaElectionZNode.encode([TopicPartition("foo", 0)]))
    before = zk_tree()
    result = run_cli("preferred-replica-election", "--path-to-json-file", jfile(("foo", 1)))
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == "Preferred replica leader election currently in progress for foo-0. Aborting operation\n"
    assert zk_tree() == before


def test_preferred_replica_election_bad_input(cluster, run_cli, jfile, zk_tree):
    before = zk_tree()
    cases = [
        (["--path-to-json-file", jfile(text="")], "Preferred replica election data is empty\n"),
        (["--path-to-json-file", jfile(text="{}")], "Preferred replica election data is empty\n"),
        (["--path-to-json-file", jfile(text="nope")], "Preferred replica election data is empty\n"),
        (
            ["--path-to-json-file", jfile(("foo", 0), ("foo", 0))],
            "Preferred replica election data contains duplicate partitions: foo-0\n",
        ),
        (["--path-to-json-file", jfile(text='{"partitions":{}}')], "Expected JSON array, received {}\n"),
    ]
    for args, message in cases:
        result = run_cli("preferred-replica-election", *args)
        assert (result.exit_code, result.stdout, result.stderr) == (1, "", message)
    usage = run_cli("preferred-replica-election", "--zookeeper", "localhost:1", "--bootstrap-server", "localhost:9092")
    assert usage.exit_code == 1
    assert usage.stderr.startswith("Exactly one of '[bootstrap-server]' or '[zookeeper]' must be provided\n")
    none = run_cli("preferred-replica-election")
    assert none.exit_code == 1 and none.stderr.startswith(
        "This tool helps to causes leadership for each partition to be transferred back to the 'preferred replica'"
    )
    assert zk_tree() == before


# --- kafkaops leader-election -------------------------------------------------------------------


def test_leader_election_through_zookeeper(cluster, run_cli, jfile):
    with FakeController(cluster) as controller:
        result = run_cli(
            "leader-election",
            "--election-type",
            "preferred",
            "--path-to-json-file",
            jfile(("foo", 0), ("foo", 1), ("nope", 0), ("gone", 0)),
        )
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[:2] == [
        "Successfully completed leader election (PREFERRED) for partitions foo-0",
        "Valid replica already elected for partitions foo-1",
    ]
    assert sorted(lines[2:]) == [
        "Error completing leader election (PREFERRED) for partition: gone-0: "
        "org.apache.kafka.common.errors.InvalidTopicException: The topic is being deleted",
        "Error completing leader election (PREFERRED) for partition: nope-0: "
        "org.apache.kafka.common.errors.UnknownTopicOrPartitionException: The partition does not exist.",
    ]
    assert result.stderr == "2 replica(s) could not be elected\n"
    # only the partition that needed an election went to the controller
    assert controller.seen == b'{"version":1,"partitions":[{"topic":"foo","partition":0}]}'
    assert leader_of(cluster, "foo", 0) == 0


def test_leader_election_of_one_partition_and_all_partitions(cluster, run_cli):
    with FakeController(cluster):
        one = run_cli("leader-election", "--election-type", "PREFERRED", "--topic", "foo", "--partition", "0")
    assert (one.exit_code, one.stdout, one.stderr) == (
        0,
        "Successfully completed leader election (PREFERRED) for partitions foo-0\n",
        "",
    )
    state(cluster, "foo", 0, 1, [0, 1])
    with FakeController(cluster) as controller:
        every = run_cli("leader-election", "--election-type", "preferred", "--all-topic-partitions")
    assert every.exit_code == 0, every.stderr
    assert every.stdout == (  # gone-0's topic is being deleted: not one of "all" partitions
        "Successfully completed leader election (PREFERRED) for partitions foo-0\n"
        "Valid replica already elected for partitions foo-1\n"
    )
    assert controller.seen == b'{"version":1,"partitions":[{"topic":"foo","partition":0}]}'


def test_leader_election_when_nothing_needs_electing_writes_nothing(cluster, run_cli, zk_tree):
    before = zk_tree()
    result = run_cli("leader-election", "--election-type", "preferred", "--topic", "foo", "--partition", "1")
    assert (result.exit_code, result.stdout) == (0, "Valid replica already elected for partitions foo-1\n")
    assert zk_tree() == before


def test_leader_election_failure_and_timeout(cluster, run_cli, zk_tree):
    with FakeController(cluster, refuse=True):
        refused = run_cli("leader-election", "--election-type", "preferred", "--topic", "foo", "--partition", "0")
    assert refused.exit_code == 1
    assert refused.stdout == (
        "Error completing leader election (PREFERRED) for partition: foo-0: "
        "org.apache.kafka.common.errors.PreferredLeaderNotAvailableException: Failed to elect leader for partition "
        "foo-0 under strategy PreferredReplicaPartitionLeaderElectionStrategy\n"
    )
    assert refused.stderr == "1 replica(s) could not be elected\n"

    before = zk_tree()
    started = time.monotonic()
    timed_out = run_cli(
        "leader-election", "--election-type", "preferred", "--topic", "foo", "--partition", "0", "--timeout", "400"
    )
    assert time.monotonic() - started < 5
    assert (timed_out.exit_code, timed_out.stdout, timed_out.stderr) == (
        1,
        "",
        "Timeout waiting for election results\n",
    )
    # the intent stays for the controller, as an ElectLeaders request stays with a broker after a client timeout
    assert set(zk_tree()) - set(before) == {ELECTION}


def test_leader_election_waits_for_an_earlier_election(cluster, run_cli):
    cluster.ensure_paths(["/admin"])
    cluster.create(ELECTION, znodes.PreferredReplicaElectionZNode.encode([TopicPartition("foo", 1)]))
    with FakeController(cluster) as controller:
        result = run_cli("leader-election", "--election-type", "preferred", "--topic", "foo", "--partition", "0")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "Successfully completed leader election (PREFERRED) for partitions foo-0\n"
    assert controller.seen == b'{"version":1,"partitions":[{"topic":"foo","partition":0}]}'


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--all-topic-partitions",), "Missing required option(s): election-type"),
        (
            ("--election-type", "preferred"),
            "One and only one of the following options is required: topic, all-topic-partitions, path-to-json-file",
        ),
        (
            ("--election-type", "preferred", "--all-topic-partitions", "--topic", "foo"),
            "One and only one of the following options is required: topic, all-topic-partitions, path-to-json-file",
        ),
        (("--election-type", "preferred", "--topic", "foo"), "Missing required option(s): partition"),
        (
            ("--election-type", "preferred", "--all-topic-partitions", "--partition", "1"),
            "Option partition is only allowed if topic is used",
        ),
        (
            ("--election-type", "bogus", "--all-topic-partitions"),
            "Cannot parse argument 'bogus' of option election-type",
        ),
        (
            ("--election-type", "preferred", "--topic", "foo", "--partition", "x"),
            "Cannot parse argument 'x' of option partition",
        ),
        (("--election-type", "unclean", "--all-topic-partitions"), elections.UNCLEAN_NEEDS_BOOTSTRAP),
    ],
)
def test_leader_election_validations(cluster, run_cli, zk_tree, args, message):
    before = zk_tree()
    result = run_cli("leader-election", *args)
    assert (result.exit_code, result.stdout, result.stderr) == (1, "", message + "\n")
    assert zk_tree() == before


def test_leader_election_file_errors(cluster, run_cli, jfile, zk_tree):
    before = zk_tree()
    for path, message in [
        (jfile(text=""), "Replica election data is empty"),
        (jfile(text="{"), "Replica election data is empty"),
        (jfile(text='{"version":1}'), 'Replica election data is missing "partitions" field'),
        (jfile(("foo", 0), ("foo", 0)), "Replica election data contains duplicate partitions: foo-0"),
        (jfile(text='{"partitions":[{"topic":"foo"}]}'), "No such field exists: `partition`"),
    ]:
        result = run_cli("leader-election", "--election-type", "preferred", "--path-to-json-file", path)
        assert (result.exit_code, result.stdout, result.stderr) == (1, "", message + "\n")
    none = run_cli("leader-election")
    assert none.exit_code == 1 and none.stderr.startswith("This tool attempts to elect a new leader")
    assert zk_tree() == before


def test_json_output(cluster, run_cli, jfile):
    result = run_cli(
        "leader-election", "--election-type", "preferred", "--path-to-json-file", jfile(("foo", 1), ("nope", 0)),
        "--output", "json",
    )  # fmt: skip
    assert result.exit_code == 1
    assert json.loads(result.stdout) == {
        "election_type": "PREFERRED",
        "partitions": [
            {
                "topic": "foo",
                "partition": 1,
                "error": {
                    "code": 84,
                    "name": "ELECTION_NOT_NEEDED",
                    "message": "Leader election not needed for topic partition.",
                },
            },
            {
                "topic": "nope",
                "partition": 0,
                "error": {"code": 3, "name": "UNKNOWN_TOPIC_OR_PARTITION", "message": "The partition does not exist."},
            },
        ],
    }
    assert result.stderr == "1 replica(s) could not be elected\n"
    started = run_cli(
        "preferred-replica-election", "--path-to-json-file", jfile(("foo", 0), ("nope", 0)), "--output", "json"
    )
    assert started.exit_code == 0, started.stderr
    assert json.loads(started.stdout) == {
        "created": [{"topic": "foo", "partition": 0}],
        "skipped": [{"topic": "nope", "partition": 0}],
    }


@pytest.mark.parametrize(
    ("command", "args"),
    [
        ("preferred-replica-election", ()),
        ("leader-election", ("--election-type", "unclean", "--all-topic-partitions")),
        ("leader-election", ("--election-type", "preferred", "--all-topic-partitions")),
    ],
)
def test_an_unreachable_bootstrap_server_is_a_clear_error(run_cli, zk_tree, command, args):
    before = zk_tree()
    result = run_cli(command, *args, "--bootstrap-server", "127.0.0.1:1")
    assert result.exit_code == 1
    assert "No broker answered" in result.stderr and "Traceback" not in result.stderr
    assert zk_tree() == before
