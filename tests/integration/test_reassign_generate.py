"""kafkaops reassign-partitions --generate against a real ZooKeeper: reads Kafka's znodes, writes nothing."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from kafkaops.admin import reassignment as files
from kafkaops.admin.assignment import JavaRandom, assign_replicas_to_brokers
from kafkaops.admin.planner import plan_kafka


@pytest.fixture
def topics_file(tmp_path: Path):  # type: ignore[no-untyped-def]
    def write(*names: str) -> str:
        path = tmp_path / "topics.json"
        path.write_text(files.format_topics_to_move_json(names))
        return str(path)

    return write


def create_topics(zk, layout: dict[str, dict[int, list[int]]]) -> None:  # type: ignore[no-untyped-def]
    for topic, assignment in layout.items():
        zk.create_topic(topic, assignment, {})


def proposed_of(stdout: str) -> dict[tuple[str, int], list[int]]:
    lines = stdout.split("\n")
    assert (
        lines[0] == "Current partition replica assignment"
        and lines[3] == "Proposed partition reassignment configuration"
    )
    return {
        (e.partition.topic, e.partition.partition): list(e.replicas) for e in files.parse_reassignment_json(lines[4])
    }


def kafka_layout(brokers: list[int], topics: dict[str, int], rf: int, seed: int, racks=None):  # type: ignore[no-untyped-def]
    rng = JavaRandom(seed)
    return {t: assign_replicas_to_brokers(brokers, n, rf, racks=racks, rng=rng) for t, n in topics.items()}


def test_generate_adds_a_broker_moving_only_what_balance_needs(zk, brokers, run_cli, topics_file, zk_tree):
    brokers([0, 1, 2, 3])
    layout = kafka_layout([0, 1, 2], {"orders": 6, "payments": 9}, rf=2, seed=3)
    create_topics(zk, layout)
    before = zk_tree()
    result = run_cli(
        "reassign-partitions",
        "--generate",
        "--topics-to-move-json-file",
        topics_file("orders", "payments"),
        "--broker-list",
        "0,1,2,3",
    )
    assert result.exit_code == 0, result.stderr
    assert zk_tree() == before  # --generate writes nothing
    current = {(t, p): r for t, a in layout.items() for p, r in a.items()}
    assert result.stdout.split("\n")[1] == files.format_reassignment_json(current)
    proposed = proposed_of(result.stdout)
    counts = Counter(b for r in proposed.values() for b in r)
    assert sorted(counts.values()) == [7, 7, 8, 8]
    moved = sum(len(set(proposed[k]) - set(current[k])) for k in current)
    assert moved == 7  # 30 replicas: 10 each on 3 brokers -> 8,8,7,7: the new broker takes 7
    assert "Replicas moved: 7 (lower bound 7, 1.00x)" in result.stderr


def test_decommission_by_leaving_a_broker_out(zk, brokers, run_cli, topics_file):
    brokers([0, 1, 2, 3])
    layout = kafka_layout([0, 1, 2, 3], {"events": 8}, rf=3, seed=5)
    create_topics(zk, layout)
    result = run_cli(
        "reassign-partitions",
        "--generate",
        "--topics-to-move-json-file",
        topics_file("events"),
        "--broker-list",
        "0,1,2",
    )
    assert result.exit_code == 0, result.stderr
    proposed = proposed_of(result.stdout)
    assert all(set(r) == {0, 1, 2} for r in proposed.values())
    assert "(removed)" in result.stderr


def test_rack_aware_from_registrations(zk, brokers, run_cli, topics_file):
    racks = {0: "a", 1: "a", 2: "b", 3: "b", 4: "c", 5: "c"}
    brokers(list(racks), racks=racks)
    create_topics(zk, {"t": {p: [p % 2, 2 + p % 2] for p in range(6)}})  # racks a and b only
    result = run_cli(
        "reassign-partitions",
        "--generate",
        "--topics-to-move-json-file",
        topics_file("t"),
        "--broker-list",
        "0,1,2,3,4,5",
    )
    assert result.exit_code == 0, result.stderr
    for replicas in proposed_of(result.stdout).values():
        assert racks[replicas[0]] != racks[replicas[1]]
    result = run_cli(
        "reassign-partitions", "--generate", "--topics-to-move-json-file", topics_file("t"), "--broker-list", "0,1,2,3,4,5",
        "--disable-rack-aware", "--output", "json",
    )  # fmt: skip
    assert result.exit_code == 0
    assert json.loads(result.stdout)["report"]["rack_violations"] == {"before": 0, "after": 0}


def test_kafka_strategy_is_kafkas_generate(zk, brokers, run_cli, topics_file):
    brokers([1, 2, 3, 4])
    layout = kafka_layout([1, 2, 3], {"a": 5, "b": 3}, rf=2, seed=1)
    create_topics(zk, layout)
    result = run_cli(
        "reassign-partitions", "--generate", "--topics-to-move-json-file", topics_file("b", "a"), "--broker-list", "4,3,2,1",
        "--strategy", "kafka", "--seed", "99",
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    current = {(t, p): r for t, a in layout.items() for p, r in a.items()}
    assert proposed_of(result.stdout) == plan_kafka(current, [1, 2, 3, 4], seed=99)


def test_bad_input_texts_and_nothing_written(zk, brokers, run_cli, topics_file, zk_tree, tmp_path):
    brokers([0, 1, 2], racks={0: "a", 1: "b"})
    create_topics(zk, {"t": {0: [0, 1], 1: [1, 0]}})
    before = zk_tree()
    stats = tmp_path / "stats.json"

    def generate(topics: str, broker_list: str, *extra: str):  # type: ignore[no-untyped-def]
        return run_cli(
            "reassign-partitions", "--generate", "--topics-to-move-json-file", topics, "--broker-list", broker_list,
            "--stats-json", str(stats), *extra,
        )  # fmt: skip

    cases = [
        (generate(topics_file("t", "missing"), "0,1"), "Error: Topic missing not found.\n"),
        (
            generate(topics_file("t"), "0,1,7,8"),
            "Error: The broker list contains brokers that are not registered: 7,8\n",
        ),
        (
            generate(topics_file("t"), "0,1,2"),
            "Error: Not all brokers have rack information. Add --disable-rack-aware in command line to make replica "
            "assignment without rack information.\n",
        ),
        (
            generate(topics_file("t"), "0", "--disable-rack-aware"),
            "Error: Replication factor: 2 larger than available brokers: 1.\n",
        ),
        (generate(topics_file("t"), "0,0"), "Error: Broker list contains duplicate entries: 0\n"),
        (generate(topics_file("t", "t"), "0,1"), "Error: List of topics to reassign contains duplicate entries: t\n"),
        (
            generate(topics_file("t"), "0,1", "--bootstrap-server", "nonsense"),
            "Error: Invalid url in bootstrap.servers: nonsense\n",
        ),
        (
            generate(topics_file("t"), "0,1", "--broker-racks", "0:a"),
            "Error: --broker-racks is for offline planning: with ZooKeeper the brokers' registered racks are used\n",
        ),
    ]
    for result, message in cases:
        assert result.exit_code == 1
        assert result.stdout == ""
        assert result.stderr == message
    assert not stats.exists()
    assert zk_tree() == before


def test_rack_aware_works_with_the_racked_brokers_only(zk, brokers, run_cli, topics_file):
    brokers([0, 1, 2], racks={0: "a", 1: "b"})
    create_topics(zk, {"t": {0: [0, 1], 1: [1, 0]}})
    result = run_cli(
        "reassign-partitions", "--generate", "--topics-to-move-json-file", topics_file("t"), "--broker-list", "0,1"
    )
    assert result.exit_code == 0, result.stderr
    assert "Replicas moved: 0" in result.stderr


def test_unreachable_zookeeper_is_a_clean_error(run_cli, topics_file):
    result = run_cli(
        "reassign-partitions", "--generate", "--topics-to-move-json-file", topics_file("t"), "--broker-list", "0",
        env={"KAFKAOPS_ZOOKEEPER": "127.0.0.1:1", "KAFKAOPS_ZK_TIMEOUT_MS": "500"},
    )  # fmt: skip
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: ")
    assert "Traceback" not in result.stderr
