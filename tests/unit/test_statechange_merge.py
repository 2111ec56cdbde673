"""The streaming merger, its inputs and its filters, against an independent line-by-line oracle."""

from __future__ import annotations

import gzip
import heapq
import os
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkaops.cluster.common.errors import InvalidArgumentError, InvalidTopicError
from kafkaops.cluster.state_change_log import BrokerLog, ControllerLog, Level, StateChangeLogFile
from kafkaops.cluster.zk.values import LeaderAndIsr, TopicPartition
from kafkaops.statechange import filters, parse, sources
from kafkaops.statechange.filters import EntryFilter, entry_selector
from kafkaops.statechange.merge import Chunk, merge_chunks, merge_logs, raise_to_running_max
from kafkaops.statechange.model import RawEntry

_TS = rb"[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2},[0-9]{3}"
STAMP = re.compile(rb"^(?:\[(" + _TS + rb")\]|(" + _TS + rb") )")
"""Kafka's layout `[%d] …` and the one without brackets (Strimzi's `%d …`): the timestamp in either group."""


def stamp_of(line: bytes) -> bytes | None:
    match = STAMP.match(line)
    return None if match is None else match.group(1) or match.group(2)


def oracle_entries(path: Path) -> list[tuple[bytes, bytes]]:
    """(key, text) per entry, the simple way: line by line, a timestamped line starts an entry."""
    data = path.read_bytes()
    if data.endswith(b"\n"):
        data = data[:-1]
    entries: list[tuple[bytes, list[bytes]]] = []
    for line in data.split(b"\n") if data or path.stat().st_size else []:
        key = stamp_of(line)
        if key is not None or not entries:
            entries.append((key or b"", [line]))
        else:
            entries[-1][1].append(line)
    return [(key, b"\n".join(lines)) for key, lines in entries]


def oracle_merge(streams: list[list[Path]], keep=lambda key, text: True) -> bytes:  # noqa: ANN001
    """heapq.merge over per-stream entry lists, stable, as the module docstring specifies."""
    merged = heapq.merge(
        *[[(k, t) for path in files for k, t in oracle_entries(path) if keep(k, t)] for files in streams],
        key=lambda entry: entry[0],
    )
    return b"".join(text + b"\n" for _, text in merged)


NO_FILTER = EntryFilter()


def run_merge(streams: list[list[Path]], spec: EntryFilter = NO_FILTER, block_size: int = 64) -> bytes:
    out = [
        text
        for batch in merge_logs(
            [[str(p) for p in files] for files in streams], entry_selector(spec), block_size=block_size
        )
        for text in batch
    ]
    return b"".join(text + b"\n" for text in out)


def stamp(second: int, millis: int = 0) -> str:
    return f"2024-05-01 13:{second // 60:02d}:{second % 60:02d},{millis:03d}"


# --- the merge equals heapq.merge, for any input --------------------------------------------------------

LINE = st.one_of(
    st.tuples(st.integers(0, 30), st.sampled_from(["INFO a-0", "TRACE [b,1]", "ERROR c", ""])).map(
        lambda t: f"[{stamp(t[0])}] {t[1]} (state.change.logger)".encode()
    ),
    # Strimzi's layout: no brackets around the time, the thread after the logger
    st.tuples(st.integers(0, 30), st.sampled_from(["INFO a-0", "TRACE [Controller id=0 epoch=1] c"])).map(
        lambda t: f"{stamp(t[0])} {t[1]} (state.change.logger) [controller-event-thread]".encode()
    ),
    st.sampled_from([b"\tat x.y(Z.java:1)", b"[not a stamp] z", b"", b"caused by \xff\xfe", b"\r"]),
)


