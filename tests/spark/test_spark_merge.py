"""The Spark engine: its transform on hand-made rows, and the same output as the streaming engine."""

from __future__ import annotations

import gzip
import io
import json
import os
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest
from pyspark.sql import Row, SparkSession
from pyspark.testing import assertDataFrameEqual
from typer.testing import CliRunner

from kafkaops.cli.app import app
from kafkaops.cli.state_change_log_merger import MergeFormat, merge_local
from kafkaops.cluster.common.errors import InvalidArgumentError
from kafkaops.spark import merge
from kafkaops.spark.merge_job import MergeJob, execute
from kafkaops.statechange import sources
from kafkaops.statechange.filters import EntryFilter, filter_from_options

pytestmark = pytest.mark.spark

LOGS = str(Path(__file__).resolve().parents[2].parent / "shared" / "kafka-logs")  # ../shared beside the repository
REPO = Path(__file__).resolve().parents[2]


def local(files: list[str], spec: EntryFilter, output: str = "text", annotate: bool = False) -> bytes:
    out = io.BytesIO()
    merge_local(sources.group_rotated(files), spec, MergeFormat(output), annotate, out)
    return out.getvalue()


def on_spark(
    spark: SparkSession, files: list[str], spec: EntryFilter, output: str = "text", annotate: bool = False
) -> bytes:
    out = io.BytesIO()
    execute(spark, MergeJob(files=files, spec=spec, output=output, annotate=annotate), out)
    return out.getvalue()


def records(output: bytes) -> list[dict]:
    return [json.loads(line) for line in output.splitlines()]


# --- the transform, on rows made by hand -------------------------------------------------------------------


def test_transform_on_rows(spark: SparkSession) -> None:
    lines = spark.createDataFrame(
        [
            ("orphan line", "a", 0, 0, 0, 0),
            (
                "[2024-05-01 13:00:05,000] INFO [Broker id=1] Follower foo-0 starts (state.change.logger)\r",
                "a",
                0,
                0,
                0,
                1,
            ),
            ("\tat x.y(Z.java:1)", "a", 0, 0, 0, 2),
            (
                "[2024-05-01 13:00:01,000] ERROR [Controller id=0 epoch=2] back in time bar-1 (state.change.logger)",
                "a",
                0,
                0,
                0,
                3,
            ),
            (
                "[2024-05-01 13:00:03,000] TRACE Broker 2 received LeaderAndIsr request x correlation id 5 from controller 0 epoch 1 for partition [foo,1] (state.change.logger)",
                "b",
                1,
                0,
                0,
                8589934592,
            ),
        ],
        "value string, source string, stream int, file_order int, block long, row long",
    )
    actual = merge.merged_records(merge.entry_lines(lines, EntryFilter(), fields=True), partitions=2)
    expected = [
        Row(None, None, None, None, None, [], "orphan line", [], "a", 1),
        Row("2024-05-01 13:00:03,000", "TRACE", "broker", 2, 1, [Row(topic="foo", partition=1)],
            "Broker 2 received LeaderAndIsr request x correlation id 5 from controller 0 epoch 1 for partition [foo,1]", [], "b", 1),
        Row("2024-05-01 13:00:05,000", "INFO", "broker", 1, None, [Row(topic="foo", partition=0)],
            "[Broker id=1] Follower foo-0 starts", ["\tat x.y(Z.java:1)"], "a", 2),
        Row("2024-05-01 13:00:01,000", "ERROR", "controller", 0, 2, [Row(topic="bar", partition=1)],
            "[Controller id=0 epoch=2] back in time bar-1", [], "a", 4),
    ]  # fmt: skip
    assertDataFrameEqual(actual, spark.createDataFrame(expected, actual.schema), checkRowOrder=True)

    only_foo = merge.merged_text(
        merge.entry_lines(lines, EntryFilter(topic="foo"), fields=False), annotate=True, partitions=2
    )
    assert [row.text for row in only_foo.collect()] == [
        "b:1: [2024-05-01 13:00:03,000] TRACE Broker 2 received LeaderAndIsr request x correlation id 5 from "
        "controller 0 epoch 1 for partition [foo,1] (state.change.logger)",
        "a:2: [2024-05-01 13:00:05,000] INFO [Broker id=1] Follower foo-0 starts (state.change.logger)\r",
        "a:3: \tat x.y(Z.java:1)",
    ]


# --- both engines, same output --------------------------------------------------------------------------------


REAL_FILES = sources.expand_logs([LOGS])


