"""The streaming merger: a lazy k-way merge of per-stream generators, in constant memory.

A stream is one broker's log: its rotated files chained oldest first (`sources.group_rotated`). Each
file is read in blocks of lines of whole entries (`sources.read_lines`), so memory holds one or two
blocks per stream, and the first merged entries are out as soon as every stream has produced a block:
`| head` returns at once.

The merge is `heapq.merge(*streams, key=timestamp)` in meaning: entries compare by their raw fixed-width
timestamp bytes, ties keep stream order. It is computed block-wise rather than entry-wise, because a
Python-level heap step per entry is several times slower than `sort -m`: every entry below the smallest
"last buffered key" of the streams is known, so those entries are cut out of each buffer with `bisect`
and ordered with one stable `sorted` (Timsort merges the already-sorted runs in C).

A file whose timestamps go backwards (several brokers writing one file, a clock step) is not re-sorted:
its order is kept, and the merged result is only as sorted as its inputs. Precisely, a merge of streams
S1..Sn equals a stable sort of all entries by (running maximum of the timestamp within its stream,
stream position, position in stream). Keys are raised to that running maximum here, which keeps the
block-wise merge exact for unsorted inputs; the Spark engine sorts by the same key to agree.

The same merge without a Python object per entry is `merge_core`, compiled with Cython (see
`compiled_core`): used for text output when it is built, several times faster than the block-wise merge
here, which stays the reference and the fallback.
"""

from __future__ import annotations

import os
import sysconfig
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import partial
from itertools import accumulate
from types import ModuleType
from typing import Any, NamedTuple

from kafkaops.cluster.common.compiled import build_description, why_pure_python
from kafkaops.statechange import sources
from kafkaops.statechange.filters import RawPlan
from kafkaops.statechange.model import RawEntry
from kafkaops.statechange.parse import ORPHAN_KEY, split_entries
from kafkaops.statechange.sources import BLOCK_SIZE, read_lines

Selector = Callable[[list[bytes], list[bytes]], list[int]]
"""Given a block's (keys, texts), the indexes of the entries to keep (see `filters.entry_selector`)."""


class Chunk(NamedTuple):
    keys: list[bytes]
    """Merge keys, non-decreasing: timestamps raised to the stream's running maximum."""
    values: list[Any]
    """What the merge carries: each entry's text (bytes), or its RawEntry when positions are wanted."""


def file_chunks(
    path: str, select: Selector | None, *, positions: bool, block_size: int = BLOCK_SIZE
) -> Iterator[tuple[list[bytes], list[Any]]]:
    """(keys, values) of the kept entries of one file, block by block; keys are the entries' raw
    `[timestamp]` heads (`parse.split_entries`)."""
    line = 1
    for index, lines in enumerate(read_lines(path, block_size)):
        keys, texts = split_entries(lines, file_start=index == 0)
        values: list[Any] = texts
        if positions:
            values = []
            for key, text in zip(keys, texts, strict=True):
                values.append(RawEntry(key, text, path, line))
                line += text.count(b"\n") + 1
        if select is not None:
            kept = select(keys, texts)
            if len(kept) < len(keys):
                keys = [keys[i] for i in kept]
                values = [values[i] for i in kept]
        yield keys, values


def stream_chunks(
    files: Sequence[str], select: Selector | None, *, positions: bool, block_size: int = BLOCK_SIZE
) -> Iterator[Chunk]:
    """The kept entries of one stream's files, oldest file first, as chunks with merge keys."""
    floor = ORPHAN_KEY
    for path in files:
        for keys, values in file_chunks(path, select, positions=positions, block_size=block_size):
            if keys:
                keys = raise_to_running_max(keys, floor)
                floor = keys[-1]
                yield Chunk(keys, values)


def raise_to_running_max(keys: list[bytes], floor: bytes) -> list[bytes]:
    """Each key raised to the maximum of `floor` and the keys before it (unchanged when sorted)."""
    # `sorted` on a sorted list is one pass of type-specialised compares, cheaper than map(le, ...)
    if keys[0] >= floor and keys == sorted(keys):
        return keys
    return list(accumulate(keys, max, initial=floor))[1:]


class _Buffer:
    """One stream's entries read but not yet merged."""

    __slots__ = ("chunks", "keys", "values", "exhausted", "low")

    def __init__(self, chunks: Iterable[Chunk]) -> None:
        self.chunks = iter(chunks)
        self.keys: list[bytes] = []
        self.values: list[Any] = []
        self.exhausted = False
        self.low = 1
        """Refill below this many entries: half the last chunk read."""

    def read(self) -> None:
        chunk = next(self.chunks, None)
        if chunk is None:
            self.exhausted = True
        else:
            self.keys += chunk.keys
            self.values += chunk.values
            self.low = (len(chunk.keys) + 1) // 2

    def fill(self) -> None:
        while len(self.keys) < self.low and not self.exhausted:
            self.read()

    def take_below(self, bound: bytes | None, keys: list[bytes], values: list[Any]) -> None:
        """Move the entries with key < bound (all of them if bound is None) to keys/values."""
        cut = len(self.keys) if bound is None else bisect_left(self.keys, bound)
        if cut == len(self.keys):
            keys += self.keys
            values += self.values
            self.keys, self.values = [], []
        elif cut:
            keys += self.keys[:cut]
            values += self.values[:cut]
            del self.keys[:cut], self.values[:cut]