@settings(max_examples=150, deadline=None)
@given(
    files=st.lists(st.lists(LINE, max_size=25), min_size=1, max_size=5),
    sort_files=st.booleans(),
    final_newline=st.booleans(),
    block_size=st.sampled_from([1, 7, 64, 4096]),
    window=st.one_of(st.none(), st.tuples(st.integers(0, 30), st.integers(0, 30))),
    level=st.sampled_from([None, "INFO", "ERROR"]),
    grep=st.sampled_from(
        [None, "INFO", r"^\[", r"(?m)^\tat", r"\)$", r"\n", "by \ufffd", r"(?i)error \w", "z$|^$", "logger\\)\n\tat x"]
    ),
)
def test_merge_equals_heapq_merge(
    tmp_path_factory: pytest.TempPathFactory,
    files: list[list[bytes]],
    sort_files: bool,
    final_newline: bool,
    block_size: int,
    window: tuple[int, int] | None,
    level: str | None,
    grep: str | None,
) -> None:
    """The output is exactly the kept input entries, in heapq.merge's order (filtered, then merged)."""
    directory = tmp_path_factory.mktemp("merge")
    paths = []
    for index, lines in enumerate(files):
        if sort_files:
            lines = sorted(lines, key=lambda line: stamp_of(line) or b"")
        path = directory / f"broker-{index}.log"
        path.write_bytes(b"\n".join(lines) + (b"\n" if final_newline and lines else b""))
        paths.append([path])
    spec = EntryFilter(
        start=stamp(window[0]) if window else None,
        end=stamp(window[1]) if window else None,
        levels=frozenset({level}) if level else frozenset(),
        grep=grep,
    )

    def keep(key: bytes, text: bytes) -> bool:
        in_window = window is None or stamp(window[0]).encode() <= key <= stamp(window[1]).encode() and key != b""
        found = grep is None or re.search(grep, grep_text(text), re.ASCII) is not None
        return in_window and found and (level is None or (key != b"" and text.split(b" ")[2] == level.encode()))

    assert run_merge(paths, spec, block_size=block_size) == oracle_merge(paths, keep)


def grep_text(text: bytes) -> str:
    """What --grep searches, the simple way: each line decoded, without `\\r\\n` or `\\n`, joined by `\\n`."""
    return "\n".join(line.removesuffix(b"\r").decode("utf-8", "replace") for line in text.split(b"\n"))


def test_raise_to_running_max() -> None:
    assert raise_to_running_max([b"1", b"2", b"2"], b"") == [b"1", b"2", b"2"]
    assert raise_to_running_max([b"3", b"1", b"4", b"2"], b"2") == [b"3", b"3", b"4", b"4"]
    assert raise_to_running_max([b"1", b"2"], b"5") == [b"5", b"5"]


def test_merge_is_lazy() -> None:
    """The first batch is out before the streams are read to the end (`| head` returns at once)."""

    def stream(keys: list[bytes]) -> Iterator[Chunk]:
        yield Chunk(keys, [b"v" + k for k in keys])
        raise AssertionError("read beyond the first block")

    batches = merge_chunks([stream([b"1", b"3", b"5"]), stream([b"2", b"4", b"6"])])
    assert next(batches) == [b"v1", b"v2", b"v3", b"v4"]


def test_ties_keep_input_order_and_streams_stay_in_file_order(tmp_path: Path) -> None:
    a = tmp_path / "a.log"
    b = tmp_path / "b.log"
    a.write_text(f"[{stamp(5)}] A1\n[{stamp(1)}] A2 goes back in time\n[{stamp(5)}] A3\n")
    b.write_text(f"[{stamp(5)}] B1\n[{stamp(3)}] B2\n")
    assert run_merge([[a], [b]]).decode().splitlines() == [
        f"[{stamp(5)}] A1",
        f"[{stamp(1)}] A2 goes back in time",
        f"[{stamp(5)}] A3",
        f"[{stamp(5)}] B1",
        f"[{stamp(3)}] B2",
    ]
    assert run_merge([[b], [a]]).decode().splitlines()[0] == f"[{stamp(5)}] B1"


