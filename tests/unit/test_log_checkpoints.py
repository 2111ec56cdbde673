"""Kafka's checkpoint files (CheckpointFile.scala and its two formatters): known-answer contents, round trips,
the reader's refusals with Kafka's messages, the atomic write; and LogConfig's parsing of topic configs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkaops.cluster.common.errors import InvalidConfigurationError, MalformedCheckpointError
from kafkaops.cluster.log import EpochEntry, LogConfig
from kafkaops.cluster.log.checkpoints import (
    format_epochs,
    format_offsets,
    parse_epochs,
    parse_offsets,
    read_checkpoint,
    write_checkpoint,
)


def test_offset_checkpoint_known_answer() -> None:
    offsets = {("orders", 1): 977, ("orders", 0): 1042, ("audit.log-v2", 12): 0}
    text = "0\n3\naudit.log-v2 12 0\norders 0 1042\norders 1 977\n"
    assert format_offsets(offsets) == text
    assert parse_offsets(text, "f") == offsets


def test_empty_offset_checkpoint() -> None:
    assert format_offsets({}) == "0\n0\n"
    assert parse_offsets("0\n0\n", "f") == {}


def test_leader_epoch_checkpoint_known_answer() -> None:
    entries = [EpochEntry(0, 0), EpochEntry(3, 17), EpochEntry(4, 2**40)]
    text = "0\n3\n0 0\n3 17\n4 1099511627776\n"
    assert format_epochs(entries) == text
    assert parse_epochs(text, "f") == entries


@pytest.mark.parametrize(
    "text",
    [
        "",  # Kafka's reader: no version line → no entries
        "0\n",  # no count line → no entries
        "0",
    ],
)
def test_short_files_read_as_empty(text: str) -> None:
    assert parse_offsets(text, "f") == {}


def test_reader_accepts_java_line_ends_and_any_whitespace() -> None:
    assert parse_offsets("0\r\n1\r\norders\t0   +7\r\n", "f") == {("orders", 0): 7}
    assert parse_offsets("0\r1\rorders 0 7", "f") == {("orders", 0): 7}
    assert parse_offsets("0\n1\norders 0 7  \n", "f") == {("orders", 0): 7}  # Java's split drops trailing blanks


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1\n0\n", r"Unrecognized version of the checkpoint file \(f\): 1"),
        ("x\n0\n", r"Malformed line in checkpoint file \(f\): x"),
        ("0\ntwo\n", r"Malformed line in checkpoint file \(f\): two"),
        ("0\n1\norders 0\n", r"Malformed line in checkpoint file \(f\): orders 0"),
        ("0\n1\norders 0 1 2\n", r"Malformed line in checkpoint file \(f\): orders 0 1 2"),
        ("0\n1\norders x 1\n", "Malformed line"),
        ("0\n1\norders 2147483648 1\n", "Malformed line"),  # partition beyond INT32
        ("0\n1\norders 0 1_000\n", "Malformed line"),  # Python's int() would take it, Java's parseLong not
        ("0\n1\n orders 0 1\n", "Malformed line"),  # a leading blank splits into an empty first field
        ("0\n1\norders 0 1\n\n", "Malformed line"),  # an empty line is an entry that does not parse
        ("0\n2\norders 0 1\n", r"Expected 2 entries in checkpoint file \(f\), but found only 1"),
        ("0\n0\norders 0 1\n", "Expected 0 entries"),
    ],
)
def test_malformed_offset_checkpoints(text: str, message: str) -> None:
    with pytest.raises(MalformedCheckpointError, match=message):
        parse_offsets(text, "f")


def test_malformed_epoch_checkpoint() -> None:
    with pytest.raises(MalformedCheckpointError, match="Malformed line"):
        parse_epochs("0\n1\n3\n", "f")
    with pytest.raises(MalformedCheckpointError, match="Malformed line"):
        parse_epochs("0\n1\n2147483648 0\n", "f")  # epochs are INT32


_topics = st.text(st.sampled_from("abcXYZ019._-"), min_size=1, max_size=20)
_int32 = st.integers(0, 2**31 - 1)
_int64 = st.integers(0, 2**63 - 1)


@given(st.dictionaries(st.tuples(_topics, _int32), _int64, max_size=20))
def test_offset_round_trip(offsets: dict[tuple[str, int], int]) -> None:
    assert parse_offsets(format_offsets(offsets), "f") == offsets


@given(st.lists(st.tuples(_int32, _int64), max_size=20))
def test_epoch_round_trip(pairs: list[tuple[int, int]]) -> None:
    entries = [EpochEntry(*pair) for pair in pairs]
    assert parse_epochs(format_epochs(entries), "f") == entries


def test_write_is_atomic_and_leaves_no_temp_file(tmp_path: Path) -> None:
    path = tmp_path / "replication-offset-checkpoint"
    write_checkpoint(path, format_offsets({("t", 0): 5}))
    write_checkpoint(path, format_offsets({("t", 0): 6}))
    assert path.read_bytes() == b"0\n1\nt 0 6\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["replication-offset-checkpoint"]


def test_a_failed_write_leaves_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "recovery-point-offset-checkpoint"
    write_checkpoint(path, "0\n0\n")

    def no_space(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", no_space)
    with pytest.raises(OSError, match="No space"):
        write_checkpoint(path, format_offsets({("t", 0): 5}))
    assert path.read_text() == "0\n0\n"


def test_missing_file_reads_empty(tmp_path: Path) -> None:
    assert read_checkpoint(tmp_path / "nothing") == ""


def test_binary_garbage_is_malformed(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(MalformedCheckpointError):
        read_checkpoint(tmp_path / "f")


# --- LogConfig ------------------------------------------------------------------------------------------


def test_config_defaults_are_kafkas() -> None:
    config = LogConfig()
    assert (config.segment_bytes, config.segment_ms, config.retention_ms, config.retention_bytes) == (
        1073741824,
        604800000,
        604800000,
        -1,
    )
    assert (config.index_interval_bytes, config.max_message_bytes, config.segment_index_bytes) == (
        4096,
        1048588,
        10485760,
    )
    assert config.delete_enabled


def test_config_overrides_from_zookeeper_strings() -> None:
    defaults = LogConfig(segment_bytes=1000)
    config = LogConfig.from_mapping(
        {"retention.ms": "60000", "segment.ms": 5, "min.insync.replicas": "2", "cleanup.policy": "compact"},
        defaults,
    )
    assert config == LogConfig(segment_bytes=1000, retention_ms=60000, segment_ms=5, cleanup_policy=("compact",))
    assert not config.delete_enabled
    assert LogConfig.from_mapping({"cleanup.policy": "compact,delete"}).delete_enabled


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"segment.bytes": "13"}, "Invalid value 13 for configuration segment.bytes: Value must be at least 14"),
        ({"segment.bytes": "1GB"}, "Invalid value 1GB for configuration segment.bytes: Not a number of type INT"),
        ({"segment.bytes": str(2**31)}, "Not a number of type INT"),
        ({"retention.ms": "-2"}, "Invalid value -2 for configuration retention.ms: Value must be at least -1"),
        ({"segment.ms": True}, "Not a number of type LONG"),
        ({"cleanup.policy": "delete,purge"}, "Invalid value purge for configuration cleanup.policy"),
    ],
)
def test_config_refuses_what_kafka_refuses(overrides: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidConfigurationError, match=message):
        LogConfig.from_mapping(overrides)
