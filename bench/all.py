"""Every performance scenario of issue 18 in one go, one table: scenario, figure, same-run baseline, ratio,
goal, met or not.

Each scenario is a bench script of this directory run as its own process with `--json PATH` (its rows,
`bench/table.py`, against the goals of `bench/goals.py`); its own output goes to the terminal as it runs,
so a figure can be read with its details. A script that fails or runs out of time gives a row saying so
(met: no) after the rows it wrote before, and the others still run. `--quick` runs smaller sizes, each
named in its rows' scenarios, their goals in proportion, in under 12 minutes on this 2-core machine (a
script still running when QUICK_BUDGET_S is spent is stopped, and those after it are not started); the
full run (the issue's sizes: 10,000 and 100,000 partitions, 1 GB of logs) takes an hour or more.

Usage: .venv/bin/python bench/all.py [--quick] [--json PATH] [--only NAME ...]
Each script stops the processes it started on exit, error or signal; stopped by SIGINT or SIGTERM, this
one passes SIGTERM on to the running script and waits for it to clean up.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.table import Row, format_table, read_rows, write_rows  # noqa: E402 - after the path it is found on
from kafkaops.cluster import protocol  # noqa: E402
from kafkaops.cluster.local.signals import run_program  # noqa: E402
from kafkaops.statechange import merge  # noqa: E402

BENCH = Path(__file__).resolve().parent
CLEAN_UP_S = 180.0
"""How long a script stopped (time out, signal) gets to stop its ZooKeeper and brokers before SIGKILL."""
QUICK_BUDGET_S = 11 * 60.0
"""What `--quick` may take in all, its scripts' clean-up after a time-out included (they take seconds)."""


@dataclass(frozen=True)
class Scenario:
    name: str
    script: str
    full: tuple[str, ...]
    quick: tuple[str, ...]
    full_timeout_s: float
    quick_timeout_s: float
    keeps_state: bool = False
    """Given its own directory under the run's (`--state-dir`), deleted with it once the table is printed:
    on this machine's ext4 (no journal) creating an inode scans past every inode freed in the last minutes,
    so a script deleting its 100,000 files as it exits made the next one's log creation 40 times as slow
    (3.24 ms against 0.08 ms per log, `reassign.py`'s probe)."""


SCENARIOS = (
    Scenario(
        "controller",
        "controller.py",
        (),
        ("--partitions", "2500", "--failover-partitions", "10000"),
        7200,
        330,
        keeps_state=True,
    ),
    Scenario("reassign", "reassign.py", (), ("--partitions", "1000"), 3600, 210, keeps_state=True),
    Scenario(
        "produce",
        "produce.py",
        (),
        (
            "--duration",
            "5",
            "--paced-duration",
            "2",
            "--loopback-seconds",
            "1",
            "--disk-mb",
            "1024",
            "--consume-records",
            "300000",
        ),
        900,
        180,
    ),
    Scenario("statechange-merge", "statechange_merge.py", (), ("--entries", "40000", "--repeat", "2"), 1200, 150),
    Scenario("idle", "idle.py", (), ("--partitions", "2500", "--window", "15", "--settle", "5"), 1800, 150),
    Scenario("cli-startup", "cli_startup.py", (), ("--rounds", "5"), 300, 90),
)
"""Issue 18's scenarios and the scripts measuring them: full (the issue's sizes, the scripts' defaults) and
quick arguments, and how long each may run before it is stopped."""


def stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM (the scripts clean up on it), then SIGKILL after CLEAN_UP_S."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
    try:
        process.wait(CLEAN_UP_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def run_script(command: list[str], timeout_s: float) -> int | None:
    """The script's exit code; None if it ran out of time (it is stopped)."""
    process = subprocess.Popen(command)
    try:
        return process.wait(timeout_s)
    except subprocess.TimeoutExpired:
        stop(process)
        return None
    except BaseException:
        try:
            process.wait(5)  # a terminal's Ctrl-C reached the script too: it is cleaning up already
        except subprocess.TimeoutExpired:
            stop(process)
        raise


def outcome_rows(scenario: Scenario, written: list[Row], code: int | None, timeout_s: float) -> list[Row]:
    """The rows a script wrote, and one saying it failed or ran out of time unless it exited 0 having
    written some."""
    if code == 0 and written:
        return written
    if code is None:
        what = f"timed out after {timeout_s:.0f} s"
    elif code == 0:
        what = "wrote no rows"
    else:
        what = f"failed (exit {code})"
    return [*written, not_run(scenario, what)]


def not_run(scenario: Scenario, why: str) -> Row:
    return Row(f"{scenario.name} ({scenario.script}): {why}", None, "", None, None, "-", False)


def run(scenario: Scenario, quick: bool, directory: Path, budget_s: float) -> list[Row]:
    """The scenario's rows; it may run for its own time limit, or what is left of `budget_s` if less."""
    out = directory / f"{scenario.name}.json"
    script = BENCH / scenario.script
    if not script.exists():
        return [not_run(scenario, "script missing")]
    if budget_s <= 0:
        return [not_run(scenario, "not run, the time budget spent")]
    args, timeout_s = (scenario.quick, scenario.quick_timeout_s) if quick else (scenario.full, scenario.full_timeout_s)
    timeout_s = min(timeout_s, budget_s)
    print(f"\n=== {scenario.name}: {scenario.script} {' '.join(args)}", flush=True)
    if scenario.keeps_state:
        args = (*args, "--state-dir", str(directory / f"{scenario.name}-state"))
    code = run_script([sys.executable, str(script), *args, "--json", str(out)], timeout_s)
    return outcome_rows(scenario, written_rows(out), code, timeout_s)


def written_rows(path: Path) -> list[Row]:
    """What a script wrote; nothing if it wrote nothing or was stopped halfway through writing."""
    try:
        return read_rows(path)
    except (OSError, ValueError, TypeError):
        return []


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes: under 12 minutes")
    parser.add_argument("--json", type=Path, help="write the rows here as a JSON list")
    parser.add_argument("--only", nargs="+", choices=[s.name for s in SCENARIOS], help="run only these")
    args = parser.parse_args()
    print(f"load average: {os.getloadavg()}", flush=True)
    # what runs in the brokers and the merger: a stale build after a checkout runs pure Python silently
    print(f"wire codec: {protocol.codec_description()}; merger: {merge.core_description()}", flush=True)
    rows: list[Row] = []
    deadline = time.monotonic() + (QUICK_BUDGET_S if args.quick else float("inf"))
    with tempfile.TemporaryDirectory() as directory:
        for scenario in SCENARIOS:
            if args.only is None or scenario.name in args.only:
                rows += run(scenario, args.quick, Path(directory), deadline - time.monotonic())
    print(f"\nload average: {os.getloadavg()}\n")
    print(format_table(rows))
    if args.json:
        write_rows(args.json, rows)


if __name__ == "__main__":
    run_program(main)