def merge_chunks(streams: Sequence[Iterable[Chunk]]) -> Iterator[list[Any]]:
    """Merge streams of chunks into batches of values in (key, stream position, position) order.

    Each round, every stream that holds less than half a chunk is topped up, then every entry with a
    key below `bound` (the smallest last buffered key among the streams that may still produce
    entries) is final: no stream can later produce a smaller key. Topping up all streams together
    makes each round take long runs from every stream, which the sort merges cheaply, and keeps the
    rounds (a bisect per stream each) few. When nothing is below the bound (a run of equal keys), the
    streams sitting at the bound read on. Memory: about 1.5 chunks per stream.
    """
    live = [_Buffer(stream) for stream in streams]
    while True:
        for buffer in live:
            buffer.fill()
        live = [buffer for buffer in live if buffer.keys]
        if not live:
            return
        bound = min((b.keys[-1] for b in live if not b.exhausted), default=None)
        keys: list[bytes] = []
        values: list[Any] = []
        for buffer in live:
            buffer.take_below(bound, keys, values)
        if not keys:
            for buffer in live:
                if not buffer.exhausted and buffer.keys[-1] == bound:
                    buffer.read()
        elif len(live) == 1:
            yield values
        else:
            # The key of each value is the next of `keys` (`next(keys, value)`: the value is an unused
            # default): sorted() calls the key function once per value, in list order, before sorting.
            yield sorted(values, key=partial(next, iter(keys)))


def merge_logs(
    streams: Sequence[Sequence[str]],
    select: Selector | None,
    *,
    positions: bool = False,
    block_size: int = BLOCK_SIZE,
) -> Iterator[list[Any]]:
    """The kept entries of all streams, merged, in batches: texts (bytes), or RawEntry if `positions`."""
    return merge_chunks([stream_chunks(files, select, positions=positions, block_size=block_size) for files in streams])


# --- the compiled core ---------------------------------------------------------------------------------

CORE_BATCH_SIZE = 256 * 1024
"""Bytes of output per batch of the compiled core: one write each."""

CORE_BLOCK_SIZE = 256 * 1024
"""Bytes read per file per step by the compiled core: it holds no object per line, so a larger read than
the block-wise merge's BLOCK_SIZE costs no memory traffic and saves reads (10 % less CPU than 64 KiB on
20 brokers' logs, 1 GB)."""


def compiled_core() -> ModuleType | None:
    """`merge_core` compiled (`setup_merger_compiled.py`), or None: not built, built from an older source
    (an edit or a checkout since), or KAFKAOPS_PURE_PYTHON=1 (the fallback, which the tests also run)."""
    if _why_core_not_compiled() is not None:
        return None
    try:
        from kafkaops.statechange import merge_core  # type: ignore[attr-defined]
    except ImportError:
        return None
    core: ModuleType = merge_core
    return core


def _why_core_not_compiled() -> str | None:
    here = os.path.dirname(os.path.abspath(__file__))
    built = os.path.join(here, "merge_core" + (sysconfig.get_config_var("EXT_SUFFIX") or ".so"))
    return why_pure_python(built, [os.path.join(here, "merge_core.pyx")])


def core_description() -> str:
    """Which merge this process runs, as the benchmarks print it."""
    reason = None if compiled_core() is not None else _why_core_not_compiled() or "the build does not import"
    return build_description("Cython", reason)


class TextMerge:
    """The kept entries of all streams, merged by the compiled core (`compiled_core()`), as the text
    output: iterate for batches of bytes (entries with their `\\n`); `count` is the entries so far."""

    def __init__(
        self,
        core: ModuleType,
        streams: Sequence[Sequence[str]],
        plan: RawPlan,
        *,
        block_size: int = CORE_BLOCK_SIZE,
    ) -> None:
        self.core = core
        self.streams = streams
        self.plan = plan
        self.block_size = block_size
        self.count = 0

    def __iter__(self) -> Iterator[bytes]:
        plan = self.plan
        merger = self.core.Merger(
            [
                self.core.LogStream(
                    list(files),
                    self.block_size,
                    sources.MAX_ENTRY_SIZE,
                    plan.low,
                    plan.high,
                    plan.line_needle,
                    plan.text_needle,
                    plan.accept,
                )
                for files in self.streams
            ],
            CORE_BATCH_SIZE,
        )
        try:
            while batch := merger.next_batch():
                self.count = merger.count
                yield batch
        finally:
            merger.close()
