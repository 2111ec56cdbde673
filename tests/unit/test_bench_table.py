"""Issue 18's benchmark table: the rows each bench script makes of its figures against the goals
(`bench/goals.py`), their JSON (`bench/table.py`), and what `bench/all.py` makes of a script that fails."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import goals
from bench.all import SCENARIOS, Scenario, outcome_rows, run, written_rows
from bench.table import Row, format_table, read_rows, write_rows

KEYS = ["scenario", "figure", "unit", "baseline", "ratio", "goal", "met"]


def test_rows_are_written_as_a_json_list_of_objects_with_the_issues_keys(tmp_path: Path) -> None:
    rows = [goals.idle_row(10_000, 0.04, 0.01), Row("x: failed (exit 1)", None, "", None, None, "-", False)]
    path = tmp_path / "rows.json"
    write_rows(path, rows)
    written = json.loads(path.read_text())
    assert [list(row) for row in written] == [KEYS, KEYS]
    assert written[0] == {
        "scenario": "idle follower, 10,000 partitions (baseline: broker holding none)",
        "figure": 0.04,
        "unit": "core",
        "baseline": 0.01,
        "ratio": 4.0,
        "goal": "< 0.05 core",
        "met": True,
    }
    assert read_rows(path) == rows


def test_the_table_has_one_line_per_row_and_dashes_for_what_is_missing() -> None:
    table = format_table(
        [goals.reassign_row(10_000, 5.0, 2.0, True), Row("x: timed out", None, "", None, None, "-", False)]
    ).splitlines()
    assert [cell.strip() for cell in table[0].split(" | ")] == [
        "scenario",
        "figure",
        "baseline",
        "ratio",
        "goal",
        "met",
    ]
    assert len(table) == 4
    assert [cell.strip() for cell in table[2].split(" | ")][1:] == [
        "2000 partitions/s",
        "5000 partitions/s",
        "0.4",
        ">= 2,000 partitions/s",
        "yes",
    ]
    assert [cell.strip() for cell in table[3].split(" | ")][1:] == ["-", "-", "-", "-", "no"]


def test_a_goal_at_the_issues_size_is_its_number_and_in_proportion_below() -> None:
    assert goals.per_size(0.5, "s", 10_000, 10_000) == (0.5, "0.5 s")
    assert goals.per_size(0.5, "s", 2_500, 10_000) == (0.125, "0.125 s (0.5 s per 10,000)")
    assert goals.per_size(3.5, "s", 10_000, 100_000) == (pytest.approx(0.35), "0.35 s (3.5 s per 100,000)")


@pytest.mark.parametrize(("elapsed", "met"), [(0.12, True), (0.125, True), (0.13, False)])
def test_election_at_a_quick_size_meets_the_goal_in_proportion(elapsed: float, met: bool) -> None:
    row = goals.election_rows(2_500, elapsed, 0.05, 0.03)[0]
    assert row.scenario.startswith("election, 2,500 partitions, leader SIGKILLed")
    assert (row.goal, row.met) == ("<= 0.125 s (0.5 s per 10,000)", met)


@pytest.mark.parametrize(("controller_s", "met"), [(0.6, True), (0.61, False)])
def test_the_controllers_share_is_held_to_twice_the_raw_write(controller_s: float, met: bool) -> None:
    row = goals.election_rows(10_000, 2.0, controller_s, 0.3)[1]
    assert (row.ratio, row.goal, row.met) == (round(controller_s / 0.3, 3), "<= 2x baseline", met)


def test_a_shutdown_that_left_a_leadership_behind_does_not_meet_the_goal() -> None:
    assert goals.shutdown_row(10_000, 0.5, 0.3, True).met
    row = goals.shutdown_row(10_000, 0.5, 0.3, False)
    assert not row.met and "NOT every leadership moved" in row.scenario
    assert goals.shutdown_row(10_000, 0.5, None, True).ratio is None


def test_failover_and_reassignment_goals() -> None:
    assert goals.failover_row(100_000, 3.5, 1.7).met
    assert not goals.failover_row(10_000, 0.4, 0.2).met  # 0.35 s in proportion
    assert goals.reassign_row(2_000, 1.0, 0.5, True).met
    assert not goals.reassign_row(2_000, 1.0, 0.5, False).met
    assert not goals.reassign_row(2_000, 1.1, 0.5, True).met


@pytest.mark.parametrize(("label", "mb_s", "met"), [("a", 300, True), ("a", 299, False), ("b", 100, True)])
def test_produce_is_measured_as_a_share_of_the_loopback_ceiling(label: str, mb_s: float, met: bool) -> None:
    row = goals.produce_row(label, "RF 1 acks=1", mb_s, 1000.0)
    assert (row.ratio, row.met) == (mb_s / 1000, met)
    assert row.goal == {"a": ">= 30% of baseline", "b": ">= 10% of baseline"}[label]


def test_the_merger_is_compared_by_throughput_with_sort_m() -> None:
    faster = goals.merge_row("unfiltered", 1_000_000_000, 2.0, 2.5)
    assert (faster.figure, faster.baseline, faster.ratio, faster.met) == (500.0, 400.0, 1.25, True)
    assert not goals.merge_row("--topic + time window", 1_000_000_000, 2.6, 2.5).met
    assert faster.scenario == "state-change merge 1.0 GB, unfiltered (baseline: LC_ALL=C sort -m)"
    assert goals.merge_row("unfiltered", 104_300_000, 1.0, 1.0).scenario.startswith("state-change merge 104 MB,")


def test_against_tansu_and_idle() -> None:
    assert goals.versus_tansu_row("consume", 150.0, 100.0).met
    assert not goals.versus_tansu_row("consume", 149.0, 100.0).met
    missing = goals.versus_tansu_row("consume", 149.0, None)
    assert (missing.scenario, missing.baseline, missing.met) == ("consume (baseline: tansu, not found)", None, False)
    assert not goals.idle_row(2_500, 0.0125, 0.005).met  # under 0.0125 at a quarter of the size


SCENARIO = Scenario("controller", "controller.py", (), (), 60, 60)


def test_a_failed_script_keeps_the_rows_it_wrote_and_adds_one_saying_so() -> None:
    written = [goals.failover_row(100_000, 3.0, 1.0)]
    assert outcome_rows(SCENARIO, written, 0, 60) == written
    failed = outcome_rows(SCENARIO, written, 1, 60)
    assert failed[0] == written[0]
    assert (failed[1].scenario, failed[1].met) == ("controller (controller.py): failed (exit 1)", False)
    assert outcome_rows(SCENARIO, [], None, 60)[0].scenario == "controller (controller.py): timed out after 60 s"
    assert outcome_rows(SCENARIO, [], 0, 60)[0].scenario == "controller (controller.py): wrote no rows"


def test_a_file_cut_short_gives_no_rows(tmp_path: Path) -> None:
    (tmp_path / "cut.json").write_text('[{"scenario": "x", "fig')
    assert written_rows(tmp_path / "cut.json") == []
    assert written_rows(tmp_path / "absent.json") == []


def test_every_scenarios_script_exists() -> None:
    bench = Path(goals.__file__).parent
    assert all((bench / scenario.script).exists() for scenario in SCENARIOS)


def test_a_scenario_is_not_started_once_the_budget_is_spent(tmp_path: Path) -> None:
    assert run(SCENARIO, True, tmp_path, 0.0) == [
        Row("controller (controller.py): not run, the time budget spent", None, "", None, None, "-", False)
    ]
