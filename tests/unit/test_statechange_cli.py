"""`kafkaops state-change-log-merger`: Kafka's options and texts, exact output on real logs."""

from __future__ import annotations

import glob
import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kafkaops.cli.app import app
from kafkaops.cli.state_change_log_merger import DESCRIPTION, EXACTLY_ONE_INPUT, Engine, MergeFormat, choose_engine
from kafkaops.statechange.filters import PARTITIONS_NEED_TOPIC

LOGS = str(Path(__file__).resolve().parents[2].parent / "shared" / "kafka-logs")  # ../shared beside the repository
V082 = f"{LOGS}/kafka-0.8.2.1_jihochoi-bench_broker0.state-change.log.2016-09-14-13.log"
V260 = f"{LOGS}/kafka-2.6.0_zensonize-thairailway_broker0.state-change.log.2020-12-27-16.log"
V110 = f"{LOGS}/kafka-1.1.x_wzhang512-openshift_broker0.state-change.log"
KAFKAOPS = str(Path(sys.executable).parent / "kafkaops")  # this checkout's .venv, not another clone's

runner = CliRunner()


def merger(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["state-change-log-merger", *args])
    return result.exit_code, result.stdout, result.stderr


def lines_of(path: str, first: int, last: int) -> list[str]:
    return Path(path).read_text().splitlines()[first - 1 : last]


# --- Kafka's validation, texts and exit code -------------------------------------------------------------


def test_no_arguments_prints_the_description_and_usage() -> None:
    code, out, err = merger()
    assert code == 1 and out == ""
    assert err.startswith(DESCRIPTION + "\nUsage: ")
    assert "--logs-regex" in err


@pytest.mark.parametrize(
    "args",
    [
        ["--logs", V082, "--logs-regex", f"{LOGS}/x"],
        ["--topic", "foo"],
    ],
)
def test_exactly_one_of_logs_and_logs_regex(args: list[str]) -> None:
    code, out, err = merger(*args)
    assert code == 1 and out == ""
    assert err.startswith(EXACTLY_ONE_INPUT + "\nUsage: ")
    assert EXACTLY_ONE_INPUT == 'Provide arguments to exactly one of the two options "[logs]" or "[logs-regex]"'


def test_partitions_need_a_topic() -> None:
    code, _, err = merger("--logs", V082, "--partitions", "0")
    assert code == 1
    assert err.startswith(
        'The option "[topic]" needs to be provided an argument when specifying partition ids\nUsage: '
    )
    assert err.startswith(PARTITIONS_NEED_TOPIC)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--topic", "t", "--partitions", "0,1,0"], "The list of partitions contains repeated entries: 0\n"),
        (
            ["--start-time", "2016-09-14"],
            'Invalid --start-time "2016-09-14": expected a date and time in the format yyyy-MM-dd HH:mm:ss,SSS\n',
        ),
        (
            ["--end-time", "2016-13-01 00:00:00,000"],
            'Invalid --end-time "2016-13-01 00:00:00,000": expected a date and time in the format yyyy-MM-dd HH:mm:ss,SSS\n',
        ),
        (["--level", "LOUD"], 'Unknown level "LOUD" in --level: expected TRACE, DEBUG, INFO, WARN, ERROR, FATAL\n'),
        (["--output", "parquet", "--engine", "local"], "--output parquet needs --engine spark\n"),
        (
            ["--grep", "[ad-events,0]|[z-a]"],
            'Invalid regular expression "[ad-events,0]|[z-a]" in --grep: bad character range z-a at position 15\n',
        ),
        (  # refused before any Spark starts
            ["--grep", "(?<=a+)b", "--engine", "spark"],
            'Invalid regular expression "(?<=a+)b" in --grep: look-behind requires fixed-width pattern\n',
        ),
    ],
)
def test_bad_options(args: list[str], message: str) -> None:
    code, out, err = merger("--logs", V082, *args)
    assert (code, out, err) == (1, "", message)


def test_missing_file() -> None:
    assert merger("--logs", f"{V082},/nonexistent/state-change.log") == (
        1,
        "",
        "Cannot read state-change log /nonexistent/state-change.log: no such file\n",
    )


def test_remote_paths_need_spark() -> None:
    assert merger("--logs", "hdfs://nn/logs/state-change.log", "--engine", "local") == (
        1,
        "",
        "Only --engine spark reads remote paths (hdfs://, s3a://, ...)\n",
    )


# --- output ------------------------------------------------------------------------------------------------


def test_merges_1_0_lines_that_kafka_drops() -> None:
    code, out, _ = merger(
        "--logs", f"{V082},{V260}", "--topic", "new-schedule", "--end-time", "2020-12-27 16:48:00,000"
    )
    assert code == 0
    assert out.splitlines() == [*lines_of(V260, 2, 2), *lines_of(V260, 5, 5), *lines_of(V260, 11, 11)]


def test_keeps_stack_traces_with_their_entry() -> None:
    code, out, _ = merger(
        "--logs",
        V082,
        "--topic",
        "ad-events",
        "--partitions",
        "0",
        "--start-time",
        '"2016-09-14 13:30:47,211"',  # Kafka strips the quotes a shell script may leave
        "--end-time",
        "2016-09-14 13:30:47,223",
    )
    assert code == 0
    assert out.splitlines() == lines_of(V082, 27, 53)


