"""Benchmark: the streaming state-change merger against `LC_ALL=C sort -m` on the same files, same run.

`sort -m` merges already-sorted files comparing whole lines: a lower bound on any real merger's work (it
neither groups stack traces with their entry nor keeps ties in input order), hence the baseline. Both run
as processes writing to /dev/null; the best of `--repeat` runs counts.

    python bench/statechange_merge.py                      # 20 brokers x 200,000 entries
    python bench/statechange_merge.py --brokers 100 --entries 100000 --spark

Figures: (1) unfiltered merge, MB/s and entries/s, and the ratio to sort -m; (2) the same with a topic and
time filter; (3) with --spark, the Spark engine (embedded local[*]) on the same files, wall time including
its start-up, and the same with the input copied N times (--spark-scale) to see how it grows.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import datetime

from statechange_logs import TOPICS, write_fleet

KAFKAOPS = os.path.join(os.path.dirname(sys.executable), "kafkaops")
START = datetime(2024, 5, 1, 12, 0, 0)


def best_of(repeat: int, command: Sequence[str], env: dict[str, str] | None = None) -> float:
    """Seconds of the fastest of `repeat` runs of `command`, stdout to /dev/null."""
    times = []
    for _ in range(repeat):
        with open(os.devnull, "wb") as sink:
            began = time.perf_counter()
            subprocess.run(command, stdout=sink, check=True, env=env)
            times.append(time.perf_counter() - began)
    return min(times)


def count(paths: Sequence[str]) -> tuple[int, int]:
    """(entries, lines) of the generated files (every entry's first line starts with `[20`)."""
    entries = lines = 0
    for path in paths:
        with open(path, "rb") as file:
            for line in file:
                lines += 1
                entries += line.startswith(b"[20")
    return entries, lines


def report(label: str, seconds: float, size: int, entries: int, baseline: float | None = None) -> None:
    ratio = f"  {baseline / seconds:5.2f} x sort -m throughput" if baseline else ""
    rates = f"{size / seconds / 1e6:7.1f} MB/s  {entries / seconds / 1e6:5.2f} M entries/s"
    print(f"{label:<34} {seconds:7.2f} s  {rates}{ratio}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--brokers", type=int, default=20)
    parser.add_argument("--entries", type=int, default=200_000, help="entries per broker")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--spark", action="store_true", help="also time --engine spark")
    parser.add_argument("--spark-scale", type=int, nargs="*", default=[1], help="input copies for the Spark runs")
    parser.add_argument("--keep", help="generate into this directory and keep it")
    args = parser.parse_args()

    directory = args.keep or tempfile.mkdtemp(prefix="statechange-bench-")
    try:
        os.makedirs(directory, exist_ok=True)
        began = time.perf_counter()
        paths = write_fleet(directory, args.brokers, args.entries, start=START)
        size = sum(os.path.getsize(p) for p in paths)
        entries, lines = count(paths)
        print(
            f"{len(paths)} files, {size / 1e6:.0f} MB, {entries:,} entries, {lines:,} lines "
            f"(generated in {time.perf_counter() - began:.0f} s) in {directory}"
        )
        logs = ",".join(paths)
        env = {**os.environ, "LC_ALL": "C"}
        sort_m = best_of(args.repeat, ["sort", "-m", *paths], env)
        merged = best_of(args.repeat, [KAFKAOPS, "state-change-log-merger", "--engine", "local", "--logs", logs])
        window = ["--start-time", "2024-05-01 12:20:00,000", "--end-time", "2024-05-01 12:50:00,000"]
        topic_filter = ["--topic", TOPICS[0], *window]
        filtered = best_of(
            args.repeat, [KAFKAOPS, "state-change-log-merger", "--engine", "local", "--logs", logs, *topic_filter]
        )
        print(f"\n(1) unfiltered merge, best of {args.repeat}")
        report("LC_ALL=C sort -m", sort_m, size, entries)
        report("kafkaops --engine local", merged, size, entries, sort_m)
        print(f"\n(2) --topic {TOPICS[0]} {' '.join(window)}")
        report("kafkaops --engine local, filtered", filtered, size, entries, sort_m)
        if args.spark:
            print("\n(3) --engine spark (embedded local[*], start-up included), one run each")
            for copies in args.spark_scale:
                inputs = paths if copies == 1 else _copies(directory, paths, copies)
                seconds = best_of(
                    1,
                    [KAFKAOPS, "state-change-log-merger", "--engine", "spark", "--logs", ",".join(inputs)],
                )
                report(
                    f"spark, {copies} x input ({size * copies / 1e9:.1f} GB)",
                    seconds,
                    size * copies,
                    entries * copies,
                    sort_m * copies,  # sort -m's time scales with its input
                )
    finally:
        if not args.keep:
            shutil.rmtree(directory, ignore_errors=True)


def _copies(directory: str, paths: Sequence[str], copies: int) -> list[str]:
    """The fleet `copies` times (hard links: more brokers with the same logs, no extra disk)."""
    out = list(paths)
    for copy in range(1, copies):
        target = os.path.join(directory, f"copy-{copy}")
        os.makedirs(target, exist_ok=True)
        for path in paths:
            link = os.path.join(target, os.path.basename(path))
            if not os.path.exists(link):
                os.link(path, link)
            out.append(link)
    return out


if __name__ == "__main__":
    main()
