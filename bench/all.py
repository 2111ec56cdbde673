"""Every performance scenario of issue 18 in one go, one table: scenario, figure, same-run baseline, ratio,
goal, met or not.

Each scenario is a bench script of this directory run as its own process with `--json PATH` (its rows,
`bench/table.py`); its own output goes to the terminal as it runs, so a figure can be read with its
details. A script that fails gives a row saying so (met: no) and the others still run. `--quick` runs
smaller sizes (under 12 minutes on this 2-core machine); the full run takes about an hour.

Usage: .venv/bin/python bench/all.py [--quick] [--json PATH] [--only NAME ...]
(Work in progress: see SCENARIOS for the scripts wired so far.)
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.table import Row, format_table, read_rows, write_rows  # noqa: E402 - after the path it is found on
from kafkaops.cluster.local.signals import run_program  # noqa: E402

BENCH = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Scenario:
    name: str
    script: str
    full: tuple[str, ...] = ()
    quick: tuple[str, ...] = ()


SCENARIOS = (Scenario("cli-startup", "cli_startup.py", (), ("--rounds", "5")),)
"""The scripts that write rows. Issue 18's other scenarios are measured by bench/controller.py (elections,
controlled shutdown, failover), reassign.py, produce.py, idle.py and statechange_merge.py, which print their
figures but do not write rows yet; the consume-against-tansu scenario has no script yet."""


def run(scenario: Scenario, quick: bool, directory: Path) -> list[Row]:
    out = directory / f"{scenario.name}.json"
    script = BENCH / scenario.script
    if not script.exists():
        return [Row(f"{scenario.name}: {scenario.script} is missing", None, "", None, None, "-", False)]
    args = scenario.quick if quick else scenario.full
    print(f"\n=== {scenario.name}: {scenario.script} {' '.join(args)}", flush=True)
    done = subprocess.run([sys.executable, str(script), *args, "--json", str(out)], check=False)
    if done.returncode != 0 or not out.exists():
        return [Row(f"{scenario.name}: failed (exit {done.returncode})", None, "", None, None, "-", False)]
    return read_rows(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes: under 12 minutes")
    parser.add_argument("--json", type=Path, help="write the rows here as a JSON list")
    parser.add_argument("--only", nargs="+", choices=[s.name for s in SCENARIOS], help="run only these")
    args = parser.parse_args()
    print(f"load average: {os.getloadavg()}", flush=True)
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as directory:
        for scenario in SCENARIOS:
            if args.only is None or scenario.name in args.only:
                rows += run(scenario, args.quick, Path(directory))
    print(f"\nload average: {os.getloadavg()}\n")
    print(format_table(rows))
    if args.json:
        write_rows(args.json, rows)


if __name__ == "__main__":
    run_program(main)
