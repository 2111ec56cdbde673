"""Benchmark: the streaming state-change merger against `LC_ALL=C sort -m` on the same files, same run.

`sort -m` merges already-sorted files comparing whole lines: a lower bound on any real merger's work (it
neither groups stack traces with their entry nor keeps ties in input order), hence the baseline. Both run
as processes writing to /dev/null, the merger through the `kafkaops` console script (its start-up
included); the best of `--repeat` runs counts, sort -m and the merger alternating. The load average is
printed before and after: wall times mean little on a busy machine, so the CPU times (user + system)
are given too, and the ratio by CPU time.

    python bench/statechange_merge.py                      # 20 brokers x 200,000 entries (about 1 GB)
    python bench/statechange_merge.py --brokers 100 --entries 40000 --keep /tmp/fleet
    python bench/statechange_merge.py --input /tmp/fleet   # the same files again, no generation
    python bench/statechange_merge.py --spark --spark-scale 1 4 16

Figures: (1) unfiltered merge, MB/s and entries/s, and the ratio to sort -m; (2) with a topic and time
filter (the middle third of the logs' time span), and with --grep; (3) with --spark, the Spark engine
(embedded local[*]) on the input copied N times (hard links: more brokers with the same logs), wall
time including its start-up, next to the streaming engine on the same input: where Spark's line
crosses the streaming engine's, it starts to pay on this machine.
(1) and the topic-and-time filter of (2) are also rows of issue 18's benchmark table (`bench/goals.py`: MB/s
by wall time against sort -m's), printed at the end and, with `--json PATH`, written there.
"""

from __future__ import annotations

import argparse
import glob
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import NamedTuple

from statechange_logs import TOPICS, write_fleet

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import goals  # noqa: E402 - after the path it is found on
from bench.table import format_table, write_rows  # noqa: E402
from kafkaops.cluster.common import log4j  # noqa: E402

KAFKAOPS = os.path.join(os.path.dirname(sys.executable), "kafkaops")
START = datetime(2024, 5, 1, 12, 0, 0)


class Timing(NamedTuple):
    wall: float
    cpu: float | None
    """User + system seconds of the process and its children: what the command itself spent, less
    disturbed than the wall time by other work on the machine. None where it cannot be had: the JVM
    of an embedded Spark is not reaped by its Python, so its CPU time never reaches ours."""


def best_of(repeat: int, commands: dict[str, Sequence[str]], env: dict[str, str] | None = None) -> dict[str, Timing]:
    """The fastest of `repeat` runs of each command (wall and CPU time, each its own minimum), stdout to
    /dev/null, the commands taking turns so that a change of load hits all of them alike."""
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for _ in range(repeat):
        for name, command in commands.items():
            with open(os.devnull, "wb") as sink:
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                began = time.perf_counter()
                subprocess.run(command, stdout=sink, check=True, env=env)
                wall = time.perf_counter() - began
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
            times[name].append((wall, cpu))
    return {name: Timing(min(w for w, _ in runs), min(c for _, c in runs)) for name, runs in times.items()}


def count(paths: Sequence[str]) -> tuple[int, int, bytes, bytes]:
    """(entries, lines, first timestamp, last timestamp) of the files (every entry's first line starts
    with `[20`)."""
    entries = lines = 0
    first, last = b"\xff", b""
    for path in paths:
        with open(path, "rb") as file:
            for line in file:
                lines += 1
                if line.startswith(b"[20"):
                    entries += 1
                    stamp = line[1:24]
                    first, last = min(first, stamp), max(last, stamp)
    return entries, lines, first, last


def report(label: str, timing: Timing, size: int, entries: int, baseline: Timing | None = None) -> None:
    """Wall time and rates; the ratio to sort -m's throughput by wall time, and by CPU time."""
    seconds = timing.wall
    ratio = cpu = ""
    if timing.cpu is not None:
        cpu = f" (CPU {timing.cpu:6.2f} s)"
    if baseline is not None:
        ratio = f"  {baseline.wall / seconds:5.2f} x sort -m"
        if timing.cpu is not None and baseline.cpu is not None:
            ratio += f" ({baseline.cpu / timing.cpu:4.2f} x by CPU time)"
    rates = f"{size / seconds / 1e6:7.1f} MB/s  {entries / seconds / 1e6:5.2f} M entries/s"
    print(f"{label:<40} {seconds:7.2f} s{cpu:<16}  {rates}{ratio}", flush=True)


