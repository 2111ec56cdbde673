"""Benchmark: how fast a shell tool starts (issue 18, item 8; goals: `--version` and `--help` <= 0.15 s,
`topics --list` against a local ZooKeeper <= 0.3 s).

Each command runs `--rounds` times (default 9) as a new process, as a shell runs it; the median wall time
is printed beside two baselines from the same run (each command run once untimed first, so that its bytecode
is written, as pip writes it at install): the interpreter alone (`python -c pass`, the floor no
Python tool goes under) and the eager start every command paid before commands were imported on first use
(importing every `kafkaops.cli` command module, as the old `cli/app.py` did). The load average is printed
first: the machine is shared, read figures with it.

Usage: .venv/bin/python bench/cli_startup.py [--rounds 9] [--json PATH]
Stops the ZooKeeper it started on exit, error, SIGINT or SIGTERM.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.table import Row, format_table, write_rows  # noqa: E402 - after the path it is found on
from kafkaops.cluster.local.signals import run_program, stop_started
from kafkaops.cluster.local.zookeeper import LocalZooKeeper, free_port

KAFKAOPS = str(Path(sys.executable).parent / "kafkaops")
EAGER_IMPORTS = (
    "import kafkaops.cli.app, kafkaops.cli.topics, kafkaops.cli.configs, kafkaops.cli.reassign_partitions, "
    "kafkaops.cli.state_change_log_merger, kafkaops.cli.preferred_replica_election, kafkaops.cli.leader_election, "
    "kafkaops.cli.console, kafkaops.cli.replica_verification, kafkaops.cli.log_dirs, kafkaops.cli.delete_records, "
    "kafkaops.cli.zookeeper_security_migration, kafkaops.cli.dump_log, kafkaops.cli.get_offsets, "
    "kafkaops.cli.broker_api_versions, kafkaops.cli.cluster"
)


def median_seconds(command: list[str], rounds: int, env: dict[str, str]) -> float:
    """The median of `rounds` timed runs, after one untimed run that writes the bytecode (see `rows`)."""
    subprocess.run(command, env=env, check=True, capture_output=True)
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        subprocess.run(command, env=env, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def rows(rounds: int, zk_connect: str) -> list[Row]:
    env = {**os.environ, "KAFKAOPS_ZOOKEEPER": zk_connect, "KAFKAOPS_CONFIG": ""}
    # timed with bytecode, as a tool pip installed starts: with PYTHONDONTWRITEBYTECODE (set on some machines,
    # this one among them) every module of a fresh clone, or changed since its .pyc, is compiled at each start
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    interpreter = median_seconds([sys.executable, "-c", "pass"], rounds, env)
    eager = median_seconds([sys.executable, "-c", EAGER_IMPORTS], rounds, env)
    print(f"interpreter alone (python -c pass): {interpreter:.3f} s; eager import of every command: {eager:.3f} s")
    measured = [
        ("kafkaops --version", [KAFKAOPS, "--version"], 0.15),
        ("kafkaops --help", [KAFKAOPS, "--help"], 0.15),
        ("kafkaops topics --list (local ZooKeeper)", [KAFKAOPS, "topics", "--list", "--zookeeper", zk_connect], 0.3),
    ]
    return [
        Row.measured(
            f"{scenario} (baseline: every command imported eagerly)",
            figure,
            "s",
            eager,
            f"<= {goal} s",
            figure <= goal,
        )
        for scenario, command, goal in measured
        for figure in [median_seconds(command, rounds, env)]
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    print(f"load average: {os.getloadavg()}")
    with tempfile.TemporaryDirectory() as state:
        zookeeper = LocalZooKeeper(state_dir=Path(state), port=free_port())
        zookeeper.start()
        try:
            table = rows(args.rounds, zookeeper.connect_string)
        finally:
            stop_started([zookeeper.stop])
    print(format_table(table))
    if args.json:
        write_rows(args.json, table)


if __name__ == "__main__":
    run_program(main)
