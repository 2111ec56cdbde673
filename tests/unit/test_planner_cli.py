"""`kafkaops reassign-partitions` offline (--current-assignment-json-file): Kafka's validation texts,
Kafka's stdout, the report on stderr, JSON output, stats, batches, bad input (no ZooKeeper needed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kafkaops.admin import reassignment as files
from kafkaops.admin.planner import plan_kafka
from kafkaops.cli.app import app

CURRENT = {("orders", p): [1 + p % 3, 1 + (p + 1) % 3, 1 + (p + 2) % 3] for p in range(6)} | {
    ("payments", p): [1 + p % 3, 1 + (p + 1) % 3] for p in range(4)
}


def run(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(app, ["reassign-partitions", *args], catch_exceptions=False)


@pytest.fixture
def inputs(tmp_path: Path) -> dict[str, str]:
    topics = tmp_path / "topics.json"
    topics.write_text('{"topics":[{"topic":"orders"},{"topic":"payments"}],"version":1}')
    current = tmp_path / "current.json"
    current.write_text(files.format_reassignment_json(CURRENT))
    return {"topics": str(topics), "current": str(current), "dir": str(tmp_path)}


def generate(inputs: dict[str, str], *extra: str):  # type: ignore[no-untyped-def]
    return run(
        "--generate",
        "--topics-to-move-json-file",
        inputs["topics"],
        "--broker-list",
        "1,2,3,4",
        "--current-assignment-json-file",
        inputs["current"],
        *extra,
    )


def proposed_of(stdout: str) -> dict[tuple[str, int], list[int]]:
    lines = stdout.split("\n")
    assert lines[0] == "Current partition replica assignment"
    assert lines[2] == ""
    assert lines[3] == "Proposed partition reassignment configuration"
    assert lines[5:] == [""]
    entries = files.parse_reassignment_json(lines[4])
    return {(e.partition.topic, e.partition.partition): list(e.replicas) for e in entries}


def test_generate_prints_kafkas_two_documents_and_the_report_on_stderr(inputs):
    result = generate(inputs)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.split("\n")[1] == files.format_reassignment_json(CURRENT)
    proposed = proposed_of(result.stdout)
    assert set(proposed) == set(CURRENT)
    assert all(set(r) <= {1, 2, 3, 4} and len(set(r)) == len(r) for r in proposed.values())
    assert result.stderr.startswith("Plan report (strategy balanced, seed 0, engine local):\n")
    assert "Replicas moved: 6 (lower bound 6, 1.00x)" in result.stderr
    assert "-> min 6, max 7, stddev 0.50 (spread 1)" in result.stderr


def test_kafka_strategy_with_a_seed_is_kafkas_assignment(inputs):
    result = generate(inputs, "--strategy", "kafka", "--seed", "12")
    assert result.exit_code == 0, result.stderr
    assert proposed_of(result.stdout) == plan_kafka(CURRENT, [1, 2, 3, 4], seed=12)
    assert "strategy kafka, seed 12" in result.stderr


def test_json_output_and_stats_and_batches(inputs):
    stats = Path(inputs["dir"]) / "stats.json"
    prefix = str(Path(inputs["dir"]) / "batch")
    result = generate(
        inputs, "--output", "json", "--stats-json", str(stats), "--batch-size", "2", "--batch-prefix", prefix
    )
    assert result.exit_code == 0, result.stderr
    assert result.stderr == ""
    document = json.loads(result.stdout)
    assert document["current"]["partitions"][0] == {
        "topic": "orders",
        "partition": 0,
        "replicas": [1, 2, 3],
        "log_dirs": ["any", "any", "any"],
    }
    report = document["report"]
    assert report["replicas_moved"] == report["lower_bound"] == 6
    assert json.loads(stats.read_text()) == report
    batches = report["batches"]
    assert [b["file"] for b in batches] == [f"{prefix}-{i}.json" for i in range(1, len(batches) + 1)]
    changed = {}
    for b in batches:
        for e in files.parse_reassignment_json(Path(b["file"]).read_text()):
            changed[(e.partition.topic, e.partition.partition)] = list(e.replicas)
        assert b["partitions"] <= 2
    proposed = {(p["topic"], p["partition"]): p["replicas"] for p in document["proposed"]["partitions"]}
    assert changed == {k: v for k, v in proposed.items() if v != CURRENT[k]}
    assert sum(b["replicas_moved"] for b in batches) == 6


def test_json_lines_current_assignment(inputs, tmp_path):
    lines = tmp_path / "current.jsonl"
    lines.write_text(
        "\n".join(json.dumps({"topic": t, "partition": p, "replicas": r}) for (t, p), r in CURRENT.items())
    )
    a = generate(inputs)
    b = run(
        "--generate", "--topics-to-move-json-file", inputs["topics"], "--broker-list", "1,2,3,4",
        "--current-assignment-json-file", str(lines),
    )  # fmt: skip
    assert b.exit_code == 0, b.stderr
    assert a.stdout == b.stdout


def test_offline_racks(inputs):
    result = generate(inputs, "--broker-racks", "1:a,2:b,3:c,4:a")
    assert result.exit_code == 0, result.stderr
    racks = {1: "a", 2: "b", 3: "c", 4: "a"}
    for replicas in proposed_of(result.stdout).values():
        assert len({racks[b] for b in replicas}) == len(replicas)
    assert "Rack violations (partitions on fewer racks than they could span): 0 -> 0" in result.stderr


def test_partition_sizes(inputs, tmp_path):
    sizes = tmp_path / "sizes.json"
    sizes.write_text(
        json.dumps(
            {"version": 1, "partitions": [{"topic": t, "partition": p, "size": 1000 * (p + 1)} for t, p in CURRENT]}
        )
    )
    result = generate(inputs, "--partition-sizes-json-file", str(sizes))
    assert result.exit_code == 0, result.stderr
    assert "Bytes per broker:" in result.stderr and "Bytes moved:" in result.stderr


USAGE_CASES = [
    ((), "This tool helps to move topic partitions between replicas."),
    (
        ("--generate", "--verify"),
        "Command must include exactly one action: --generate, --execute, --verify, --cancel, --list",
    ),
    (
        ("--broker-list", "1"),
        "Command must include exactly one action: --generate, --execute, --verify, --cancel, --list",
    ),
    (("--generate", "--broker-list", "1"), 'Missing required argument "[topics-to-move-json-file]"'),
    (("--generate", "--topics-to-move-json-file", "t.json"), 'Missing required argument "[broker-list]"'),
    (("--execute",), 'Missing required argument "[reassignment-json-file]"'),
    (
        ("--generate", "--topics-to-move-json-file", "t", "--broker-list", "1", "--throttle", "10"),
        'Option "[throttle]" can\'t be used with action "[generate]"',
    ),
    (
        ("--verify", "--reassignment-json-file", "r", "--strategy", "kafka"),
        'Option "[strategy]" can\'t be used with action "[verify]"',
    ),
]


@pytest.mark.parametrize(("args", "message"), USAGE_CASES)
def test_kafkas_action_and_option_checks_print_the_usage_and_exit_1(args, message):
    result = run(*args)
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.startswith(message + "\n")
    if not args:  # nothing asked: the whole help, as Kafka prints it
        assert "--topics-to-move-json-file" in result.stderr
        return
    # an option error: the short usage follows (issue 19: Kafka's whole help would bury the one-line message)
    assert result.stderr.endswith(
        "Usage: kafkaops reassign-partitions [OPTIONS]\nTry 'kafkaops reassign-partitions --help' for help.\n"
    )


@pytest.mark.parametrize("action", ["execute", "verify", "cancel"])
def test_other_actions_read_their_file_before_any_cluster(action, tmp_path):
    # the actions themselves are tested against ZooKeeper in tests/integration/test_reassign_partitions_cli.py
    result = run(f"--{action}", "--reassignment-json-file", str(tmp_path / "r.json"))
    assert result.exit_code == 1
    assert result.stderr == (
        f"Error: Cannot read the reassignment file {tmp_path / 'r.json'}: No such file or directory\n"
    )


BAD_INPUT = [
    (("--broker-list", "1,2,2"), "Error: Broker list contains duplicate entries: 2"),
    (("--broker-list", "1,x"), 'Error: For input string: "x"'),
    (("--broker-list", "1"), "Error: Replication factor: 3 larger than available brokers: 1."),
    (("--topics", '{"topics":[{"topic":"orders"},{"topic":"orders"}]}'), "Error: List of topics to reassign contains duplicate entries: orders"),
    (("--topics", '{"topics":[{"topic":"nope"}]}'), "Error: Topic nope not found."),
    (("--topics", "not json"), "Error: The input string is not a valid JSON"),
    (("--current", '{"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[1,1]}]}'),
     "Error: Partition replica lists may not contain duplicate entries: orders-0 contains multiple entries for 1"),
    (("--current", '{"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[1]},{"topic":"orders","partition":0,"replicas":[2]}]}'),
     "Error: Partition reassignment contains duplicate topic partitions: orders-0"),
    (("--current", "{"), 'Error: Unexpected end-of-input: expected close marker for Object (start marker at [Source: (String)"{"; line: 1, column: 1])\n at [Source: (String)"{"; line: 1, column: 2]'),
    (("--extra", "--broker-racks", "1:a,2:a,3:b"), "Error: Not all brokers have rack information. Add --disable-rack-aware in command line to make replica assignment without rack information."),
    (("--extra", "--batch-size", "0"), "Error: --batch-size must be a positive number of partitions, not 0"),
    (("--extra", "--stats-json", "/no/such/dir/stats.json"), "Error: Cannot write /no/such/dir/stats.json: no such directory /no/such/dir"),
    (("--extra", "--master", "local[1]"), "Error: --master and --conf are for --engine spark"),
    (("--extra", "--engine", "spark", "--strategy", "kafka"), "Error: --engine spark runs the balanced strategy; Kafka's strategy needs no cluster"),
    (("--extra", "--zookeeper", "127.0.0.1:1"), "Error: --current-assignment-json-file plans offline: leave out --zookeeper"),
]  # fmt: skip


@pytest.mark.parametrize(("change", "message"), BAD_INPUT)
def test_bad_input_is_refused_with_a_clear_error_and_nothing_written(change, message, inputs, tmp_path):
    topics, current, brokers, extra = inputs["topics"], inputs["current"], "1,2,3,4", []
    if change[0] == "--broker-list":
        brokers = change[1]
    elif change[0] == "--topics":
        Path(topics).write_text(change[1])
    elif change[0] == "--current":
        Path(current).write_text(change[1])
    else:
        extra = list(change[1:])
    before = sorted(p.name for p in tmp_path.iterdir())
    result = run(
        "--generate", "--topics-to-move-json-file", topics, "--broker-list", brokers,
        "--current-assignment-json-file", current, "--stats-json", str(tmp_path / "stats.json"),
        "--batch-size", "2", "--batch-prefix", str(tmp_path / "b"), *extra,
    )  # fmt: skip
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr == message + "\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_missing_input_file(inputs):
    result = run(
        "--generate",
        "--topics-to-move-json-file",
        "/no/such.json",
        "--broker-list",
        "1",
        "--current-assignment-json-file",
        inputs["current"],
    )
    assert result.exit_code == 1
    assert result.stderr == "Error: Cannot read the topics-to-move file /no/such.json: No such file or directory\n"