def load() -> str:
    return "load average " + ", ".join(f"{value:.2f}" for value in os.getloadavg())


def window(first: bytes, last: bytes) -> list[str]:
    """--start-time/--end-time around the middle third of [first, last]."""
    fmt = "%Y-%m-%d %H:%M:%S,%f"
    low, high = (datetime.strptime(stamp.decode() + "000", fmt) for stamp in (first, last))
    third = (high - low) / 3
    return ["--start-time", log4j.timestamp(low + third), "--end-time", log4j.timestamp(high - third)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--brokers", type=int, default=20)
    parser.add_argument("--entries", type=int, default=200_000, help="entries per broker")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--spark", action="store_true", help="also time --engine spark")
    parser.add_argument("--spark-scale", type=int, nargs="*", default=[1], help="input copies for the Spark runs")
    parser.add_argument("--keep", help="generate into this directory and keep it")
    parser.add_argument("--input", help="merge the *state-change* files of this directory (no generation)")
    parser.add_argument("--json", type=Path, help="write the rows of issue 18's table here (a JSON list)")
    args = parser.parse_args()

    directory = args.input or args.keep or tempfile.mkdtemp(prefix="statechange-bench-")
    try:
        print(load(), flush=True)
        began = time.perf_counter()
        if args.input:
            paths = sorted(glob.glob(os.path.join(args.input, "*state-change*")))
        else:
            os.makedirs(directory, exist_ok=True)
            paths = write_fleet(directory, args.brokers, args.entries, start=START)
        size = sum(os.path.getsize(p) for p in paths)
        entries, lines, first, last = count(paths)
        print(
            f"{len(paths)} files, {size / 1e6:.0f} MB, {entries:,} entries, {lines:,} lines "
            f"(ready in {time.perf_counter() - began:.0f} s) in {directory}",
            flush=True,
        )
        env = {**os.environ, "LC_ALL": "C"}
        local = [KAFKAOPS, "state-change-log-merger", "--engine", "local", "--logs", ",".join(paths)]
        times = best_of(args.repeat, {"sort": ["sort", "-m", *paths], "local": local}, env)
        sort_m, unfiltered = times["sort"], times["local"]
        print(f"\n(1) unfiltered merge, best of {args.repeat}")
        report("LC_ALL=C sort -m", sort_m, size, entries)
        report("kafkaops --engine local", times["local"], size, entries, sort_m)
        topic_filter = ["--topic", TOPICS[0], *window(first, last)]
        grep = ["--grep", r"(?m)^\tat kafka\.controller\.KafkaController\.process"]
        times = best_of(args.repeat, {"filtered": [*local, *topic_filter], "grep": [*local, *grep]}, env)
        print(f"\n(2) filters, best of {args.repeat}")
        report(f"--topic {TOPICS[0]} + middle third of the time", times["filtered"], size, entries, sort_m)
        report(f"{' '.join(grep)}", times["grep"], size, entries, sort_m)
        rows = [
            goals.merge_row("unfiltered", size, unfiltered.wall, sort_m.wall),
            goals.merge_row("--topic + time window", size, times["filtered"].wall, sort_m.wall),
        ]
        if args.spark:
            print("\n(3) --engine spark (embedded local[*], start-up included) and --engine local, one run each")
            for copies in args.spark_scale:
                inputs = paths if copies == 1 else _copies(directory, paths, copies)
                logs = ",".join(inputs)
                for engine in ("local", "spark"):
                    seconds = best_of(
                        1, {engine: [KAFKAOPS, "state-change-log-merger", "--engine", engine, "--logs", logs]}
                    )[engine]
                    if engine == "spark":
                        seconds = Timing(seconds.wall, None)
                    report(
                        f"{engine}, {copies} x input ({size * copies / 1e9:.1f} GB)",
                        seconds,
                        size * copies,
                        entries * copies,
                        Timing(sort_m.wall * copies, (sort_m.cpu or 0) * copies),  # sort -m scales with its input
                    )
        print(load(), flush=True)
        print(format_table(rows), flush=True)
        if args.json:
            write_rows(args.json, rows)
    finally:
        if not args.keep and not args.input:
            shutil.rmtree(directory, ignore_errors=True)
        elif args.input or args.keep:
            for copy in glob.glob(os.path.join(directory, "copy-*")):
                shutil.rmtree(copy, ignore_errors=True)


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
    from kafkaops.cluster.local.signals import run_program  # Ctrl-C stops it, even inherited ignored

    run_program(main)
