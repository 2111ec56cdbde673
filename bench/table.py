"""One row per benchmark figure, as `bench/all.py` collects them: each bench script given `--json PATH`
writes its rows there, and prints them as text. Keys as issue 18 asks: scenario, figure, unit, baseline
(the same-run baseline in the same unit, or None), ratio (figure / baseline), goal (text), met."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path


@dataclass(frozen=True)
class Row:
    scenario: str
    figure: float | None
    unit: str
    baseline: float | None
    ratio: float | None
    goal: str
    met: bool

    @classmethod
    def measured(cls, scenario: str, figure: float, unit: str, baseline: float | None, goal: str, met: bool) -> Row:
        ratio = round(figure / baseline, 3) if baseline else None
        return cls(scenario, round(figure, 3), unit, None if baseline is None else round(baseline, 3), ratio, goal, met)


def write_rows(path: Path, rows: Sequence[Row]) -> None:
    path.write_text(json.dumps([asdict(row) for row in rows], indent=2) + "\n")


def read_rows(path: Path) -> list[Row]:
    return [Row(**row) for row in json.loads(path.read_text())]


def format_table(rows: Sequence[Row]) -> str:
    header = ("scenario", "figure", "baseline", "ratio", "goal", "met")
    cells = [
        (
            row.scenario,
            "-" if row.figure is None else f"{row.figure:g} {row.unit}",
            "-" if row.baseline is None else f"{row.baseline:g} {row.unit}",
            "-" if row.ratio is None else f"{row.ratio:g}",
            row.goal,
            "yes" if row.met else "no",
        )
        for row in rows
    ]
    widths = [max(len(line[i]) for line in [header, *cells]) for i in range(len(header))]
    lines = [
        " | ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)) for line in [header, *cells]
    ]
    lines.insert(1, "-+-".join("-" * width for width in widths))
    return "\n".join(lines)
