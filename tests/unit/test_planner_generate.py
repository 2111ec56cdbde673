"""`admin.reassignment_generate`: --generate's work as a library call (typed request in, typed result out,
nothing printed), without ZooKeeper: offline inputs, a fake ZooKeeper session, an injected engine."""

from __future__ import annotations

import json
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace

import pytest

from kafkaops.admin import reassignment as files
from kafkaops.admin.planner import plan_balanced, plan_kafka
from kafkaops.admin.reassignment_generate import (
    Engine,
    GenerateRequest,
    Strategy,
    generate_reassignment,
    read_current_file,
)
from kafkaops.cluster.common.errors import InvalidArgumentError, UnknownTopicOrPartitionError

CURRENT = {("orders", p): [1 + p % 3, 1 + (p + 1) % 3, 1 + (p + 2) % 3] for p in range(6)} | {
    ("payments", p): [1 + p % 3, 1 + (p + 1) % 3] for p in range(4)
}


def no_zookeeper():  # type: ignore[no-untyped-def]
    raise AssertionError("offline planning must not open ZooKeeper")


@pytest.fixture
def paths(tmp_path: Path) -> dict[str, str]:
    topics = tmp_path / "topics.json"
    topics.write_text(files.format_topics_to_move_json(["orders", "payments"]))
    current = tmp_path / "current.json"
    current.write_text(files.format_reassignment_json(CURRENT))
    return {"topics": str(topics), "current": str(current), "dir": str(tmp_path)}


def offline(paths: dict[str, str], **fields) -> GenerateRequest:  # type: ignore[no-untyped-def]
    return GenerateRequest("1,2,3,4", paths["topics"], current_assignment_json_file=paths["current"], **fields)


def test_offline_plan_is_the_planners_and_nothing_is_printed(paths, capsys):
    result = generate_reassignment(offline(paths), no_zookeeper)
    assert result.current == CURRENT
    assert result.proposed == plan_balanced(CURRENT, [1, 2, 3, 4]).proposed
    assert result.report.replicas_moved == result.report.lower_bound.total == 6
    assert result.document["strategy"] == "balanced" and result.document["seed"] == 0
    assert result.document["engine"] == "local" and result.document["batches"] == []
    assert result.batch_files == ()
    assert capsys.readouterr() == ("", "")


def test_kafka_strategy_keeps_the_seed_as_given(paths):
    request = offline(paths, strategy=Strategy.kafka, seed=12)
    result = generate_reassignment(request, no_zookeeper)
    assert result.proposed == plan_kafka(CURRENT, [1, 2, 3, 4], seed=12)
    assert request.effective_seed == 12 and result.document["seed"] == 12
    assert offline(paths, strategy=Strategy.kafka).effective_seed is None
    assert offline(paths).effective_seed == 0


def test_batches_and_stats_are_written(paths):
    prefix = str(Path(paths["dir"]) / "batch")
    stats = Path(paths["dir"]) / "stats.json"
    result = generate_reassignment(
        offline(paths, batch_size=2, batch_prefix=prefix, stats_json=str(stats)), no_zookeeper
    )
    assert result.batch_files == tuple(f"{prefix}-{i}.json" for i in range(1, len(result.batch_files) + 1))
    assert json.loads(stats.read_text()) == result.document
    changed = {}
    for path in result.batch_files:
        changed |= files.assignment_from_entries(files.parse_reassignment_json(Path(path).read_text()))
    assert changed == {k: v for k, v in result.proposed.items() if v != CURRENT[k]}


def test_the_spark_engine_is_passed_in(paths):
    calls = []

    def engine(current, brokers, racks, seed):  # type: ignore[no-untyped-def]
        calls.append((dict(current), list(brokers), racks, seed))
        return plan_balanced(current, brokers, racks, seed)

    result = generate_reassignment(offline(paths, engine=Engine.spark, seed=3), no_zookeeper, engine)
    assert calls == [(CURRENT, [1, 2, 3, 4], None, 3)]
    assert result.proposed == plan_balanced(CURRENT, [1, 2, 3, 4], seed=3).proposed
    assert result.document["engine"] == "spark"
    with pytest.raises(ValueError):
        generate_reassignment(offline(paths, engine=Engine.spark), no_zookeeper)


def test_the_current_assignment_comes_from_zookeeper_without_a_file(paths):
    opened = []

    class FakeZk:
        def get_all_brokers(self):  # type: ignore[no-untyped-def]
            return [SimpleNamespace(broker_id=b, rack=None) for b in (1, 2, 3, 4)]

        def get_topic_assignments(self, topics):  # type: ignore[no-untyped-def]
            return {
                t: SimpleNamespace(replicas={p: tuple(r) for (topic, p), r in CURRENT.items() if topic == t})
                for t in topics
            }

    @contextmanager
    def session():  # type: ignore[no-untyped-def]
        opened.append(True)
        yield FakeZk()

    request = GenerateRequest("1,2,3,4", paths["topics"])
    result = generate_reassignment(request, session)
    assert opened == [True]
    assert result.current == CURRENT
    assert result.proposed == plan_balanced(CURRENT, [1, 2, 3, 4]).proposed


def test_bad_input_is_refused_before_anything_is_written(paths, tmp_path):
    Path(paths["topics"]).write_text(files.format_topics_to_move_json(["orders", "nope"]))
    before = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(UnknownTopicOrPartitionError, match="Topic nope not found."):
        generate_reassignment(
            offline(paths, batch_size=1, batch_prefix=str(tmp_path / "b"), stats_json=str(tmp_path / "s.json")),
            no_zookeeper,
        )
    with pytest.raises(InvalidArgumentError, match="no such directory"):
        generate_reassignment(offline(paths, stats_json=str(tmp_path / "no" / "s.json")), no_zookeeper)
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_json_lines_current_assignment(tmp_path):
    path = tmp_path / "current.jsonl"
    path.write_text("\n".join(json.dumps({"topic": t, "partition": p, "replicas": r}) for (t, p), r in CURRENT.items()))
    assert read_current_file(str(path)) == CURRENT
    path.write_text('{"topic": "orders", "partition": 0, "replicas": [1]}\n{')
    with pytest.raises(InvalidArgumentError, match=r"current.jsonl, line 2: "):
        read_current_file(str(path))
