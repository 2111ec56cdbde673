"""Benchmark: log compaction throughput (MB/s of segments cleaned) against a sequential read of the same
segments, measured in the same run on the same files.

A fresh compacted log gets --mb MiB of keyed records (--keys distinct keys drawn at random, --value-bytes
values, --records-per-batch records per producer batch) in --segment-mb segments; then, timed:

    sequential read   the non-active segment files read with os.pread, 1 MiB per call (page cache: the
                      data was just written), the floor any cleaner pays to look at the data once
    cleaning          one LogCleaner round (kafkaops.cluster.log.log_cleaner): offset map over the dirty
                      section, every segment rewritten keeping the latest record per key, swaps, checkpoint

The cleaned figure is the segments' bytes (the cleanable section, what Kafka calls the dirty bytes) over the
cleaning's time; Kafka's own log line counts the map pass and the copy pass separately, also printed. Best of
--repeat runs, each on a fresh log. No fsync in the read; the cleaner fsyncs each cleaned segment, as Kafka.

Usage: .venv/bin/python bench/log_cleaner.py [--mb 64] [--keys 10000] [--value-bytes 100]
                                             [--records-per-batch 10] [--segment-mb 8] [--repeat 1] [--dir /tmp]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import tempfile
import time
from pathlib import Path

from kafkaops.cluster.log import Log, LogConfig
from kafkaops.cluster.log.cleaner_config import CleanerConfig
from kafkaops.cluster.log.log_cleaner import LogCleaner
from kafkaops.cluster.protocol.records import Record, build_batch

MIB = 1024 * 1024
READ_SIZE = MIB
T0 = 1_700_000_000_000


def fill(log: Log, mb: int, keys: int, value_bytes: int, per_batch: int, seed: int) -> int:
    """Append about `mb` MiB of keyed batches; returns the number of records."""
    rng = random.Random(seed)
    value = b"v" * value_bytes
    records = 0
    while log.size_in_bytes < mb * MIB:
        batch = [Record(i, T0, b"key-%08d" % rng.randrange(keys), value) for i in range(per_batch)]
        log.append_as_leader(build_batch(batch), 0)
        records += per_batch
    return records


def sequential_read(paths: list[Path]) -> tuple[int, float, float]:
    """Every byte of `paths`, 1 MiB per pread; returns (bytes, seconds, CPU seconds)."""
    started, cpu = time.perf_counter(), time.process_time()
    total = 0
    for path in paths:
        fd = os.open(path, os.O_RDONLY)
        try:
            position = 0
            while chunk := os.pread(fd, READ_SIZE, position):
                position += len(chunk)
            total += position
        finally:
            os.close(fd)
    return total, time.perf_counter() - started, time.process_time() - cpu


Run = tuple[int, float, float, float, float, int, int]
"""bytes, read s, read CPU s, clean s, clean CPU s, bytes left, segments cleaned"""


def run_once(args: argparse.Namespace, root: Path, seed: int) -> Run:
    directory = Path(tempfile.mkdtemp(dir=root))
    try:
        config = LogConfig.from_mapping(
            {"cleanup.policy": "compact", "segment.bytes": str(args.segment_mb * MIB), "min.cleanable.dirty.ratio": "0"}
        )
        log = Log(directory / "bench-0", config)
        fill(log, args.mb, args.keys, args.value_bytes, args.records_per_batch, seed)
        bases = log.segment_base_offsets
        paths = [log.directory / f"{base:020d}.log" for base in bases[:-1]]  # the active one is not cleaned
        read_bytes, read_s, read_cpu = sequential_read(paths)
        cleaner = LogCleaner(CleanerConfig(), lambda: {(log.topic, log.partition): log})
        started, cpu = time.perf_counter(), time.process_time()
        if not cleaner.clean_once():
            raise RuntimeError("the cleaner found nothing to clean")
        clean_s, clean_cpu = time.perf_counter() - started, time.process_time() - cpu
        after = sum(p.stat().st_size for p in log.directory.glob("*.log")) - (
            (log.directory / f"{bases[-1]:020d}.log").stat().st_size
        )
        log.close()
        return read_bytes, read_s, read_cpu, clean_s, clean_cpu, after, len(bases) - 1
    finally:
        shutil.rmtree(directory)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=64, help="MiB of records in the log (default 64)")
    parser.add_argument("--keys", type=int, default=10000, help="distinct keys (default 10000)")
    parser.add_argument("--value-bytes", type=int, default=100, help="bytes per value (default 100)")
    parser.add_argument("--records-per-batch", type=int, default=10, help="records per batch (default 10)")
    parser.add_argument("--segment-mb", type=int, default=8, help="segment.bytes in MiB (default 8)")
    parser.add_argument("--repeat", type=int, default=1, help="runs, the best is kept (default 1)")
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()), help="where to write")
    args = parser.parse_args()

    runs = [run_once(args, args.dir, seed) for seed in range(args.repeat)]
    size, read_s, read_cpu, clean_s, clean_cpu, after, segments = min(runs, key=lambda run: run[3])
    mb = size / MIB
    print(
        f"{mb:.1f} MiB in {segments} segments of {args.segment_mb} MiB, {args.keys} keys, "
        f"{args.value_bytes}-byte values, {args.records_per_batch} records per batch; best of {args.repeat}"
    )
    print(f"  {'':18}{'wall MB/s':>12}{'CPU MB/s':>12}")
    print(f"  {'sequential read':18}{mb / read_s:12.1f}{mb / max(read_cpu, 1e-9):12.1f}")
    print(f"  {'cleaning':18}{mb / clean_s:12.1f}{mb / max(clean_cpu, 1e-9):12.1f}   ({after / MIB:.2f} MiB left)")
    print(f"  {'cleaning / read':18}{read_s / clean_s:12.4f}{read_cpu / max(clean_cpu, 1e-9):12.4f}")


if __name__ == "__main__":
    main()