def test_bytes_pass_through_unchanged(tmp_path: Path) -> None:
    crlf = tmp_path / "crlf.log"
    crlf.write_bytes(f"[{stamp(1)}] INFO x\r\n\tat y\r\n[{stamp(3)}] INFO \xe9\r\n".encode("latin-1"))
    last = tmp_path / "no-final-newline.log"
    last.write_bytes(f"[{stamp(2)}] INFO z".encode())
    assert run_merge([[crlf], [last]]) == (
        f"[{stamp(1)}] INFO x\r\n\tat y\r\n[{stamp(2)}] INFO z\n[{stamp(3)}] INFO \xe9\r\n".encode("latin-1")
    )


def test_rotated_files_of_our_cluster_merge_into_one_timeline(tmp_path: Path) -> None:
    """Two brokers' logs written by kafkaops' own StateChangeLogFile, rolled hourly (one gzipped)."""
    clock = [datetime(2024, 5, 1, 12, 59, 59, tzinfo=UTC).timestamp()]
    controller = ControllerLog(controller_id=0, epoch=3)
    broker = BrokerLog(broker_id=1)
    foo = TopicPartition("foo", 0)
    logs = {
        0: StateChangeLogFile(tmp_path / "b0", clock=lambda: clock[0], tz=UTC, threshold=Level.TRACE),
        1: StateChangeLogFile(tmp_path / "b1", clock=lambda: clock[0], tz=UTC, threshold=Level.TRACE),
    }
    for step in range(6):  # 12:59:59, 13:30:00, 14:00:00, ... 15:30:01: four hours, rolled three times
        logs[0].write(controller.partition_online(foo, "OfflinePartition", LeaderAndIsr(step % 2, step, (0, 1), 0)))
        clock[0] += 0.5
        logs[1].write(broker.starting_become_leader(step, 0, 3, foo))
        clock[0] += 1800
    for log in logs.values():
        log.close()
    rolled = tmp_path / "b0" / "state-change.log.2024-05-01-12"
    with open(rolled, "rb") as source, gzip.open(f"{rolled}.gz", "wb") as sink:
        sink.write(source.read())
    rolled.unlink()
    files = sorted(str(p) for p in tmp_path.glob("b*/state-change.log*"))
    streams = sources.group_rotated(files)
    assert [[os.path.relpath(f, tmp_path) for f in s] for s in streams] == [
        [f"b0/state-change.log{suffix}" for suffix in (".2024-05-01-12.gz", ".2024-05-01-13", ".2024-05-01-14", "")],
        [f"b1/state-change.log{suffix}" for suffix in (".2024-05-01-12", ".2024-05-01-13", ".2024-05-01-14", "")],
    ]
    merged = [text.decode() for batch in merge_logs(streams, None) for text in batch]
    assert len(merged) == 12
    assert [line[1:24] for line in merged] == sorted(line[1:24] for line in merged)
    assert ["Controller id=0" in line for line in merged] == [True, False] * 6


def test_group_rotated_orders_by_date_and_keeps_first_appearance() -> None:
    paths = [
        "d2/state-change.log",
        "d1/state-change.log",
        "d1/state-change.log.2024-05-01-13",
        "d1/state-change.log.2024-05-01-09.gz",
        "other.log",
        "d2/state-change.log.2024-04-30-23",
    ]
    assert sources.group_rotated(paths) == [
        ["d2/state-change.log.2024-04-30-23", "d2/state-change.log"],
        ["d1/state-change.log.2024-05-01-09.gz", "d1/state-change.log.2024-05-01-13", "d1/state-change.log"],
        ["other.log"],
    ]


# --- filters -------------------------------------------------------------------------------------------


