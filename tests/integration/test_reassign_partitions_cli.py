"""kafkaops reassign-partitions --execute/--verify/--cancel/--list against a real ZooKeeper.

The controller's side (moving replicas, completing the intent) is set up by hand here: the topic
znode's adding/removing replicas, `/admin/reassign_partitions` and partition state znodes are written
directly, so these tests pin the tool's reads, writes and texts, not the controller's behaviour.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from kafkaops.admin.kafka_text import topic_partition_hash
from kafkaops.cluster.common.jvm_text import scala_hash_set_order
from kafkaops.cluster.zk import znodes
from kafkaops.cluster.zk.values import (
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    ReplicaAssignment,
    TopicAssignment,
    TopicPartition,
)

REASSIGN = znodes.ReassignPartitionsZNode.path()
CANNOT_EXECUTE = (
    "Cannot execute because there is an existing partition assignment.  Use --additional to override this and "
    "create a new partition assignment in addition to the existing one. The --additional flag can also be used "
    "to change the throttle by resubmitting the current reassignment.\n"
)


def reassignment_text(*entries: tuple[str, int, list[int]]) -> str:
    return json.dumps(
        {"version": 1, "partitions": [{"topic": t, "partition": p, "replicas": r} for t, p, r in entries]}
    )


@pytest.fixture
def rfile(tmp_path: Path):  # type: ignore[no-untyped-def]
    counter = iter(range(1000))

    def write(*entries: tuple[str, int, list[int]], text: str | None = None) -> str:
        path = tmp_path / f"reassignment-{next(counter)}.json"
        path.write_text(text if text is not None else reassignment_text(*entries))
        return str(path)

    return write


@pytest.fixture
def cluster(zk, brokers):  # type: ignore[no-untyped-def]
    """Brokers 0-3; foo: 0 -> [0,1], 1 -> [1,2], 2 -> [2,3]; bar: 0 -> [1,0]."""
    brokers([0, 1, 2, 3])
    zk.create_topic("foo", {0: [0, 1], 1: [1, 2], 2: [2, 3]}, {})
    zk.create_topic("bar", {0: [1, 0]}, {})
    return zk


def reassigning(zk, topic: str, partition: int, target: list[int]) -> ReplicaAssignment:  # type: ignore[no-untyped-def]
    """What the controller writes when it starts moving a partition (KIP-455 phase U)."""
    current, version = zk.get_topic_assignment_versioned(topic)
    moving = current.partitions[partition].reassign_to(target)
    zk.set_topic_assignment(
        topic, TopicAssignment({**current.partitions, partition: moving}, current.topic_id), version
    )
    return moving


def finished(zk, topic: str, partition: int, replicas: list[int]) -> None:  # type: ignore[no-untyped-def]
    current, version = zk.get_topic_assignment_versioned(topic)
    zk.set_topic_assignment(
        topic,
        TopicAssignment({**current.partitions, partition: ReplicaAssignment(tuple(replicas))}, current.topic_id),
        version,
    )


def pending(zk, *entries: tuple[str, int, list[int]]) -> None:  # type: ignore[no-untyped-def]
    zk.ensure_paths([znodes.AdminZNode.path()])
    zk.create(REASSIGN, znodes.ReassignPartitionsZNode.encode({TopicPartition(t, p): r for t, p, r in entries}))


def state(zk, topic: str, partition: int, leader: int, isr: list[int]) -> None:  # type: ignore[no-untyped-def]
    path = znodes.TopicPartitionStateZNode.path(topic, partition)
    data = znodes.TopicPartitionStateZNode.encode(LeaderIsrAndControllerEpoch(LeaderAndIsr(leader, 1, tuple(isr)), 1))
    if zk.exists(path):
        zk.kazoo.set(path, data)
    else:
        zk.kazoo.create(path, data, makepath=True)


def set_config(zk, entity_type: str, name: str, config: dict[str, str]) -> None:  # type: ignore[no-untyped-def]
    _, version = zk.get_entity_config(entity_type, name)
    zk.set_entity_config_and_notify(entity_type, name, config, version)


def config_of(zk, entity_type: str, name: str) -> bytes | None:  # type: ignore[no-untyped-def]
    entry = zk.get(znodes.ConfigEntityZNode.path(entity_type, name))
    return None if entry is None else entry[0]


def notifications(zk) -> list[str]:  # type: ignore[no-untyped-def]
    path = znodes.ConfigEntityChangeNotificationZNode.path()
    return [
        znodes.ConfigEntityChangeNotificationSequenceZNode.decode(zk.get(f"{path}/{c}")[0])
        for c in sorted(zk.get_children(path) or [])
    ]


def reassign(run_cli, *args: str, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    return run_cli("reassign-partitions", *args, env=env)


# --- --execute ----------------------------------------------------------------------------------


def test_execute_writes_the_intent_byte_exact_and_prints_the_rollback(cluster, run_cli, rfile, zk_tree):
    before = zk_tree()
    result = reassign(run_cli, "--execute", "--reassignment-json-file", rfile(("foo", 1, [2, 3]), ("foo", 0, [3, 2])))
    assert result.exit_code == 0, result.stderr
    assert result.stdout == (
        "Current partition replica assignment\n\n"
        '{"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":[0,1],"log_dirs":["any","any"]},'
        '{"topic":"foo","partition":1,"replicas":[1,2],"log_dirs":["any","any"]}]}\n\n'
        "Save this to use as the --reassignment-json-file option during rollback\n"
        "Successfully started partition reassignments for foo-0,foo-1\n"
    )
    after = zk_tree()
    # file order (a Scala Map of up to 4 entries keeps insertion order); nothing else written
    assert after[REASSIGN] == (
        b'{"version":1,"partitions":[{"topic":"foo","partition":1,"replicas":[2,3]},'
        b'{"topic":"foo","partition":0,"replicas":[3,2]}]}'
    )
    assert {k: v for k, v in after.items() if k != REASSIGN} == before


def test_execute_with_more_than_four_partitions_writes_kafkas_hash_map_order(zk, brokers, run_cli, rfile):
    brokers([0, 1])
    zk.create_topic("wide", {p: [0, 1] for p in range(7)}, {})
    result = reassign(run_cli, "--execute", "--reassignment-json-file", rfile(*(("wide", p, [1, 0]) for p in range(7))))
    assert result.exit_code == 0, result.stderr
    assert result.stdout.endswith(
        "Successfully started partition reassignments for wide-0,wide-1,wide-2,wide-3,wide-4,wide-5,wide-6\n"
    )
    hashes = {topic_partition_hash(TopicPartition("wide", p)): p for p in range(7)}
    order = [hashes[h] for h in scala_hash_set_order(hashes)]
    assert order != list(range(7))  # a HashMap, not the file order
    written = json.loads(zk.get(REASSIGN)[0])["partitions"]
    assert [e["partition"] for e in written] == order


def test_execute_with_throttle_sets_kafkas_throttle_configs(cluster, run_cli, rfile):
    set_config(cluster, "brokers", "2", {"log.cleaner.threads": "2"})
    result = reassign(
        run_cli,
        "--execute",
        "--reassignment-json-file",
        rfile(("foo", 0, [2, 3]), ("foo", 1, [2, 1])),
        "--throttle",
        "1000",
    )
    assert result.exit_code == 0, result.stderr
    assert result.stdout.split("\n")[-5:] == [
        "Save this to use as the --reassignment-json-file option during rollback",
        "Warning: You must run --verify periodically, until the reassignment completes, to ensure the throttle is removed.",
        "The inter-broker throttle limit was set to 1000 B/s",
        "Successfully started partition reassignments for foo-0,foo-1",
        "",
    ]
    # leader: every source replica of each moving partition; follower: destinations not already sources
    assert config_of(cluster, "topics", "foo") == (
        b'{"version":1,"config":{"leader.replication.throttled.replicas":"0:0,0:1,1:1,1:2",'
        b'"follower.replication.throttled.replicas":"0:2,0:3"}}'
    )
    rates = b'"leader.replication.throttled.rate":"1000","follower.replication.throttled.rate":"1000"'
    for broker in ("0", "1", "3"):
        assert config_of(cluster, "brokers", broker) == b'{"version":1,"config":{' + rates + b"}}"
    assert json.loads(config_of(cluster, "brokers", "2") or b"")["config"] == {
        "log.cleaner.threads": "2",
        "leader.replication.throttled.rate": "1000",
        "follower.replication.throttled.rate": "1000",
    }
    # one change notification per entity, topics first (Kafka's order), then the znode
    assert notifications(cluster) == ["brokers/2", "topics/foo", "brokers/0", "brokers/1", "brokers/2", "brokers/3"]
    assert cluster.exists(REASSIGN)


def test_execute_only_reordering_writes_an_empty_follower_list(cluster, run_cli, rfile):
    result = reassign(run_cli, "--execute", "--reassignment-json-file", rfile(("bar", 0, [0, 1])), "--throttle", "0")
    assert result.exit_code == 0, result.stderr
    assert json.loads(config_of(cluster, "topics", "bar") or b"")["config"] == {
        "leader.replication.throttled.replicas": "0:0,0:1",
        "follower.replication.throttled.replicas": "",
    }


def test_execute_replica_alter_log_dirs_throttle_prints_kafkas_lines_and_sets_nothing(cluster, run_cli, rfile, zk_tree):
    before = zk_tree()
    result = reassign(
        run_cli,
        "--execute",
        "--reassignment-json-file",
        rfile(("bar", 0, [0, 1])),
        "--replica-alter-log-dirs-throttle",
        "500",
    )
    assert result.exit_code == 0, result.stderr
    assert result.stdout.split("\n")[-4:] == [
        "Warning: You must run --verify periodically, until the reassignment completes, to ensure the throttle is removed.",
        "The replica-alter-dir throttle limit was set to 500 B/s",
        "Successfully started partition reassignment for bar-0",
        "",
    ]
    assert set(zk_tree()) - set(before) == {REASSIGN}


def test_execute_refuses_an_existing_reassignment_without_additional(cluster, run_cli, rfile, zk_tree):
    pending(cluster, ("bar", 0, [2, 1]))
    before = zk_tree()
    result = reassign(run_cli, "--execute", "--reassignment-json-file", rfile(("foo", 0, [2, 3])), "--throttle", "9")
    assert (result.exit_code, result.stdout, result.stderr) == (1, "", CANNOT_EXECUTE)
    assert zk_tree() == before
    # a move the controller is making counts too, even when the intent znode is gone
    cluster.kazoo.delete(REASSIGN)
    reassigning(cluster, "foo", 2, [3, 0])
    before = zk_tree()
    result = reassign(run_cli, "--execute", "--reassignment-json-file", rfile(("foo", 0, [2, 3])))
    assert (result.exit_code, result.stderr) == (1, CANNOT_EXECUTE)
    assert zk_tree() == before


def test_execute_additional_merges_into_the_intent_and_throttles_every_active_move(cluster, run_cli, rfile):
    pending(cluster, ("bar", 0, [2, 1]), ("foo", 0, [3, 1]))
    result = reassign(
        run_cli,
        "--execute",
        "--additional",
        "--reassignment-json-file",
        rfile(("foo", 0, [2, 3]), ("foo", 1, [1, 3])),
        "--throttle",
        "500",
    )
    assert result.exit_code == 0, result.stderr
    assert result.stdout.endswith("Successfully started partition reassignments for foo-0,foo-1\n")
    # listed partitions keep their place (foo-0 takes its new target), new ones are appended
    assert zk_tree_entry(cluster) == [("bar", 0, [2, 1]), ("foo", 0, [2, 3]), ("foo", 1, [1, 3])]
    configs = {t: json.loads(config_of(cluster, "topics", t) or b"")["config"] for t in ("foo", "bar")}
    assert configs == {
        "foo": {
            "leader.replication.throttled.replicas": "0:0,0:1,1:1,1:2",
            "follower.replication.throttled.replicas": "0:2,0:3,1:3",
        },
        # bar-0 is not in the file: its active move is throttled too (Kafka's move map)
        "bar": {"leader.replication.throttled.replicas": "0:0,0:1", "follower.replication.throttled.replicas": "0:2"},
    }


def zk_tree_entry(zk) -> list[tuple[str, int, list[int]]]:  # type: ignore[no-untyped-def]
    return [(e["topic"], e["partition"], e["replicas"]) for e in json.loads(zk.get(REASSIGN)[0])["partitions"]]


def test_execute_bad_input_texts_and_nothing_written(cluster, run_cli, rfile, zk_tree):
    before = zk_tree()
    cases = [
        (rfile(text=""), "Error: The input string shouldn't be empty\n at [Source: UNKNOWN; line: -1, column: -1]"),
        (
            rfile(text="{nope"),
            "Error: Unexpected character ('n' (code 110)): was expecting double-quote to start field name\n"
            ' at [Source: (String)"{nope"; line: 1, column: 3]',
        ),
        (rfile(text='{"version":2,"partitions":[]}'), "Error: Not supported version field value 2"),
        (rfile(text='{"version":1,"partitions":[]}'), "Error: Partition reassignment list cannot be empty"),
        (rfile(text='{"version":1}'), "Error: Partition reassignment list cannot be empty"),
        (rfile(("foo", 0, [])), "Error: Partition replica list cannot be empty"),
        (
            rfile(("foo", 0, [1, 2]), ("foo", 0, [2, 3])),
            "Error: Partition reassignment contains duplicate topic partitions: foo-0",
        ),
        (
            rfile(("foo", 0, [1, 1]), ("foo", 1, [2, 3, 2])),
            "Error: Partition replica lists may not contain duplicate entries: foo-0 contains multiple entries for 1. "
            "foo-1 contains multiple entries for 2",
        ),
        (
            rfile(
                text='{"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":[1,2],"log_dirs":["any"]}]}'
            ),
            "Error: Size of replicas list List(1, 2) is different from size of log dirs list List(any) for partition foo-0",
        ),
        (
            rfile(text='{"partitions":[{"topic":"foo","partition":0,"replicas":[1,2],"log_dirs":["any","/data/b"]}]}'),
            "Error: bootstrap-server needs to be provided when replica reassignments are present.",
        ),
        (
            rfile(text='{"partitions":[{"topic":"foo","partition":"0","replicas":[1]}]}'),
            'Error: Expected `Int` value, received "0"',
        ),
        (rfile(text='{"partitions":[{"topic":"foo","replicas":[1]}]}'), "Error: No such field exists: `partition`"),
        (
            rfile(("foo", 0, [1, 2]), ("foo", 5, [1]), ("nope", 0, [1])),
            "Error: The proposed assignment contains non-existent partitions: List(foo-5, nope-0)",
        ),
        # a name that cannot be a topic is just a partition that does not exist (`/brokers/topics/` is no topic)
        (
            rfile(("", 0, [1]), ("a/b", 0, [1])),
            "Error: The proposed assignment contains non-existent partitions: List(-0, a/b-0)",
        ),
        (
            rfile(("foo", 0, [1, 9]), ("foo", 1, [7, 2, 9])),
            "Error: The proposed assignment contains non-existent brokerIDs: 9,7",
        ),
        (str(Path(rfile(text="")).with_name("missing.json")), "Error: Cannot read the reassignment file "),
    ]
    for path, message in cases:
        result = reassign(run_cli, "--execute", "--reassignment-json-file", path, "--throttle", "100")
        assert result.exit_code == 1, (path, result.stdout)
        assert result.stdout == ""
        assert result.stderr.startswith(message + ("" if message.endswith(" ") else "\n")), result.stderr
    assert zk_tree() == before


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--cancel",), 'Missing required argument "[reassignment-json-file]"'),
        (("--list", "--throttle", "5"), 'Option "[throttle]" can\'t be used with action "[list]"'),
        (("--list", "--wait"), 'Option "[wait]" can\'t be used with action "[list]"'),
        (
            ("--cancel", "--reassignment-json-file", "r", "--additional"),
            'Option "[additional]" can\'t be used with action "[cancel]"',
        ),
        (
            ("--verify", "--reassignment-json-file", "r", "--timeout", "5"),
            'Option "[timeout]" can\'t be used with action "[verify]"',
        ),
        (
            ("--verify", "--reassignment-json-file", "r", "--throttle", "5"),
            'Option "[throttle]" can\'t be used with action "[verify]"',
        ),
        (
            ("--execute", "--reassignment-json-file", "r", "--preserve-throttles"),
            'Option "[preserve-throttles]" can\'t be used with action "[execute]"',
        ),
        (
            ("--execute", "--reassignment-json-file", "r", "--wait"),
            'Option "[wait]" can\'t be used with action "[execute]"',
        ),
        (
            ("--execute", "--list"),
            "Command must include exactly one action: --generate, --execute, --verify, --cancel, --list",
        ),
    ],
)
def test_kafkas_option_checks(run_cli, args, message, zk_tree):
    before = zk_tree()
    result = reassign(run_cli, *args)
    assert result.exit_code == 1
    assert result.stderr.startswith(message + "\n")
    # the short usage follows (issue 19: Kafka's whole help would bury the one-line message)
    assert result.stderr.endswith(
        "Usage: kafkaops reassign-partitions [OPTIONS]\nTry 'kafkaops reassign-partitions --help' for help.\n"
    )
    assert zk_tree() == before


def test_a_malformed_bootstrap_server_gets_kafkas_message(run_cli, rfile, zk_tree):
    before = zk_tree()
    result = reassign(run_cli, "--list", "--bootstrap-server", "nonsense")
    assert result.exit_code == 1
    assert result.stderr == "Error: Invalid url in bootstrap.servers: nonsense\n"
    assert zk_tree() == before


def test_command_config_needs_the_bootstrap_server(run_cli, tmp_path, zk_tree):
    before = zk_tree()
    (tmp_path / "admin.properties").write_text("client.id=x\n")
    result = reassign(run_cli, "--list", "--command-config", str(tmp_path / "admin.properties"))
    assert result.exit_code == 1
    assert result.stderr == 'Error: You must specify --bootstrap-server when using "[command-config]"\n'
    assert zk_tree() == before


# --- --verify -----------------------------------------------------------------------------------


def test_verify_states_and_throttles_kept_while_anything_moves(cluster, run_cli, rfile, zk_tree):
    finished(cluster, "foo", 0, [2, 3])  # complete
    reassigning(cluster, "foo", 2, [3, 0])  # the controller is moving it; the intent is gone already
    pending(cluster, ("bar", 0, [2, 1]))  # listed, not picked up yet
    set_config(cluster, "brokers", "0", {"leader.replication.throttled.rate": "10"})
    path = rfile(("foo", 2, [3, 0]), ("foo", 1, [2, 1]), ("gone", 0, [1]), ("bar", 0, [2, 1]), ("foo", 0, [2, 3]))
    before = zk_tree()
    result = reassign(run_cli, "--verify", "--reassignment-json-file", path)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == (
        "Status of partition reassignment:\n"
        "Reassignment of partition bar-0 is still in progress.\n"
        "Reassignment of partition foo-0 is complete.\n"
        "There is no active reassignment of partition foo-1, but replica set is 1,2 rather than 2,1.\n"
        "Reassignment of partition foo-2 is still in progress.\n"
        "There is no active reassignment of partition gone-0, but replica set is  rather than 1.\n"
    )
    assert zk_tree() == before  # something is moving: throttles stay


def test_verify_clears_every_reassignment_throttle_when_nothing_moves(cluster, run_cli, rfile):
    finished(cluster, "foo", 0, [2, 3])
    for broker, config in {
        "0": {"leader.replication.throttled.rate": "10", "follower.replication.throttled.rate": "10"},
        "2": {"replica.alter.log.dirs.io.max.bytes.per.second": "5", "log.cleaner.threads": "2"},
        "7": {"leader.replication.throttled.rate": "10"},  # a broker that is gone: not in the file, kept
    }.items():
        set_config(cluster, "brokers", broker, config)
    set_config(
        cluster,
        "topics",
        "foo",
        {
            "retention.ms": "1000",
            "leader.replication.throttled.replicas": "0:0",
            "follower.replication.throttled.replicas": "0:2",
        },
    )
    set_config(cluster, "topics", "bar", {"leader.replication.throttled.replicas": "0:1"})
    sent = len(notifications(cluster))
    result = reassign(run_cli, "--verify", "--reassignment-json-file", rfile(("foo", 0, [2, 3])))
    assert result.exit_code == 0, result.stderr
    assert result.stdout == (
        "Status of partition reassignment:\n"
        "Reassignment of partition foo-0 is complete.\n"
        "Clearing broker-level throttles on brokers 0,1,2,3\n"
        "Clearing topic-level throttles on topic foo\n"
    )
    assert config_of(cluster, "brokers", "0") == b'{"version":1,"config":{}}'
    assert config_of(cluster, "brokers", "1") is None  # nothing to clear: nothing written
    assert json.loads(config_of(cluster, "brokers", "2") or b"")["config"] == {"log.cleaner.threads": "2"}
    assert json.loads(config_of(cluster, "brokers", "7") or b"")["config"] == {
        "leader.replication.throttled.rate": "10"
    }
    assert config_of(cluster, "topics", "foo") == b'{"version":1,"config":{"retention.ms":"1000"}}'
    assert json.loads(config_of(cluster, "topics", "bar") or b"")["config"] == {
        "leader.replication.throttled.replicas": "0:1"
    }
    assert notifications(cluster)[sent:] == ["brokers/0", "brokers/2", "topics/foo"]


def test_verify_preserve_throttles_and_kafkas_set_orders(zk, brokers, run_cli, rfile, zk_tree):
    brokers([0, 1, 2, 3, 4, 5])
    for topic in ("t1", "t2", "t3", "t4", "t5"):
        zk.create_topic(topic, {0: [0, 1]}, {})
    set_config(zk, "brokers", "5", {"leader.replication.throttled.rate": "10"})
    path = rfile(*((t, 0, [0, 1]) for t in ("t1", "t2", "t3", "t4", "t5")))
    before = zk_tree()
    kept = reassign(run_cli, "--verify", "--preserve-throttles", "--reassignment-json-file", path)
    assert kept.exit_code == 0 and "Clearing" not in kept.stdout
    assert zk_tree() == before
    cleared = reassign(run_cli, "--verify", "--reassignment-json-file", path)
    # Scala sets of more than 4 elements iterate in hash-trie order (reference §0.2: Set(0..5) -> 0,5,1,2,3,4)
    assert cleared.stdout.split("\n")[-3:] == [
        "Clearing broker-level throttles on brokers 0,5,1,2,3,4",
        "Clearing topic-level throttles on topics t3,t2,t1,t4,t5",  # t4 and t5 share a trie node
        "",
    ]


def test_verify_refuses_log_dir_moves(cluster, run_cli, rfile, zk_tree):
    before = zk_tree()
    path = rfile(text='{"partitions":[{"topic":"foo","partition":0,"replicas":[1],"log_dirs":["/d"]}]}')
    for extra in ((), ("--wait",)):
        result = reassign(run_cli, "--verify", "--reassignment-json-file", path, *extra)
        assert (result.exit_code, result.stdout) == (1, "")
        assert result.stderr == "Error: bootstrap-server needs to be provided when replica reassignments are present.\n"
    assert zk_tree() == before


def test_verify_json_output(cluster, run_cli, rfile):
    finished(cluster, "foo", 0, [2, 3])
    result = reassign(
        run_cli, "--verify", "--reassignment-json-file", rfile(("foo", 0, [2, 3]), ("foo", 1, [2])), "--output", "json"
    )
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout) == {
        "partitions": [
            {"topic": "foo", "partition": 0, "state": "complete", "current": [2, 3], "target": [2, 3]},
            {"topic": "foo", "partition": 1, "state": "failed", "current": [1, 2], "target": [2]},
        ],
        "ongoing": False,
        "throttles_cleared": {"brokers": [0, 1, 2, 3], "topics": ["foo"]},
    }


# --- --verify --wait ----------------------------------------------------------------------------


def test_wait_follows_the_move_until_it_completes(cluster, run_cli, rfile):
    reassigning(cluster, "foo", 0, [2, 3])
    pending(cluster, ("foo", 0, [2, 3]))
    state(cluster, "foo", 0, 0, [0, 1])

    def controller() -> None:  # the controller's side, by hand
        time.sleep(1.2)
        state(cluster, "foo", 0, 2, [0, 1, 2, 3])
        time.sleep(1.0)
        finished(cluster, "foo", 0, [2, 3])
        state(cluster, "foo", 0, 2, [2, 3])
        cluster.kazoo.delete(REASSIGN)

    mover = threading.Thread(target=controller)
    mover.start()
    try:
        result = reassign(run_cli, "--verify", "--wait", "--reassignment-json-file", rfile(("foo", 0, [2, 3])))
    finally:
        mover.join()
    assert result.exit_code == 0, result.stderr
    assert result.stdout == (
        "foo-0: in progress; replicas: 2,3,0,1; isr: 0,1; adding: 2,3; removing: 0,1\n"
        "foo-0: in progress; replicas: 2,3,0,1; isr: 0,1,2,3; adding: 2,3; removing: 0,1\n"
        "foo-0: complete; replicas: 2,3; isr: 2,3\n"
        "Status of partition reassignment:\n"
        "Reassignment of partition foo-0 is complete.\n"
        "Clearing broker-level throttles on brokers 0,1,2,3\n"
        "Clearing topic-level throttles on topic foo\n"
    )


def test_wait_fails_when_a_partition_ends_elsewhere(cluster, run_cli, rfile):
    result = reassign(
        run_cli, "--verify", "--wait", "--reassignment-json-file", rfile(("foo", 0, [0, 1]), ("foo", 1, [2, 1]))
    )
    assert result.exit_code == 1
    assert (
        "There is no active reassignment of partition foo-1, but replica set is 1,2 rather than 2,1.\n" in result.stdout
    )
    assert result.stderr == "Partition reassignment did not reach its target replicas for: foo-1\n"


def test_wait_times_out(cluster, run_cli, rfile, zk_tree):
    pending(cluster, ("foo", 0, [2, 3]))
    before = zk_tree()
    started = time.monotonic()
    result = reassign(
        run_cli,
        "--verify",
        "--wait",
        "--timeout",
        "300",
        "--reassignment-json-file",
        rfile(("foo", 0, [2, 3]), ("foo", 1, [1, 2])),
    )
    assert time.monotonic() - started < 5
    assert result.exit_code == 3
    assert result.stdout.endswith(
        "Status of partition reassignment:\n"
        "Reassignment of partition foo-0 is still in progress.\n"
        "Reassignment of partition foo-1 is complete.\n"
    )
    assert result.stderr == "Timed out after 300 ms waiting for partition reassignment of: foo-0\n"
    assert zk_tree() == before


def test_wait_json_output(cluster, run_cli, rfile):
    result = reassign(
        run_cli,
        "--verify",
        "--wait",
        "--output",
        "json",
        "--preserve-throttles",
        "--reassignment-json-file",
        rfile(("foo", 0, [0, 1])),
    )
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["timed_out"] is False and document["throttles_cleared"] is None
    assert document["partitions"] == [
        {"topic": "foo", "partition": 0, "state": "complete", "current": [0, 1], "target": [0, 1]}
    ]


# --- --cancel -----------------------------------------------------------------------------------


def test_cancel_writes_the_original_replicas_back(cluster, run_cli, rfile):
    reassigning(cluster, "foo", 0, [2, 3])
    pending(cluster, ("foo", 0, [2, 3]), ("bar", 0, [2, 1]), ("foo", 2, [0, 1]))
    set_config(cluster, "topics", "foo", {"leader.replication.throttled.replicas": "0:0"})
    path = rfile(("foo", 0, [2, 3]), ("foo", 1, [2, 3]), ("foo", 2, [0, 1]))
    result = reassign(run_cli, "--cancel", "--reassignment-json-file", path)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == (
        "Successfully cancelled partition reassignments for: foo-0,foo-2\n"
        "None of the specified partition moves are active.\n"
        "Clearing broker-level throttles on brokers 0,1,2,3\n"
        "Clearing topic-level throttles on topic foo\n"
    )
    # foo-0 goes back to its origin (replicas - adding); foo-2 was not picked up yet: its current replicas
    assert cluster.get(REASSIGN)[0] == (
        b'{"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":[0,1]},'
        b'{"topic":"bar","partition":0,"replicas":[2,1]},{"topic":"foo","partition":2,"replicas":[2,3]}]}'
    )
    assert config_of(cluster, "topics", "foo") == b'{"version":1,"config":{}}'


def test_cancel_without_intent_znode_creates_it(cluster, run_cli, rfile):
    reassigning(cluster, "bar", 0, [3])
    result = reassign(run_cli, "--cancel", "--preserve-throttles", "--reassignment-json-file", rfile(("bar", 0, [3])))
    assert result.exit_code == 0, result.stderr
    assert result.stdout == (
        "Successfully cancelled partition reassignment for: bar-0\nNone of the specified partition moves are active.\n"
    )
    assert cluster.get(REASSIGN)[0] == b'{"version":1,"partitions":[{"topic":"bar","partition":0,"replicas":[1,0]}]}'


def test_cancel_with_nothing_active_writes_nothing(cluster, run_cli, rfile, zk_tree):
    pending(cluster, ("bar", 0, [2, 1]))
    before = zk_tree()
    result = reassign(
        run_cli,
        "--cancel",
        "--preserve-throttles",
        "--reassignment-json-file",
        rfile(("foo", 0, [2, 3]), ("nope", 0, [1])),
    )
    assert result.exit_code == 0, result.stderr
    assert result.stdout == (
        "None of the specified partition reassignments are active.\nNone of the specified partition moves are active.\n"
    )
    assert zk_tree() == before
    as_json = reassign(run_cli, "--cancel", "--reassignment-json-file", rfile(("foo", 0, [2, 3])), "--output", "json")
    assert json.loads(as_json.stdout) == {
        "cancelled": [],
        "throttles_cleared": {"brokers": [0, 1, 2, 3], "topics": ["foo"]},
    }


# --- --list -------------------------------------------------------------------------------------


def test_list_and_cancel_take_zookeeper(cluster, run_cli, rfile, zk_connect):
    """Issue 19: `--list` and `--cancel` accept `--zookeeper` (Kafka 2.8 refuses it there), with no
    KAFKAOPS_ZOOKEEPER to fall back on."""
    no_default = {"KAFKAOPS_ZOOKEEPER": ""}
    result = reassign(run_cli, "--list", "--zookeeper", zk_connect, env=no_default)
    assert (result.exit_code, result.stdout) == (0, "No partition reassignments found.\n"), result.stderr
    reassigning(cluster, "foo", 2, [3, 0])
    result = reassign(
        run_cli,
        "--cancel",
        "--zookeeper",
        zk_connect,
        "--reassignment-json-file",
        rfile(("foo", 2, [3, 0])),
        env=no_default,
    )
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("Successfully cancelled partition reassignment for: foo-2\n")
    result = reassign(
        run_cli,
        "--execute",
        "--additional",
        "--zookeeper",
        zk_connect,
        "--reassignment-json-file",
        rfile(("bar", 0, [2, 1])),
        env=no_default,
    )
    assert result.exit_code == 0, result.stderr


def test_list(cluster, run_cli):
    assert reassign(run_cli, "--list").stdout == "No partition reassignments found.\n"
    reassigning(cluster, "foo", 2, [3, 0])
    pending(cluster, ("bar", 0, [2, 1]), ("nope", 0, [1]))
    result = reassign(run_cli, "--list")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == (
        "Current partition reassignments:\n"
        "bar-0: replicas: 2,1,0. adding: 2. removing: 0.\n"
        "foo-2: replicas: 3,0,2. adding: 0. removing: 2.\n"
    )
    assert json.loads(reassign(run_cli, "--list", "--output", "json").stdout) == {
        "reassignments": [
            {"topic": "bar", "partition": 0, "replicas": [2, 1, 0], "adding": [2], "removing": [0]},
            {"topic": "foo", "partition": 2, "replicas": [3, 0, 2], "adding": [0], "removing": [2]},
        ]
    }


def test_execute_json_output(cluster, run_cli, rfile):
    result = reassign(
        run_cli,
        "--execute",
        "--reassignment-json-file",
        rfile(("bar", 0, [2, 1])),
        "--throttle",
        "7",
        "--output",
        "json",
    )
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout) == {
        "current": {
            "version": 1,
            "partitions": [{"topic": "bar", "partition": 0, "replicas": [1, 0], "log_dirs": ["any", "any"]}],
        },
        "proposed": {
            "version": 1,
            "partitions": [{"topic": "bar", "partition": 0, "replicas": [2, 1], "log_dirs": ["any", "any"]}],
        },
        "throttle": 7,
        "topic_throttles": {
            "bar": {
                "leader.replication.throttled.replicas": "0:0,0:1",
                "follower.replication.throttled.replicas": "0:2",
            }
        },
        "broker_throttles": {
            b: {"leader.replication.throttled.rate": "7", "follower.replication.throttled.rate": "7"}
            for b in ("0", "1", "2")
        },
        "started": [{"topic": "bar", "partition": 0}],
    }
    refused = reassign(run_cli, "--execute", "--reassignment-json-file", rfile(("bar", 0, [2, 1])), "--output", "json")
    assert refused.exit_code == 1
    assert json.loads(refused.stdout) == {"error": CANNOT_EXECUTE.rstrip("\n")}
