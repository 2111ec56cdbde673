"""The planner's Spark engine: the same plan as the local engine, in process, from files, from the CLI,
and on a real standalone Spark cluster (a master and a worker from the pyspark package)."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import SparkSession
from typer.testing import CliRunner

from kafkaops.admin import reassignment as files
from kafkaops.admin.assignment import JavaRandom, assign_replicas_to_brokers
from kafkaops.admin.planner import make_layout, plan_balanced, plan_report
from kafkaops.cli.app import app
from kafkaops.cluster.common.errors import InvalidReplicationFactorError
from kafkaops.spark import planner_job
from kafkaops.spark.planner_job import plan_on_spark, plan_rows, report_on_spark

pytestmark = pytest.mark.spark


def kafka_cluster(brokers, topics, partitions, rf=3, seed=1, racks=None):  # type: ignore[no-untyped-def]
    rng = JavaRandom(seed)
    current = {}
    for t in range(topics):
        for p, replicas in assign_replicas_to_brokers(brokers, partitions, rf, racks=racks, rng=rng).items():
            current[(f"topic-{t:03d}", p)] = replicas
    return current


def skewed(brokers: int, topics: int, partitions: int, seed: int) -> dict:  # type: ignore[type-arg]
    rng = random.Random(seed)
    return {
        (f"s{t}", p): rng.sample(range(brokers // 2 + 1), min(3, brokers // 2 + 1))
        for t in range(topics)
        for p in range(partitions)
    }


RACKS = {b: f"rack-{b % 3}" for b in range(40)}
MID_SIZE = {
    "add brokers": (kafka_cluster(list(range(20)), 40, 50), list(range(24)), None),
    "decommission": (kafka_cluster(list(range(20)), 40, 50, seed=2), list(range(2, 20)), None),
    "skewed": (skewed(16, 30, 40, 3), list(range(16)), None),
    "racks": (kafka_cluster(list(range(18)), 30, 40, racks=RACKS), list(range(21)), RACKS),
    "rack violations": (
        {(f"v{t}", p): [p % 6, (p + 3) % 6, (p + 1) % 6] for t in range(10) for p in range(30)},
        list(range(9)),
        RACKS,
    ),
}


@pytest.mark.parametrize("name", list(MID_SIZE))
def test_engines_agree_on_mid_size_inputs(spark: SparkSession, name: str) -> None:
    current, brokers, racks = MID_SIZE[name]
    r = {b: racks[b] for b in brokers} if racks else None
    local = plan_balanced(current, brokers, r, seed=3)
    on_spark = plan_on_spark(spark, current, brokers, r, seed=3)
    assert on_spark.proposed == local.proposed
    assert on_spark.bound == local.bound
    assert on_spark.inexact_topics == local.inexact_topics
    report = plan_report(current, local.proposed, brokers, r)
    assert report.replicas_after.spread <= 1 and report.leaders_after.spread <= 1 and report.rack_violations_after == 0


def test_engines_agree_when_the_leader_repair_needs_every_partition(spark: SparkSession) -> None:
    # phase 5's narrow pick leaves broker 1 leading 2 and broker 8 none: the only chain of moves between
    # them passes through topic-0 partition 1, whose replicas both lead their target
    current = {
        **{("topic-0", p): r for p, r in enumerate([[0, 1], [0, 2], [0, 2], [0, 2], [0, 3], [0, 1], [1, 2]])},
        ("topic-1", 0): [0, 1],
        ("topic-1", 1): [1, 2],
    }
    brokers = list(range(9))
    on_spark = plan_on_spark(spark, current, brokers, seed=0)
    assert on_spark.proposed == plan_balanced(current, brokers, seed=0).proposed
    assert plan_report(current, on_spark.proposed, brokers).leaders_after.spread <= 1


@settings(
    max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(
    st.integers(2, 7),
    st.integers(0, 3),
    st.lists(st.tuples(st.integers(1, 12), st.integers(1, 3)), min_size=1, max_size=4),
    st.integers(0, 9),
)
def test_engines_agree_on_random_clusters(spark: SparkSession, n: int, added: int, topics, seed: int) -> None:  # type: ignore[no-untyped-def]
    rng = random.Random(seed)
    current = {
        (f"t{i}", p): rng.sample(range(n), min(rf, n)) for i, (count, rf) in enumerate(topics) for p in range(count)
    }
    brokers = list(range(n + added))
    assert (
        plan_on_spark(spark, current, brokers, seed=seed).proposed
        == plan_balanced(current, brokers, seed=seed).proposed
    )


def test_report_aggregated_on_the_executors_is_the_local_report(spark: SparkSession) -> None:
    current, brokers, racks = MID_SIZE["racks"]
    layout = make_layout(brokers, {b: racks[b] for b in brokers})
    rows = spark.sparkContext.parallelize([(t, p, r) for (t, p), r in current.items()], 6)
    plan = plan_rows(spark, rows, layout, seed=0)
    proposed = {(t, p): new for t, p, new, _ in plan.rows.collect()}
    local = plan_report(current, proposed, brokers, layout.racks, bound=plan.targets.bound)
    assert report_on_spark(plan, layout) == local


def test_bad_rows_raise_kafkas_text(spark: SparkSession) -> None:
    with pytest.raises(
        InvalidReplicationFactorError, match=r"^Replication factor: 3 larger than available brokers: 2\.$"
    ):
        plan_on_spark(spark, {("t", 0): [0, 1, 2]}, [0, 1])


@pytest.mark.parametrize("fmt", ["json", "parquet"])
def test_files_in_files_out(spark: SparkSession, tmp_path: Path, fmt: str) -> None:
    current, brokers, _ = MID_SIZE["add brokers"]
    source = tmp_path / f"current.{'parquet' if fmt == 'parquet' else 'jsonl'}"
    rows = spark.sparkContext.parallelize([(t, p, r) for (t, p), r in current.items()], 4)
    planner_job.write_rows(spark, rows, str(source), fmt)
    out, stats = tmp_path / "plan", tmp_path / "stats.json"
    code = planner_job.main(
        ["--input", str(source), "--input-format", fmt, "--output", str(out), "--format", fmt,
         "--broker-list", f"0-{max(brokers)}", "--stats-json", str(stats)]
    )  # fmt: skip
    assert code == 0
    frame = spark.read.parquet(str(out)) if fmt == "parquet" else spark.read.json(str(out))
    proposed = {(r.topic, r.partition): list(r.replicas) for r in frame.collect()}
    assert proposed == plan_balanced(current, brokers).proposed
    report = json.loads(stats.read_text())
    assert report["replicas_moved"] == report["lower_bound"]
    # the job refuses to overwrite a plan
    assert (
        planner_job.main(["--input", str(source), "--input-format", fmt, "--output", str(out), "--broker-list", "0-23"])
        == 1
    )


def test_cli_spark_engine_prints_what_the_local_engine_prints(spark: SparkSession, tmp_path: Path) -> None:
    current, brokers, _ = MID_SIZE["decommission"]
    (tmp_path / "current.json").write_text(files.format_reassignment_json(current))
    (tmp_path / "topics.json").write_text(files.format_topics_to_move_json(sorted({t for t, _ in current})))
    args = [
        "reassign-partitions", "--generate", "--topics-to-move-json-file", str(tmp_path / "topics.json"),
        "--broker-list", ",".join(map(str, brokers)), "--current-assignment-json-file", str(tmp_path / "current.json"),
    ]  # fmt: skip
    local = CliRunner().invoke(app, args, catch_exceptions=False)
    on_spark = CliRunner().invoke(app, [*args, "--engine", "spark"], catch_exceptions=False)
    assert local.exit_code == on_spark.exit_code == 0, on_spark.stderr
    assert on_spark.stdout == local.stdout
    assert on_spark.stderr == local.stderr.replace("engine local", "engine spark")


# --- a real standalone cluster -------------------------------------------------------------------


def test_cli_on_a_standalone_cluster_plans_what_the_local_engine_plans(
    standalone_master: str, spark_home: Path, tmp_path: Path
) -> None:
    """The driver is `kafkaops` in a subprocess; the executors run a plain python3 that has neither
    kafkaops nor pyspark installed: the job ships the package (addPyFile), Spark its own zips."""
    current, brokers, racks = MID_SIZE["racks"]
    (tmp_path / "current.json").write_text(files.format_reassignment_json(current))
    (tmp_path / "topics.json").write_text(files.format_topics_to_move_json(sorted({t for t, _ in current})))
    args = [
        "reassign-partitions", "--generate", "--topics-to-move-json-file", str(tmp_path / "topics.json"),
        "--broker-list", ",".join(map(str, brokers)), "--current-assignment-json-file", str(tmp_path / "current.json"),
        "--broker-racks", ",".join(f"{b}:{racks[b]}" for b in brokers), "--output", "json",
    ]  # fmt: skip
    local = CliRunner().invoke(app, args, catch_exceptions=False)
    assert local.exit_code == 0, local.stderr
    python = shutil.which("python3", path="/usr/local/bin:/usr/bin") or "python3"
    env = {**os.environ, "SPARK_HOME": str(spark_home), "PYSPARK_PYTHON": python, "SPARK_LOCAL_IP": "127.0.0.1"}
    env.pop("PYTHONPATH", None)
    remote = subprocess.run(
        [sys.executable, "-m", "kafkaops.cli", *args, "--engine", "spark", "--master", standalone_master,
         "--conf", "spark.driver.host=127.0.0.1", "--conf", "spark.driver.bindAddress=127.0.0.1",
         "--conf", "spark.executor.memory=512m"],
        env=env, capture_output=True, text=True, timeout=240, check=False,
    )  # fmt: skip
    assert remote.returncode == 0, remote.stderr[-3000:]
    ours, theirs = json.loads(local.stdout), json.loads(remote.stdout)
    assert theirs["proposed"] == ours["proposed"]
    assert theirs["report"]["replicas_moved"] == ours["report"]["replicas_moved"] == ours["report"]["lower_bound"]
    assert theirs["report"]["engine"] == "spark"