@pytest.fixture
def two_brokers(tmp_path: Path) -> list[list[Path]]:
    a = tmp_path / "a.state-change.log"
    b = tmp_path / "b.state-change.log"
    a.write_text(
        "orphan line before any timestamp\n"
        f"[{stamp(1)}] TRACE [Controller id=0 epoch=3] Changed partition foo-0 state from A to B (state.change.logger)\n"
        f"[{stamp(2)}] ERROR [Controller id=0 epoch=3] Controller 0 epoch 3 failed to change state for partition "
        "foo-1 from A to B (state.change.logger)\n"
        "kafka.common.StateChangeFailedException: no replica\n"
        f"[{stamp(4)}] INFO [Controller id=0 epoch=3] Sending UpdateMetadata request to brokers HashSet(1) for 2 "
        "partitions (state.change.logger)\n"
    )
    b.write_text(
        f"[{stamp(2)}] TRACE Broker 1 received LeaderAndIsr request (...) correlation id 5 from controller 0 epoch 2 "
        "for partition [foo,1] (state.change.logger)\n"
        f"[{stamp(3)}] TRACE [Broker id=1] Follower foobar-0 starts at leader epoch 1 (state.change.logger)\n"
    )
    return [[a], [b]]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (EntryFilter(), ["orphan", 1, 2, 2, 3, 4]),
        (EntryFilter(topic="foo"), [1, 2, 2]),
        (EntryFilter(topic="foo", partitions=frozenset({1})), [2, 2]),
        (EntryFilter(topic="foobar"), [3]),
        (EntryFilter(start=stamp(2), end=stamp(3)), [2, 2, 3]),  # inclusive; the orphan has no date
        (EntryFilter(end=stamp(1)), [1]),
        (EntryFilter(brokers=frozenset({1})), [2, 3]),
        (EntryFilter(controller_epochs=frozenset({2})), [2]),
        (EntryFilter(levels=frozenset({"ERROR", "INFO"})), [2, 4]),
        (EntryFilter(topic="foo", start=stamp(2), levels=frozenset({"TRACE"})), [2]),
        (EntryFilter(grep="Exception"), [2]),  # in a continuation line: the whole entry is kept
        (EntryFilter(grep=r"(?s)foo-1 .*no replica$"), [2]),  # a match across lines; $ ends the entry
        (EntryFilter(grep=r"foo-1 .*no replica"), []),  # `.` stops at the end of a line
        (EntryFilter(grep=r"logger\)$"), [1, 2, 3, 4]),
        (EntryFilter(grep=r"(?m)^kafka\."), [2]),
        (EntryFilter(grep=r"^orphan|epoch [2-9]$"), ["orphan"]),
        (EntryFilter(grep=r"(?i)FOLLOWER \w+-\d"), [3]),
        (EntryFilter(grep="id=[01]", topic="foo", start=stamp(2)), [2]),
    ],
)
def test_filters(two_brokers: list[list[Path]], spec: EntryFilter, expected: list) -> None:
    merged = run_merge(two_brokers, spec).decode()
    heads = [line for line in merged.splitlines() if line.startswith(("[", "orphan"))]
    assert [h if h == "orphan line before any timestamp" else int(h[18:20]) for h in heads] == [
        "orphan line before any timestamp" if e == "orphan" else e for e in expected
    ]
    lines = merged.splitlines()
    for index, line in enumerate(lines):  # a kept entry keeps its continuation line, and only it does
        if " ERROR " in line:
            assert lines[index + 1] == "kafka.common.StateChangeFailedException: no replica"
    assert merged.count("StateChangeFailedException") == sum(" ERROR " in line for line in lines)


def test_filters_agree_with_the_oracle(two_brokers: list[list[Path]]) -> None:
    spec = EntryFilter(topic="foo", start=stamp(2))
    select = entry_selector(spec)
    assert select is not None
    assert run_merge(two_brokers, spec) == oracle_merge(
        two_brokers, lambda k, t: select([b"[%s]" % k if k else k], [t]) == [0]
    )


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2024-05-01 13:00:00,000", "2024-05-01 13:00:00,000"),
        ('"2024-05-01 13:00:00,000"', "2024-05-01 13:00:00,000"),  # Kafka drops quotes
        ("2024-5-1 3:4:5,6", "2024-05-01 03:04:05,006"),  # SimpleDateFormat takes short fields
        ("0000-00-00 00:00:00,000", None),  # Kafka's defaults: no bound
        ("9999-12-31 23:59:59,999", None),
    ],
)
def test_parse_time(value: str, expected: str | None) -> None:
    assert filters.parse_time(value, "--start-time") == expected


