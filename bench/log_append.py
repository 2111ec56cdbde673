"""Benchmark: partition log append and read throughput for 1 KiB record batches (or --batch-bytes), against
raw file I/O measured in the same run on the same disk.

Measured (best of --repeat runs, each over --mb MiB of data in a fresh directory, no fsync anywhere):

    leader append     Log.append_as_leader, one producer batch per call (CRC check, offset and
                      epoch patched into a copy, one pwrite, index upkeep, segment rolls)
    follower append   Log.append_as_follower, 1 MiB of the leader's batches per call (a replica fetch)
    read              Log.read, 1 MiB per call from offset 0 to the end (a consumer fetching sequentially)

    raw append        the same bytes written to a plain file, one write() per batch: Python's
                      buffered file (the ceiling) and os.write (one syscall per batch, as the log pays)
    raw read          the file read back with os.pread, 1 MiB per call

Reads come from the page cache in both cases (the data was just written); the figures are CPU-bound
Python + syscall costs, not the disk's. Segments are the default 1 GiB unless --segment-mb is given.

Usage: .venv/bin/python bench/log_append.py [--mb 256] [--repeat 3] [--batch-bytes 1024] [--segment-mb 1024]
                                            [--dir /tmp]
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from kafkaops.cluster.log import Log, LogConfig
from kafkaops.cluster.protocol.records import Record, build_batch, iter_batches

FETCH_SIZE = 1024 * 1024
MIB = 1024 * 1024


def producer_batch(size: int) -> bytes:
    """One producer batch of exactly `size` bytes: one record, no key, a value filling the rest."""
    value_size = size - 61 - 10  # header, then the record's own framing (varints, attributes)
    while True:
        data = build_batch([Record(0, 1_700_000_000_000, None, b"x" * value_size)])
        if len(data) == size:
            return data
        value_size += size - len(data)


def best_of(repeat: int, run: Callable[[Path], float], root: Path) -> float:
    """The shortest of `repeat` runs, each in a fresh directory under `root`."""
    times = []
    for _ in range(repeat):
        directory = Path(tempfile.mkdtemp(dir=root))
        try:
            times.append(run(directory))
        finally:
            shutil.rmtree(directory)
    return min(times)


def leader_append(batch: bytes, count: int, config: LogConfig) -> Callable[[Path], float]:
    def run(directory: Path) -> float:
        log = Log(directory / "bench-0", config)
        started = time.perf_counter()
        for _ in range(count):
            log.append_as_leader(batch, 0)
        elapsed = time.perf_counter() - started
        log.close()
        return elapsed

    return run


def fetch_chunks(batch: bytes, count: int) -> list[bytes]:
    """The leader's bytes as a follower receives them: 1 MiB of batches with their offsets set."""
    with tempfile.TemporaryDirectory() as root:
        leader = Log(Path(root) / "bench-0", LogConfig(segment_bytes=2**31 - 1))
        for _ in range(count):
            leader.append_as_leader(batch, 0)
        chunks = []
        offset = 0
        while offset < leader.log_end_offset:
            chunk = leader.read(offset, FETCH_SIZE).records
            chunks.append(chunk)
            offset = [b.header.last_offset for b in iter_batches(chunk)][-1] + 1
        leader.close()
        return chunks


def follower_append(chunks: list[bytes], config: LogConfig) -> Callable[[Path], float]:
    def run(directory: Path) -> float:
        log = Log(directory / "bench-0", config)
        started = time.perf_counter()
        for chunk in chunks:
            log.append_as_follower(chunk)
        elapsed = time.perf_counter() - started
        log.close()
        return elapsed

    return run