def test_grep_keeps_the_whole_entry_that_matches_anywhere() -> None:
    """The match is in the stack trace (line 29); the entry is its ERROR line 28 and all 25 trace lines."""
    code, out, _ = merger("--logs", f"{V082},{V260}", "--grep", r"NoReplicaOnlineException: .*\[ad-events,0\]")
    assert code == 0
    assert out.splitlines() == lines_of(V082, 28, 53)
    code, out, _ = merger("--logs", V082, "--grep", r"(?m)^\tat kafka\.controller\.OfflinePartitionLeaderSelector")
    assert code == 0 and out.splitlines() == lines_of(V082, 28, 53)
    code, out, _ = merger("--logs", V260, "--grep", r"(?i)NEW-SCHEDULE-\d+ (state|starts)", "--output", "json")
    assert code == 0
    assert [json.loads(line)["line"] for line in out.splitlines()] == [2, 11, 29]


def test_crlf_file_is_copied_byte_for_byte() -> None:
    result = runner.invoke(app, ["state-change-log-merger", "--logs", V110])
    assert result.exit_code == 0
    assert result.stdout_bytes == Path(V110).read_bytes()


def test_json_lines() -> None:
    code, out, _ = merger(
        "--logs", V082, "--level", "ERROR", "--output", "json", "--end-time", "2016-09-14 13:30:47,223"
    )
    assert code == 0
    (record,) = [json.loads(line) for line in out.splitlines()]
    assert list(record) == [
        "timestamp",
        "level",
        "actor",
        "actor_id",
        "controller_epoch",
        "partitions",
        "message",
        "continuation",
        "source",
        "line",
    ]
    assert record["timestamp"] == "2016-09-14 13:30:47,223"
    assert (record["actor"], record["actor_id"], record["controller_epoch"]) == ("controller", 0, 2)
    assert record["partitions"] == [{"topic": "ad-events", "partition": 0}]
    assert record["message"] == (
        "Controller 0 epoch 2 initiated state change for partition [ad-events,0] from OfflinePartition to "
        "OnlinePartition failed"
    )
    assert len(record["continuation"]) == 25
    assert (record["source"], record["line"]) == (V082, 28)


def test_annotate_and_output_path(tmp_path: Path) -> None:
    target = tmp_path / "merged.log"
    code, out, _ = merger(
        "--logs", V260, "--topic", "new-schedule", "--annotate", "--output-path", str(target), "--verbose"
    )
    assert (code, out) == (0, "")
    assert target.read_text().splitlines() == [f"{V260}:{n}: {lines_of(V260, n, n)[0]}" for n in (2, 5, 11, 29)]


def test_logs_regex_and_directories() -> None:
    by_regex = merger("--logs-regex", f"{LOGS}/^kafka-0\\.8\\.2")
    by_glob = merger("--logs", f"{LOGS}/kafka-0.8.2*")
    assert by_regex == by_glob
    assert by_regex[1].count("\n") == sum(
        len(Path(p).read_text().splitlines()) for p in glob.glob(f"{LOGS}/kafka-0.8.2*")
    )


# --- the installed console script -------------------------------------------------------------------------


def test_console_script_merges_every_real_log() -> None:
    done = subprocess.run([KAFKAOPS, "state-change-log-merger", "--logs", LOGS], capture_output=True, check=False)
    assert done.returncode == 0 and done.stderr == b""
    lines = done.stdout.split(b"\n")[:-1]
    assert len(lines) == sum(len(Path(p).read_bytes().split(b"\n")) - 1 for p in glob.glob(f"{LOGS}/*.log"))
    stamps = [line[1:24] for line in lines if line.startswith(b"[20")]
    # sorted except where one input (the 2.3.0 shared file) goes back in time: its order is kept
    assert sum(a > b for a, b in zip(stamps, stamps[1:], strict=False)) == 2


def test_console_script_under_head_stops_quietly() -> None:
    done = subprocess.run(
        f"{KAFKAOPS} state-change-log-merger --logs {LOGS} | head -n 2",
        shell=True,
        capture_output=True,
        check=False,
        executable="/bin/bash",
    )
    assert done.returncode == 0 and done.stderr == b""
    assert done.stdout.decode().splitlines() == lines_of(V082.replace("13.log", "12.log"), 1, 2)


def test_console_script_usage_error_exit_code() -> None:
    done = subprocess.run(
        [KAFKAOPS, "state-change-log-merger", "--partitions", "1", "--logs", V082], capture_output=True, check=False
    )
    assert done.returncode == 1
    assert done.stderr.decode().startswith(PARTITIONS_NEED_TOPIC + "\n")


def test_console_script_invalid_grep_has_no_traceback() -> None:
    done = subprocess.run(
        [KAFKAOPS, "state-change-log-merger", "--logs", V082, "--grep", "*"], capture_output=True, check=False
    )
    assert (done.returncode, done.stdout) == (1, b"")
    assert done.stderr == b'Invalid regular expression "*" in --grep: nothing to repeat at position 0\n'


@pytest.mark.parametrize(
    ("remote", "size", "output", "master", "expected"),
    [
        (False, 100 * 2**30, MergeFormat.text, None, Engine.local),  # one machine: streaming is faster at any size
        (False, 100 * 2**30, MergeFormat.text, "local[*]", Engine.local),
        (False, 100 * 2**30, MergeFormat.json, "spark://m:7077", Engine.spark),
        (False, 2**20, MergeFormat.text, "spark://m:7077", Engine.local),
        (True, 0, MergeFormat.text, None, Engine.spark),
        (False, 2**20, MergeFormat.parquet, None, Engine.spark),
    ],
)
def test_auto_engine(remote: bool, size: int, output: MergeFormat, master: str | None, expected: Engine) -> None:
    assert choose_engine(Engine.auto, remote, size, output, master) is expected