@pytest.mark.parametrize("value", ["2024-02-30 13:00:00,000", "2024-05-01", "yesterday", "2024-05-01T13:00:00,000"])
def test_parse_time_refuses(value: str) -> None:
    with pytest.raises(InvalidArgumentError, match=r"Invalid --end-time .*expected a date and time in the format"):
        filters.parse_time(value, "--end-time")


def test_grep_text_and_ascii_classes(tmp_path: Path) -> None:
    """Both line endings read alike, invalid UTF-8 is replaced as Java does (one U+FFFD for an encoded
    surrogate, where Python's "replace" puts three), classes are ASCII."""
    text = f"[{stamp(1)}] INFO a \u0663 \xe9 \xff\r\n\tat b\r\n\tat c".encode().replace(
        b"\xc3\xbf", b"\xff\xed\xa0\x80"
    )
    assert parse.entry_text(text) == f"[{stamp(1)}] INFO a \u0663 \xe9 \ufffd\ufffd\n\tat b\n\tat c"
    path = tmp_path / "x.log"
    path.write_bytes(text + b"\n")
    for pattern, kept in [(r"a \d", False), ("a \u0663", True), (r"\xe9 \W", True), (r"(?i)\xc9", False),
                          (r"\r", False), (r"b\n\tat c$", True), ("^\\[", True), ("\ufffd$", False)]:  # fmt: skip
        assert bool(run_merge([[path]], EntryFilter(grep=pattern))) == kept, pattern


@settings(max_examples=200, deadline=None)
@given(
    texts=st.lists(st.text(alphabet="ab\x00", max_size=8).map(str.encode), min_size=1, max_size=20),
    needle=st.sampled_from([b"a", b"ab", b"\x00", b"aa"]),
)
def test_containing(texts: list[bytes], needle: bytes) -> None:
    assert filters.containing(needle, texts) == [i for i, text in enumerate(texts) if needle in text]


@pytest.mark.parametrize(
    ("pattern", "literal"),
    [
        (r"(?m)^\tat kafka\.controller\.", b"\tat kafka.controller."),
        (r"foo\d+barbaz", b"barbaz"),  # the longest run
        ("x(?i:abc)y", b"x"),  # a scoped flag's group is not a plain character
        ("caf\u00e9 x", "caf\u00e9 x".encode()),
        ("ab\r\ncd", b"ab"),  # line ends are normalised in the text, not in the bytes
        ("x\ufffdyz", b"yz"),  # U+FFFD in the text may be any invalid bytes
        ("(?i)abc", None),
        ("abc|def", None),
        ("[ab]+", None),
        ("\ud800", None),  # no text holds a lone surrogate, and it has no UTF-8
    ],
)
def test_required_literal(pattern: str, literal: bytes | None) -> None:
    assert filters.required_literal(filters.compile_grep(pattern)) == literal


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [
        ("(", "missing \\), unterminated subpattern at position 0"),
        ("a**", "multiple repeat at position 2"),
        (r"\p{L}", r"bad escape \\p at position 0"),
        ("(?u)x", "ASCII and UNICODE flags are incompatible"),
        ("a{99999999999}", "the repetition number is too large"),
        ("(" * 5000 + ")" * 5000, "nested too deeply"),
    ],
)
def test_grep_refuses_an_invalid_regex(pattern: str, reason: str) -> None:
    with pytest.raises(InvalidArgumentError, match=f'^Invalid regular expression ".*" in --grep: {reason}$'):
        filters.filter_from_options(grep=pattern)


def test_parse_partitions() -> None:
    assert filters.parse_partitions("0,1, 2") == frozenset({0, 1, 2})
    with pytest.raises(InvalidArgumentError, match="^The list of partitions contains repeated entries: 1,0$"):
        filters.parse_partitions("1,0,1,0,2")
    with pytest.raises(InvalidArgumentError, match='invalid partition id: "x"'):
        filters.parse_partitions("0,x")