def log_read(chunks: list[bytes], config: LogConfig) -> Callable[[Path], float]:
    """Sequential 1 MiB reads; the offsets each read starts at are those of the leader's 1 MiB reads that
    made `chunks` (same batches, same limit), found beforehand so that only the log is timed."""
    starts = [next(iter_batches(chunk, verify_crc=False)).header.base_offset for chunk in chunks]

    def run(directory: Path) -> float:
        log = Log(directory / "bench-0", config)
        for chunk in chunks:
            log.append_as_follower(chunk)
        started = time.perf_counter()
        read = sum(len(log.read(offset, FETCH_SIZE).records) for offset in starts)
        elapsed = time.perf_counter() - started
        if read != sum(map(len, chunks)):
            raise RuntimeError(f"read {read} bytes, wrote {sum(map(len, chunks))}")
        log.close()
        return elapsed

    return run


def raw_buffered_append(batch: bytes, count: int) -> Callable[[Path], float]:
    def run(directory: Path) -> float:
        started = time.perf_counter()
        with open(directory / "raw.log", "ab") as file:
            for _ in range(count):
                file.write(batch)
        return time.perf_counter() - started

    return run


def raw_syscall_append(batch: bytes, count: int) -> Callable[[Path], float]:
    def run(directory: Path) -> float:
        started = time.perf_counter()
        fd = os.open(directory / "raw.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            for _ in range(count):
                os.write(fd, batch)
        finally:
            os.close(fd)
        return time.perf_counter() - started

    return run


def raw_read(batch: bytes, count: int) -> Callable[[Path], float]:
    def run(directory: Path) -> float:
        path = directory / "raw.log"
        with open(path, "wb") as file:
            for _ in range(count):
                file.write(batch)
        size = path.stat().st_size
        started = time.perf_counter()
        fd = os.open(path, os.O_RDONLY)
        try:
            position = 0
            while position < size:
                position += len(os.pread(fd, FETCH_SIZE, position))
        finally:
            os.close(fd)
        return time.perf_counter() - started

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=256, help="MiB of data per run (default 256)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure, the best is kept (default 3)")
    parser.add_argument("--batch-bytes", type=int, default=1024, help="size of each batch (default 1024)")
    parser.add_argument("--segment-mb", type=int, default=1024, help="segment.bytes in MiB (default 1024)")
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()), help="where to write")
    args = parser.parse_args()

    batch = producer_batch(args.batch_bytes)
    count = args.mb * MIB // len(batch)
    config = LogConfig(segment_bytes=min(args.segment_mb * MIB, 2**31 - 1), retention_ms=-1)
    chunks = fetch_chunks(batch, count)

    def rate(seconds: float) -> float:
        return args.mb / seconds

    leader = rate(best_of(args.repeat, leader_append(batch, count, config), args.dir))
    follower = rate(best_of(args.repeat, follower_append(chunks, config), args.dir))
    read = rate(best_of(args.repeat, log_read(chunks, config), args.dir))
    buffered = rate(best_of(args.repeat, raw_buffered_append(batch, count), args.dir))
    syscall = rate(best_of(args.repeat, raw_syscall_append(batch, count), args.dir))
    raw_reads = rate(best_of(args.repeat, raw_read(batch, count), args.dir))

    print(f"{args.mb} MiB in {count} batches of {len(batch)} bytes; segment.bytes {config.segment_bytes}; "
          f"best of {args.repeat}; no fsync")  # fmt: skip
    rows = [
        ("leader append (1 batch per call)", leader, buffered, "raw buffered write"),
        ("leader append (1 batch per call)", leader, syscall, "raw os.write per batch"),
        ("follower append (1 MiB per call)", follower, buffered, "raw buffered write"),
        ("read (1 MiB per call)", read, raw_reads, "raw pread 1 MiB"),
    ]
    for name, measured, baseline, baseline_name in rows:
        print(
            f"{name:34} {measured:8.1f} MB/s   {baseline_name:24} {baseline:8.1f} MB/s   "
            f"ratio {measured / baseline:.2f}"
        )


if __name__ == "__main__":
    from kafkaops.cluster.local.signals import run_program  # Ctrl-C stops it, even inherited ignored

    run_program(main)
