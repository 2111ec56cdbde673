"""The merger's compiled core (`merge_core`, Cython) against the block-wise Python merge it replaces, and
the raw-bytes filter (`filters.raw_plan`, `topic_accept`) against the parsed one (`entry_selector`)."""

from __future__ import annotations

import gzip
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkaops.cluster.common.errors import InvalidArgumentError
from kafkaops.statechange import filters, parse, sources
from kafkaops.statechange.filters import EntryFilter, entry_selector, fields_match, raw_plan, topic_accept
from kafkaops.statechange.merge import TextMerge, compiled_core, merge_logs

CORE = compiled_core()
needs_core = pytest.mark.skipif(CORE is None, reason="merge_core not built (python setup_merger_compiled.py)")


def core() -> ModuleType:
    assert CORE is not None
    return CORE


def python_merge(streams: list[list[Path]], spec: EntryFilter, block_size: int = 64) -> bytes:
    """The reference: the block-wise merge, as the CLI writes its text."""
    batches = merge_logs([[str(p) for p in files] for files in streams], entry_selector(spec), block_size=block_size)
    return b"".join(text + b"\n" for batch in batches for text in batch)


def core_merge(streams: list[list[Path]], spec: EntryFilter, block_size: int = 64) -> bytes:
    merge = TextMerge(core(), [[str(p) for p in files] for files in streams], raw_plan(spec), block_size=block_size)
    return b"".join(merge)


def stamp(second: int, millis: int = 0) -> str:
    return f"2024-05-01 13:{second // 60:02d}:{second % 60:02d},{millis:03d}"


MESSAGES = [
    "INFO [Broker id=1] become-follower for partition a-0 with leader 2",
    "TRACE Controller 0 epoch 7 sending become-leader for partition [a,1]",
    "TRACE Broker 1 cached leader info for partition [a-1,2] in response",
    "INFO [Controller id=0 epoch=3] LeaderAndIsrPartitionState(topicName='a', partitionIndex=3, leader=1)",
    "ERROR {topic=b,partition=4,error_code=0} rack: a-5",
    "WARN a-6 leads the message, [a.b-7] and a-8.",
    "INFO",
    "",
]
LINE = st.one_of(
    st.tuples(st.integers(0, 20), st.sampled_from(MESSAGES)).map(
        lambda t: f"[{stamp(t[0])}] {t[1]} (state.change.logger)".encode()
    ),
    st.tuples(st.integers(0, 20), st.sampled_from(MESSAGES)).map(
        lambda t: f"{stamp(t[0])} {t[1]} (state.change.logger) [controller-event-thread-9]".encode()
    ),
    st.sampled_from(
        [b"\tat x.y(Z.java:1)", b"[not a stamp] a-0", b"", b"caused by \xff\xfe a-0", b"\r", b"2024-05-01 13:00:01,000"]
    ),
)


@needs_core
@settings(max_examples=200, deadline=None)
@given(
    files=st.lists(st.lists(LINE, max_size=25), min_size=1, max_size=4),
    sort_files=st.booleans(),
    final_newline=st.booleans(),
    block_size=st.sampled_from([1, 7, 64, 4096]),
    window=st.one_of(st.none(), st.tuples(st.one_of(st.none(), st.integers(0, 20)), st.integers(0, 20))),
    topic=st.sampled_from([None, "a", "a-1", "b"]),
    partitions=st.sampled_from([frozenset(), frozenset({1, 5}), frozenset({0, 2, 3})]),
    level=st.sampled_from([None, "INFO"]),
    grep=st.sampled_from([None, "a-0", r"(?m)^\tat", r"\)$"]),
)
def test_core_equals_the_python_merge(
    tmp_path_factory: pytest.TempPathFactory,
    files: list[list[bytes]],
    sort_files: bool,
    final_newline: bool,
    block_size: int,
    window: tuple[int | None, int] | None,
    topic: str | None,
    partitions: frozenset[int],
    level: str | None,
    grep: str | None,
) -> None:
    directory = tmp_path_factory.mktemp("core")
    streams = []
    for index, lines in enumerate(files):
        if sort_files:
            lines = sorted(lines, key=lambda line: parse.entry_key(line) if parse.entry_key(line)[:1] == b"[" else b"")
        path = directory / f"broker-{index}.log"
        path.write_bytes(b"\n".join(lines) + (b"\n" if final_newline and lines else b""))
        streams.append([path])
    spec = EntryFilter(
        topic=topic,
        partitions=partitions if topic else frozenset(),
        start=stamp(window[0]) if window and window[0] is not None else None,
        end=stamp(window[1]) if window else None,
        levels=frozenset({level}) if level else frozenset(),
        grep=grep,
    )
    assert core_merge(streams, spec, block_size) == python_merge(streams, spec, block_size)


def write(path: Path, *lines: str, newline: bool = True) -> Path:
    path.write_bytes("\n".join(lines).encode() + (b"\n" if newline else b""))
    return path