def test_topic_with_illegal_characters_cannot_match() -> None:
    with pytest.raises(InvalidTopicError, match=r'Topic name "a/b" is illegal'):
        filters.check_topic("a/b")


# --- inputs ----------------------------------------------------------------------------------------------


def test_expand_logs(tmp_path: Path) -> None:
    (tmp_path / "state-change.log").write_text("")
    (tmp_path / "state-change.log.2024-05-01-13").write_text("")
    (tmp_path / "server.log").write_text("")
    (tmp_path / "x.log").write_text("")
    directory = str(tmp_path)
    assert sources.expand_logs([directory]) == [
        f"{directory}/state-change.log",
        f"{directory}/state-change.log.2024-05-01-13",
    ]
    assert sources.expand_logs([f"{directory}/*.log", f"{directory}/x.log"]) == [
        f"{directory}/server.log",
        f"{directory}/state-change.log",
        f"{directory}/x.log",
    ]
    with pytest.raises(InvalidArgumentError, match="^Cannot read state-change log .*/nope.log: no such file$"):
        sources.expand_logs([f"{directory}/nope.log"])
    with pytest.raises(InvalidArgumentError, match="^No state-change log matches .*/nope\\*$"):
        sources.expand_logs([f"{directory}/nope*"])


def test_logs_regex_is_kafkas(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("state-change.log", "state-change.log.2024-05-01-13", "server.log", "old-state-change.log"):
        (tmp_path / name).write_text("")
    # split at the last `/`, unanchored search in the name, paths built as dir + "/" + name
    assert sources.logs_regex(f"{tmp_path}/^state-change") == [
        f"{tmp_path}/state-change.log",
        f"{tmp_path}/state-change.log.2024-05-01-13",
    ]
    assert sources.logs_regex(f"{tmp_path}/change.log$") == [
        f"{tmp_path}/old-state-change.log",
        f"{tmp_path}/state-change.log",
    ]
    monkeypatch.chdir(tmp_path)
    assert sources.logs_regex("server") == ["./server.log"]
    with pytest.raises(InvalidArgumentError, match="^Invalid regular expression"):
        sources.logs_regex(f"{tmp_path}/(")
    with pytest.raises(InvalidArgumentError, match="^Cannot list directory /nonexistent"):
        sources.logs_regex("/nonexistent/x")


def test_bad_files_fail_with_a_message(tmp_path: Path) -> None:
    bad_gzip = tmp_path / "state-change.log.gz"
    bad_gzip.write_bytes(b"not gzip at all")
    with pytest.raises(InvalidArgumentError, match=r"^Cannot read state-change log .*state-change.log.gz: "):
        list(merge_logs([[str(bad_gzip)]], None))


def test_unreadable_file_fails_before_any_output(tmp_path: Path) -> None:
    unreadable = tmp_path / "locked.log"
    unreadable.write_text("x")
    unreadable.chmod(0)
    if os.access(unreadable, os.R_OK):
        pytest.skip("running as a user that reads everything")
    with pytest.raises(InvalidArgumentError, match="permission denied"):
        sources.check_readable([str(unreadable)])


def test_a_file_without_timestamps_is_refused_beyond_the_entry_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sources, "MAX_ENTRY_SIZE", 1000)
    garbage = tmp_path / "binary.log"
    garbage.write_bytes(os.urandom(5000).replace(b"[", b"("))
    with pytest.raises(InvalidArgumentError, match="no line starts a log entry"):
        list(merge_logs([[str(garbage)]], None, block_size=100))


def test_positions(two_brokers: list[list[Path]]) -> None:
    streams = [[str(p) for p in files] for files in two_brokers]
    entries: list[RawEntry] = [e for batch in merge_logs(streams, None, positions=True) for e in batch]
    assert [(os.path.basename(e.source), e.line) for e in entries] == [
        ("a.state-change.log", 1),
        ("a.state-change.log", 2),
        ("a.state-change.log", 3),
        ("b.state-change.log", 1),
        ("b.state-change.log", 2),
        ("a.state-change.log", 5),
    ]
