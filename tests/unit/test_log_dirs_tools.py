"""`kafkaops log-dirs` and `kafkaops delete-records` without brokers: the offset JSON file and Kafka's texts
for a bad one, the log dirs JSON document and the orders Kafka prints things in, the Admin API answers as
the client calls read them, and the commands' bad input (exit 1, Kafka's message, no traceback)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kafkaops.admin import log_dirs
from kafkaops.admin.kafka_client.log_dirs import (
    LogDirDescription,
    ReplicaInfo,
    TopicPartitionReplica,
    describe_log_dirs_response,
    partition_sizes,
)
from kafkaops.cli.app import app
from kafkaops.cluster.common.errors import (
    AdminOperationError,
    ClusterAuthorizationFailedError,
    InvalidArgumentError,
    KafkaStorageError,
)
from kafkaops.cluster.common.java_errors import java_exception_name, java_exception_text
from kafkaops.cluster.zk.values import TopicPartition

# --- the offset JSON file ------------------------------------------------------------------------------


def test_the_offset_file() -> None:
    text = '{"partitions":[{"topic":"foo","partition":1,"offset":5},{"topic":"bar","partition":0,"offset":-1}],"version":1}'
    assert log_dirs.records_to_delete(text) == {TopicPartition("foo", 1): 5, TopicPartition("bar", 0): -1}
    # version 1 when absent; a big offset is a long
    assert log_dirs.records_to_delete('{"partitions":[{"topic":"t","partition":0,"offset":4294967296}]}') == {
        TopicPartition("t", 0): 4294967296
    }


@pytest.mark.parametrize(
    ("text", "error", "message"),
    [
        ("not json", AdminOperationError, "The input string is not a valid JSON"),
        ("", AdminOperationError, "The input string is not a valid JSON"),
        ('{"version":1}', AdminOperationError, "Missing partitions field"),
        ('{"version":2,"partitions":[]}', AdminOperationError, "Not supported version field value 2"),
        ('{"version":"1","partitions":[]}', InvalidArgumentError, 'Expected `Int` value, received "1"'),
        ("[]", InvalidArgumentError, "Expected JSON object, received []"),
        ('{"partitions":{}}', InvalidArgumentError, "Expected JSON array, received {}"),
        ('{"partitions":[{"partition":0,"offset":1}]}', InvalidArgumentError, "No such field exists: `topic`"),
        ('{"partitions":[{"topic":"t","offset":1}]}', InvalidArgumentError, "No such field exists: `partition`"),
        ('{"partitions":[{"topic":"t","partition":0}]}', InvalidArgumentError, "No such field exists: `offset`"),
        (
            '{"partitions":[{"topic":1,"partition":0,"offset":1}]}',
            InvalidArgumentError,
            "Expected `String` value, received 1",
        ),
        (
            '{"partitions":[{"topic":"t","partition":0,"offset":"x"}]}',
            InvalidArgumentError,
            'Expected `Long` value, received "x"',
        ),
        (
            '{"partitions":[{"topic":"t","partition":0,"offset":1},{"topic":"t","partition":0,"offset":2}]}',
            log_dirs.DuplicatePartitionsError,
            "Offset json file contains duplicate topic partitions: t-0",
        ),
    ],
)
def test_a_bad_offset_file(text: str, error: type[Exception], message: str) -> None:
    with pytest.raises(error) as caught:
        log_dirs.records_to_delete(text)
    assert str(caught.value) == message


# --- the log dirs document -----------------------------------------------------------------------------


def test_the_log_dirs_document_is_kafkas_json() -> None:
    descriptions = {
        1: {
            "/data/b": LogDirDescription(None, {TopicPartition("t", 0): ReplicaInfo(100, 0, False)}),
            "/data/a": LogDirDescription(KafkaStorageError("x"), {}),
        },
        0: {
            "/data/a": LogDirDescription(
                None,
                {
                    TopicPartition("t", 1): ReplicaInfo(10, 0, False),
                    TopicPartition("u", 0): ReplicaInfo(20, 3, True),
                },
            )
        },
    }
    text = log_dirs.encode_json(log_dirs.log_dirs_document(descriptions))
    document = json.loads(text)
    assert list(document) == ["version", "brokers"] and document["version"] == 1
    assert [b["broker"] for b in document["brokers"]] == [0, 1]
    assert document["brokers"][0]["logDirs"][0] == {
        "logDir": "/data/a",
        "error": None,
        "partitions": [
            {"partition": "t-1", "size": 10, "offsetLag": 0, "isFuture": False},
            {"partition": "u-0", "size": 20, "offsetLag": 3, "isFuture": True},
        ],
    }
    # broker 1's dirs in the order of a Java HashMap(2) of their paths: /data/a before /data/b
    assert [d["logDir"] for d in document["brokers"][1]["logDirs"]] == ["/data/a", "/data/b"]
    failed = document["brokers"][1]["logDirs"][0]
    assert failed == {
        "logDir": "/data/a",
        "error": "org.apache.kafka.common.errors.KafkaStorageException",
        "partitions": [],
    }
    assert ", " not in text and ": " not in text  # Jackson's compact form
    only_u = log_dirs.log_dirs_document(descriptions, {"u"})
    assert [p["partition"] for p in only_u["brokers"][0]["logDirs"][0]["partitions"]] == ["u-0"]
    assert only_u["brokers"][1]["logDirs"][1]["partitions"] == []


def test_kafkas_orders() -> None:
    # Scala's mutable.HashMap of Integer broker ids, then a TopicPartition HashMap: by bucket of the hash
    tps = [TopicPartition("t", p) for p in range(20)]
    ordered = log_dirs.delete_records_order(tps)
    assert sorted(ordered) == sorted(tps) and ordered != tps
    assert log_dirs.delete_records_order([TopicPartition("t", 0)]) == [TopicPartition("t", 0)]
    assert log_dirs.parse_list_option("a,,b,") == ["a", "b"]


def test_java_exceptions() -> None:
    assert java_exception_name(56) == "org.apache.kafka.common.errors.KafkaStorageException"
    assert java_exception_name(7) == "org.apache.kafka.common.errors.TimeoutException"
    assert java_exception_text(1) == (
        "org.apache.kafka.common.errors.OffsetOutOfRangeException: "
        "The requested offset is not within the range of offsets maintained by the server."
    )
    assert java_exception_text(44, "nope") == "org.apache.kafka.common.errors.PolicyViolationException: nope"


# --- the answers as the client calls read them -----------------------------------------------------------


def test_a_describe_log_dirs_answer() -> None:
    answer = {
        "throttle_time_ms": 0,
        "results": [
            {
                "error_code": 0,
                "log_dir": "/d1",
                "topics": [
                    {
                        "name": "t",
                        "partitions": [
                            {"partition_index": 0, "partition_size": 5, "offset_lag": 0, "is_future_key": False}
                        ],
                    }
                ],
            },
            {"error_code": 56, "log_dir": "/d2", "topics": []},
        ],
    }
    described = describe_log_dirs_response(answer)
    assert described["/d1"] == LogDirDescription(None, {TopicPartition("t", 0): ReplicaInfo(5, 0, False)})
    error = described["/d2"].error
    assert (
        isinstance(error, KafkaStorageError)
        and error.message == "Disk error when trying to access log file on the disk."
    )
    with pytest.raises(ClusterAuthorizationFailedError):
        describe_log_dirs_response({"throttle_time_ms": 0, "results": []})
    assert str(TopicPartitionReplica("t", 0, 2)) == "t-0-2"
    other = {
        "/e1": LogDirDescription(
            None, {TopicPartition("t", 0): ReplicaInfo(9, 0, False), TopicPartition("t", 1): ReplicaInfo(99, 4, True)}
        )
    }
    assert partition_sizes({0: described, 1: other}) == {("t", 0): 9}


# --- the commands' bad input -------------------------------------------------------------------------------

runner = CliRunner()


@pytest.mark.parametrize(
    ("args", "first_line"),
    [
        (["log-dirs"], "This tool helps to query log directory usage on the specified brokers."),
        (["log-dirs", "--describe"], 'Missing required argument "[bootstrap-server]"'),
        (["log-dirs", "--bootstrap-server", "127.0.0.1:1"], 'Missing required argument "[describe]"'),
        (["delete-records"], "This tool helps to delete records of the given partitions down to the specified offset."),
        (["delete-records", "--offset-json-file", "f.json"], 'Missing required argument "[bootstrap-server]"'),
        (["delete-records", "--bootstrap-server", "127.0.0.1:1"], 'Missing required argument "[offset-json-file]"'),
    ],
)
def test_missing_arguments(args: list[str], first_line: str) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == 1
    assert result.output.splitlines()[0] == first_line
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"version":1}', "Missing partitions field"),
        ("{", "The input string is not a valid JSON"),
        (
            '{"partitions":[{"topic":"t","partition":0,"offset":1},{"topic":"t","partition":0,"offset":1}]}',
            "Offset json file contains duplicate topic partitions: t-0",
        ),
    ],
)
def test_a_bad_offset_file_exits_1_before_connecting(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "offsets.json"
    path.write_text(content)
    # port 1: nothing listens there, and nothing is asked of it before the file is read
    result = runner.invoke(
        app, ["delete-records", "--bootstrap-server", "127.0.0.1:1", "--offset-json-file", str(path)]
    )
    assert result.exit_code == 1
    assert result.output == message + "\n"


def test_a_missing_offset_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    result = runner.invoke(
        app, ["delete-records", "--bootstrap-server", "127.0.0.1:1", "--offset-json-file", str(missing)]
    )
    assert result.exit_code == 1
    assert result.output == f"Cannot read {missing}: No such file or directory\n"