@pytest.mark.parametrize(
    ("options", "output", "annotate"),
    [
        ({}, "text", False),
        ({}, "json", False),
        ({"topic": "ad-events", "start_time": "2016-09-14 13:30:00,000"}, "text", True),
        ({"broker": "0", "level": "TRACE,ERROR", "controller_epoch": "1,2"}, "json", False),
        ({"grep": r"(?s)OfflinePartition.*Exception"}, "text", True),  # a match that spans lines
        ({"grep": r"(?i)BECOME-(leader|follower)\b", "start_time": "2016-09-14 13:00:00,000"}, "json", False),
    ],
)
def test_engines_agree_on_real_logs(spark: SparkSession, options: dict, output: str, annotate: bool) -> None:
    spec = filter_from_options(**options)
    expected = local(REAL_FILES, spec, output, annotate)
    actual = on_spark(spark, REAL_FILES, spec, output, annotate)
    if output == "json":  # same records; Jackson and Python escape some characters differently
        assert records(actual) == records(expected)
    else:
        assert actual == expected
    assert len(expected.splitlines()) > 50


@pytest.mark.parametrize(
    "pattern",
    [
        "x\ufffdy|^orphan",  # one U+FFFD for an encoded surrogate, as Java decodes it; orphan lines
        r"(?m)^\tat .*\)$|logger\)\Z",  # continuation lines, CRLF endings stripped; the end of an entry
        r"^\[[^]]*[02]\] E|\)\n$",  # the start of the first line; an entry that ends with an empty line
    ],
)
def test_engines_agree_on_grep(spark: SparkSession, tmp_path: Path, pattern: str) -> None:
    a = tmp_path / "a.log"
    a.write_bytes(
        b"orphan line\r\n"
        b"[2024-05-01 13:00:01,000] INFO [Broker id=1] x\xed\xa0\x80y (state.change.logger)\r\n"
        b"[2024-05-01 13:00:02,000] ERROR failed (state.change.logger)\r\n"
        b"java.lang.IllegalStateException: \xff\r\n\tat a.b(C.java:1)\r\n\tat d.e(F.java:2)\r\n"
        b"[2024-05-01 13:00:02,000] INFO tie in a, after b's (state.change.logger)\r\n"
    )
    b = tmp_path / "b.log"
    b.write_bytes(
        b"[2024-05-01 13:00:02,000] WARN tie in b (state.change.logger)\n\n"
        b"[2024-05-01 13:00:03,000] TRACE x\xc3y\n\tat g.h(I.java:3) \n"
        b"[2024-05-01 13:00:04,000] INFO last, no final newline (state.change.logger)"
    )
    files = [str(a), str(b)]
    spec = filter_from_options(grep=pattern)
    expected = local(files, spec)
    assert on_spark(spark, files, spec) == expected
    assert expected.count(b"\n") >= 2


def test_engines_order_both_layouts_by_time(spark: SparkSession, tmp_path: Path) -> None:
    """Kafka's layout and Strimzi's (no brackets, the thread after the logger) merge by time in both engines."""
    kafka = tmp_path / "kafka.log"
    kafka.write_bytes(
        b"[2020-03-23 21:38:24,480] INFO [Broker id=1] first (state.change.logger)\n"
        b"[2020-03-23 21:38:24,490] INFO [Broker id=1] third (state.change.logger)\n"
    )
    strimzi = tmp_path / "strimzi.log"
    strimzi.write_bytes(
        b"2020-03-23 21:38:24,484 TRACE [Controller id=0 epoch=1] second t-0 (state.change.logger) [ctl-thread]\n"
        b"\tat a.b(C.java:1)\n"
        b"2020-03-23 21:38:24,495 TRACE [Controller id=0 epoch=1] fourth (state.change.logger) [ctl-thread]\n"
    )
    files = [str(kafka), str(strimzi)]
    for spec, output in ((filter_from_options(), "text"), (filter_from_options(topic="t"), "json")):
        expected = local(files, spec, output)
        actual = on_spark(spark, files, spec, output)
        assert (records(actual) == records(expected)) if output == "json" else (actual == expected)
    merged = local(files, filter_from_options())
    positions = [merged.index(word) for word in (b"first", b"second", b"third", b"fourth")]
    assert positions == sorted(positions)


def synthetic_log(path: Path, broker: int, entries: int, gz: bool = False) -> None:
    lines = []
    for i in range(entries):
        stamp = f"2024-05-01 13:{i // 6000 % 60:02d}:{i // 100 % 60:02d},{(i * 7 + broker) % 1000:03d}"
        lines.append(
            f"[{stamp}] TRACE [Broker id={broker}] Handling request {i} for partition t-{i % 7} (state.change.logger)"
        )
        if i % 50 == 0:
            lines += ["java.lang.IllegalStateException: x", *(f"\tat frame{n}(F.java:{n})" for n in range(i % 9))]
    data = ("\n".join(lines) + "\n").encode()
    if gz:
        path.write_bytes(gzip.compress(data))
    else:
        path.write_bytes(data)