@needs_core
def test_multi_line_entries_across_reads_and_ties_between_files(tmp_path: Path) -> None:
    """A stack trace stays with its entry whatever the read size; equal times keep the streams' order."""
    a = write(
        tmp_path / "a.log",
        f"[{stamp(1)}] ERROR failed (state.change.logger)",
        "\tat one",
        "\tat two",
        f"[{stamp(2)}] INFO a2 (state.change.logger)",
    )
    b = write(
        tmp_path / "b.log", f"[{stamp(1)}] INFO b1 (state.change.logger)", f"[{stamp(2)}] INFO b2 (state.change.logger)"
    )
    for block_size in (1, 5, 64, 1 << 16):
        assert core_merge([[b], [a]], EntryFilter(), block_size).decode().splitlines() == [
            f"[{stamp(1)}] INFO b1 (state.change.logger)",
            f"[{stamp(1)}] ERROR failed (state.change.logger)",
            "\tat one",
            "\tat two",
            f"[{stamp(2)}] INFO b2 (state.change.logger)",
            f"[{stamp(2)}] INFO a2 (state.change.logger)",
        ]


@needs_core
def test_mixed_layouts_in_one_file_order_by_time(tmp_path: Path) -> None:
    """Strimzi's layout without brackets and Kafka's, in one file and across files, merge by time."""
    a = write(
        tmp_path / "a.log",
        f"{stamp(1)} INFO plain (state.change.logger) [t]",
        f"[{stamp(3)}] INFO bracketed (state.change.logger)",
    )
    b = write(
        tmp_path / "b.log",
        f"[{stamp(2)}] INFO other (state.change.logger)",
        f"{stamp(4)} INFO last (state.change.logger) [t]",
    )
    assert [line.split()[3] for line in core_merge([[a], [b]], EntryFilter()).decode().splitlines()] == [
        "plain",
        "other",
        "bracketed",
        "last",
    ]
    assert core_merge([[a], [b]], EntryFilter()) == python_merge([[a], [b]], EntryFilter())


@needs_core
def test_window_bounds_are_inclusive_at_entry_boundaries(tmp_path: Path) -> None:
    log = write(
        tmp_path / "a.log",
        "orphan line before any time",
        *(f"[{stamp(2, ms)}] INFO e{ms} (state.change.logger)" for ms in (0, 1, 2, 3)),
        "\tat continuation of e3",
    )
    spec = EntryFilter(start=stamp(2, 1), end=stamp(2, 3))
    assert core_merge([[log]], spec).decode().splitlines() == [
        f"[{stamp(2, 1)}] INFO e1 (state.change.logger)",
        f"[{stamp(2, 2)}] INFO e2 (state.change.logger)",
        f"[{stamp(2, 3)}] INFO e3 (state.change.logger)",
        "\tat continuation of e3",
    ]
    # no bound: the orphan is kept, first; any bound drops it (as the Python merge does)
    assert core_merge([[log]], EntryFilter()).startswith(b"orphan line")
    assert not core_merge([[log]], EntryFilter(end=stamp(59))).startswith(b"orphan")


@needs_core
def test_rotated_gzip_crlf_and_unterminated_files(tmp_path: Path) -> None:
    old = tmp_path / "state-change.log.2024-05-01-12.gz"
    with gzip.open(old, "wb") as file:
        file.write(f"[{stamp(1)}] INFO gz (state.change.logger)\r\n".encode())
    live = write(
        tmp_path / "state-change.log", f"[{stamp(0)}] INFO behind (state.change.logger)", "tail", newline=False
    )
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    streams = [[old, live], [empty]]
    assert core_merge(streams, EntryFilter()) == python_merge(streams, EntryFilter())
    assert core_merge(streams, EntryFilter()).endswith(b"behind (state.change.logger)\ntail\n")


@needs_core
def test_read_errors_and_the_entry_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bad = tmp_path / "state-change.log.gz"
    bad.write_bytes(b"not gzip at all")
    with pytest.raises(InvalidArgumentError, match=r"^Cannot read state-change log .*state-change.log.gz: "):
        core_merge([[bad]], EntryFilter())
    monkeypatch.setattr(sources, "MAX_ENTRY_SIZE", 1000)
    garbage = tmp_path / "binary.log"
    garbage.write_bytes(b"no time here\n" * 400)
    with pytest.raises(InvalidArgumentError, match="no line starts a log entry in its 0 MiB from byte 0 on"):
        core_merge([[garbage]], EntryFilter(), block_size=100)


@needs_core
def test_int_keys_order_as_the_timestamps() -> None:
    key_of = core().key_of
    assert key_of(b"[2024-05-01 13:00:00,123] x") == filters.int_key("2024-05-01 13:00:00,123") == 20240501130000123
    assert key_of(b"2024-05-01 13:00:00,123 x") == 20240501130000123
    assert key_of(b"2024-05-01 13:00:00,123") is None  # the layout without brackets has a space after the time
    assert key_of(b"[2024-05-01 13:00:00,12x] x") is None
    assert key_of(b"\tat x") is None


TOKENS = st.lists(
    st.sampled_from(
        [
            " ",
            ",",
            "[",
            "]",
            ".",
            "-",
            "a",
            "a-1",
            "a-1-2",
            "[a-1,2]",
            "[a,3]",
            "[a, 4]",
            "rack:",
            "topic=a,partition=5",
            "topicName='a', partitionIndex=6",
            "b-7",
            "x",
            "9",
            "\t",
            "\xe9",
        ]
    ),
    max_size=12,
)


@settings(max_examples=500, deadline=None)
@given(
    tokens=TOKENS,
    topic=st.sampled_from(["a", "a-1", "b", "9"]),
    partitions=st.sampled_from([frozenset(), frozenset({1, 2, 6})]),
)
def test_topic_accept_equals_fields_match(tokens: list[str], topic: str, partitions: frozenset[int]) -> None:
    message = "".join(tokens)
    spec = EntryFilter(topic=topic, partitions=partitions)
    for text, key in (
        (f"[{stamp(0)}] INFO {message} (state.change.logger)", None),
        (f"{stamp(0)} TRACE {message} (state.change.logger) [kafka-request-handler-1]", None),
        (f"[{stamp(0)}] {message}", None),
        (message, parse.ORPHAN_KEY),
    ):
        raw = text.encode()
        expected = fields_match(spec, parse.entry_key(raw) if key is None else key, raw)
        assert topic_accept(topic, partitions)(key is not None, raw) == expected, text


@pytest.mark.parametrize(
    "message",
    [
        "for partition [a-1]",
        "for partition [a-1,2]",
        "for partition [a-1, 2] and [a,3]",
        "partition a-1.",
        "partition a-1.x",
        "rack: a-1 rack:[a-1] rack:,a-1",
        "x,a-1)",
        "\ta-1\t",
        "[a-1-2] a-1-2",
        "topic=a,partition=5",
        "topicName='a', partitionIndex=6",
        "[9,1] 9-1 [9-1]",
        "a-1",
        "[a,0000000000000000001] a-0000000000000000001",
    ],
)
@pytest.mark.parametrize("topic", ["a", "a-1", "9"])
@pytest.mark.parametrize("partitions", [frozenset(), frozenset({1})])
def test_topic_accept_on_the_forms(message: str, topic: str, partitions: frozenset[int]) -> None:
    spec = EntryFilter(topic=topic, partitions=partitions)
    raw = f"[{stamp(0)}] TRACE {message} (state.change.logger)".encode()
    assert topic_accept(topic, partitions)(False, raw) == fields_match(spec, parse.entry_key(raw), raw)


@settings(max_examples=500, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            ["[", "]", " ", "  ", "INFO", "TRACE", "x", "(state.change.logger)", "(a)", "[t]", "\xe9", "\t"]
        ),
        max_size=8,
    )
)
def test_raw_message_equals_the_parsed_message(tokens: list[str]) -> None:
    for line in (
        f"[{stamp(0)}]" + "".join(tokens),
        f"[{stamp(0)}] INFO" + "".join(tokens),
        f"{stamp(0)} " + "".join(tokens),
    ):
        expected = parse.parse_first_line(line)[2]
        assert filters.raw_message(line.encode(), False).decode() == expected, line


REAL_LOGS = Path(__file__).resolve().parents[2].parent / "shared" / "kafka-logs"  # ../shared beside the repository


@needs_core
@pytest.mark.parametrize(
    "spec",
    [
        EntryFilter(),
        EntryFilter(topic="test"),
        EntryFilter(topic="ad-events", partitions=frozenset({0})),
        EntryFilter(start="2018-11-05 12:00:00,000"),
    ],
)
def test_core_on_the_real_logs_of_every_version(spec: EntryFilter) -> None:
    """Kafka 0.8.2 to 4.0 (and Strimzi's layout), each file a stream as the CLI makes them."""
    streams = [[path] for path in sorted(REAL_LOGS.glob("*.log"))]
    assert streams
    assert core_merge(streams, spec, block_size=4096) == python_merge(streams, spec, block_size=4096)


def test_raw_plan_pays_where_it_needs_no_parse_per_entry() -> None:
    assert filters.raw_plan_pays(EntryFilter(topic="a", partitions=frozenset({1}), start=stamp(0), end=stamp(9)))
    assert filters.raw_plan_pays(EntryFilter(grep=r"correlationId 5\d"))
    assert not filters.raw_plan_pays(EntryFilter(grep=r"(?i)error"))
    assert not filters.raw_plan_pays(EntryFilter(topic="a", levels=frozenset({"INFO"})))
    assert not filters.raw_plan_pays(EntryFilter(brokers=frozenset({1})))