def test_files_split_into_many_tasks_keep_their_order(spark: SparkSession, tmp_path: Path) -> None:
    """Big files are split across tasks on read: (split offset, id) must still order their lines."""
    for broker in range(3):
        directory = tmp_path / f"b{broker}"
        directory.mkdir()
        synthetic_log(directory / "state-change.log.2024-05-01-12.gz", broker, 500, gz=True)
        synthetic_log(directory / "state-change.log", broker, 4000)
    files = sorted(str(p) for p in tmp_path.glob("b*/state-change.log*"))
    spark.conf.set("spark.sql.files.maxPartitionBytes", "65536")
    try:
        assert merge.read_lines(spark, merge.input_files([files]))[0].rdd.getNumPartitions() > 6
        spec = filter_from_options(topic="t", partitions="3", level="TRACE")
        assert on_spark(spark, files, EntryFilter()) == local(files, EntryFilter())
        assert records(on_spark(spark, files, spec, "json")) == records(local(files, spec, "json"))
    finally:
        spark.conf.unset("spark.sql.files.maxPartitionBytes")


def test_output_paths(spark: SparkSession, tmp_path: Path) -> None:
    files = REAL_FILES[:4]
    spec = EntryFilter()
    for output in ("text", "json", "parquet"):
        execute(
            spark, MergeJob(files=files, spec=spec, output=output, output_path=str(tmp_path / output)), io.BytesIO()
        )
    part_files = sorted((tmp_path / "text").glob("part-*"))
    assert b"".join(p.read_bytes() for p in part_files) == local(files, spec)
    assert records(b"".join(p.read_bytes() for p in sorted((tmp_path / "json").glob("part-*")))) == records(
        local(files, spec, "json")
    )
    parquet = spark.read.parquet(str(tmp_path / "parquet"))
    assert parquet.columns[-1] == "time" and dict(parquet.dtypes)["time"] == "timestamp"
    first = parquet.orderBy("time").first()
    assert first is not None and str(first.time) == "2016-09-14 12:02:49.319000"
    with pytest.raises(InvalidArgumentError, match=f"^Cannot write {tmp_path}/text: it already exists$"):
        execute(spark, MergeJob(files=files, output_path=str(tmp_path / "text")), io.BytesIO())
    with pytest.raises(InvalidArgumentError, match="^--output parquet needs --output-path$"):
        execute(spark, MergeJob(files=files, output="parquet"), io.BytesIO())


def test_cli_spark_engine_uses_the_session_and_agrees(spark: SparkSession) -> None:
    args = ["state-change-log-merger", "--logs", LOGS, "--topic", "test", "--engine"]
    by_spark = CliRunner().invoke(app, [*args, "spark"])
    by_local = CliRunner().invoke(app, [*args, "local"])
    assert (by_spark.exit_code, by_spark.stderr) == (0, "")
    assert by_spark.stdout_bytes == by_local.stdout_bytes and by_spark.stdout_bytes.count(b"\n") > 100
    assert spark.sparkContext._jsc is not None  # not stopped by the command


# --- spark-submit on a standalone cluster -------------------------------------------------------------------------


def package_zip(target: Path) -> Path:
    """What `--py-files` ships: the job's part of the package, laid out as the kafkaops namespace, with
    directory entries (zipimport finds a namespace package only through them)."""
    archive = target / "kafkaops.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        rooms = ("statechange", "spark", "cluster/common")  # the floor: all the jobs import of cluster
        for directory in ("", "cluster/", *(f"{room}/" for room in rooms)):
            zf.writestr(f"kafkaops/{directory}", b"")
        for room in rooms:
            for source in (REPO / room).glob("*.py"):
                zf.write(source, f"kafkaops/{room}/{source.name}")
        zf.write(REPO / "cluster" / "__init__.py", "kafkaops/cluster/__init__.py")
    return archive


def test_spark_submit_on_a_standalone_cluster(standalone_master: str, spark_home: Path, tmp_path: Path) -> None:
    """The README's spark-submit command, against a real master and worker: the driver runs a Python
    without kafkaops or pyspark installed, so it imports them from --py-files and Spark's own zips."""
    files = REAL_FILES[:6]
    command = [
        str(spark_home / "bin" / "spark-submit"),
        "--master", standalone_master,
        "--conf", "spark.driver.host=127.0.0.1",
        "--py-files", str(package_zip(tmp_path)),
        str(REPO / "spark" / "merge_job.py"),
        "--logs", ",".join(files),
        "--topic", "ad-events",
        "--grep", r"(?m)^\tat kafka\.controller\.|become-leader",  # a Python predicate on the worker
    ]  # fmt: skip
    python = shutil.which("python3", path="/usr/local/bin:/usr/bin") or "python3"
    env = {**os.environ, "SPARK_HOME": str(spark_home), "PYSPARK_PYTHON": python, "SPARK_LOCAL_IP": "127.0.0.1"}
    env.pop("PYTHONPATH", None)
    done = subprocess.run(command, env=env, capture_output=True, timeout=240, check=False, cwd=tmp_path)
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    assert done.stdout == local(files, filter_from_options(topic="ad-events", grep=command[-1]))
    assert done.stdout.count(b"\n") > 50
