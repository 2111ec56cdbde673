"""What a run reports: the summary tables on the console (faults, records, unavailability, checks, the
verdict) and `chaos-report.json` in the state dir."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import TYPE_CHECKING, Any, TextIO

from .checks import EXIT_CHECKS, EXIT_DATA, EXIT_INTERRUPTED, EXIT_PASS, EXIT_SETUP
from .context import ChaosContext

if TYPE_CHECKING:
    from rich.table import Table

VERDICTS = {
    EXIT_PASS: "PASS",
    EXIT_DATA: "FAIL: data",
    EXIT_CHECKS: "FAIL: checks",
    EXIT_SETUP: "FAIL: setup",
    EXIT_INTERRUPTED: "INTERRUPTED",
}


def print_report(ctx: ChaosContext, code: int, console_file: TextIO) -> None:
    from rich.console import Console

    console = Console(file=console_file, width=None if console_file.isatty() else 130, highlight=False)
    console.print(faults_table(ctx))
    console.print(records_table(ctx))
    console.print(unavailability_table(ctx))
    console.print(checks_table(ctx))
    console.print(f"verdict: [bold]{VERDICTS[code]}[/bold] (exit {code}); state dir {ctx.state_dir}")
    data = ctx.verdict_data
    if data is not None and not data.ok:
        for t, p, o, v, found in data.lost[:10]:
            console.print(f"  lost: {t}-{p} offset {o} acked {v}, log holds {found}")
        for t, p, o, at, v in data.moved[:10]:
            console.print(f"  moved: {t}-{p} {v} acked at offset {o}, found at {at}")
        for v, places in data.duplicated[:10]:
            console.print(f"  duplicated: {v} at {places}")
        for t, p, o, v, found in data.live_conflicts[:10]:
            console.print(f"  read then gone: {t}-{p} offset {o} read {v}, log holds {found}")


def faults_table(ctx: ChaosContext) -> Table:
    from rich.table import Table

    faults = Table(title=f"Faults injected (seed {ctx.config.seed}, {ctx.chaos_end:.0f} s of chaos)")
    for column in ("kind", "injected", "skipped"):
        faults.add_column(column, justify="left" if column == "kind" else "right")
    injected = ctx.injected
    for kind in ctx.config.kinds:
        faults.add_row(kind, str(injected[kind]), str(ctx.skipped[kind]))
    faults.add_row("total", str(sum(injected.values())), str(sum(ctx.skipped.values())), style="bold")
    return faults


def records_table(ctx: ChaosContext) -> Table:
    from rich.table import Table

    records = Table(title="Records")
    for column in (
        "topic",
        "sent",
        "acked",
        "failed",
        "consumed",
        "lost",
        "moved",
        "duplicated",
        "unacked in log",
        "read live",
    ):
        records.add_column(column, justify="left" if column == "topic" else "right")
    data = ctx.verdict_data
    for topic in ctx.surviving + ctx.doomed:
        worker = ctx.producers.get(topic)
        if worker is None:
            continue
        if topic in ctx.surviving and data is not None:
            lost = sum(1 for t, *_ in data.lost if t == topic)
            moved = sum(1 for t, *_ in data.moved if t == topic)
            duplicated = sum(1 for v, _ in data.duplicated if v.startswith(topic + "/"))
            consumed = ctx.consumed_per_topic.get(topic, 0)
            live = sum(1 for (t, _, _) in (ctx.consumer.seen if ctx.consumer else {}) if t == topic)
            row = [
                str(consumed),
                str(lost),
                str(moved),
                str(duplicated),
                str(ctx.unacked_per_topic.get(topic, 0)),
                str(live),
            ]
        else:
            row = ["deleted" if topic in ctx.deleted else "-", "-", "-", "-", "-", "-"]
        failed = sum(worker.failed.values()) + sum(worker.not_sent.values())
        records.add_row(topic, str(worker.sent), str(len(worker.acked)), str(failed), *row)
    return records


def unavailability_table(ctx: ChaosContext) -> Table:
    from rich.table import Table

    gaps = Table(title="Max unavailability per partition (longest time without an ack)")
    for column in ("partition", "max gap s", "from +s", "faults active then"):
        gaps.add_column(column, justify="left" if column in ("partition", "faults active then") else "right")
    for (topic, partition), (gap, since) in sorted(ctx.unavailability.items()):
        active = faults_around(ctx, since, since + gap)
        gaps.add_row(f"{topic}-{partition}", f"{gap:.2f}", f"{since:.1f}", active)
    return gaps


def checks_table(ctx: ChaosContext) -> Table:
    from rich.table import Table

    checks = Table(title="Checks")
    checks.add_column("check")
    checks.add_column("result")
    checks.add_column("detail", overflow="fold")
    for name, (ok, detail) in ctx.checks.items():
        checks.add_row(name, {True: "ok", False: "FAILED", None: "-"}[ok], detail)
    checks.add_row(
        "clean stops",
        "-" if not ctx.slow_stops else "slow",
        "every SIGTERM stop under 20 s"
        if not ctx.slow_stops
        else "took over 20 s (broker, s): " + ", ".join(f"({b}, {t})" for b, t in ctx.slow_stops),
    )
    checks.add_row(
        "client-visible metadata",
        "-" if not ctx.warnings else "WARN",
        "; ".join(ctx.warnings[:4]) + (f" (+{len(ctx.warnings) - 4})" if len(ctx.warnings) > 4 else "")
        or "no send refused for lack of a partition",
    )
    checks.add_row(
        "brokers behaved",
        "ok" if not ctx.anomalies else "FAILED",
        "; ".join(ctx.anomalies) or "no unexpected exit, every expired session re-registered",
    )
    checks.add_row(
        "action errors",
        "-",
        "; ".join(ctx.action_errors[:5]) + (f" (+{len(ctx.action_errors) - 5})" if len(ctx.action_errors) > 5 else "")
        or "none",
    )
    return checks


def faults_around(ctx: ChaosContext, start: float, end: float) -> str:
    """The last four faults that hit something between `start` (less 5 s) and `end`, with their holds
    (plus 10 s to recover): what a partition's longest gap between acks lines up with."""
    shown = []
    for fault in ctx.faults:
        who = fault.get("broker", fault.get("node", fault.get("topic", "")))
        hits = [(fault["at"], who)] + [(b["at"], b["broker"]) for b in fault.get("later_bounces", ())]
        for at, hit in hits:
            until = at + float(fault.get("hold_s") or 0) + 10
            if at <= end and until >= start - 5:
                shown.append((at, f"{fault['kind']}({hit})@{at:.0f}"))
    return ", ".join(text for _, text in sorted(shown)[-4:])


def write_report(ctx: ChaosContext, code: int) -> None:
    """`chaos-report.json`: the configuration and schedule, what happened, and every finding."""
    document = {
        "seed": ctx.config.seed,
        "config": {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(ctx.config).items()},
        "exit_code": code,
        "schedule": [asdict(a) for a in ctx.schedule],
        "faults": ctx.faults,
        "injected": dict(ctx.injected),
        "skipped": dict(ctx.skipped),
        "intents": [asdict(i) for i in ctx.intents],
        "checks": {name: {"ok": ok, "detail": detail} for name, (ok, detail) in ctx.checks.items()},
        "anomalies": ctx.anomalies,
        "slow_clean_stops": ctx.slow_stops,
        "warnings": ctx.warnings,
        "live_consumer": _live_consumer_document(ctx),
        "action_errors": ctx.action_errors,
        "records": {
            topic: {
                "sent": w.sent,
                "acked": len(w.acked),
                "failed": dict(w.failed),
                "not_sent": dict(w.not_sent),
                "unflushed": w.unflushed,
            }
            for topic, w in ctx.producers.items()
        },
        "data": _data_document(ctx),
        "max_unavailability_s": {
            f"{t}-{p}": {"gap_s": round(g, 3), "from_s": round(s, 2)} for (t, p), (g, s) in ctx.unavailability.items()
        },
    }
    (ctx.state_dir / "chaos-report.json").write_text(json.dumps(document, indent=2, default=str) + "\n")


def _live_consumer_document(ctx: ChaosContext) -> dict[str, Any] | None:
    consumer = ctx.consumer
    if consumer is None:
        return None
    return {
        "read": len(consumer.seen),
        "errors": dict(consumer.errors),
        "last_error": consumer.last_error,
        "replaced": consumer.restarts,
        "error": repr(consumer.error) if consumer.error else None,
        "partitions_at_the_end": consumer.partition_states(),
    }


def _data_document(ctx: ChaosContext) -> dict[str, Any] | None:
    data = ctx.verdict_data
    if data is None:
        return None
    return {
        "acked": data.acked,
        "consumed": data.consumed,
        "lost": data.lost[:1000],
        "moved": data.moved[:1000],
        "duplicated": data.duplicated[:1000],
        "gaps": data.gaps,
        "unacked_present": data.unacked_present,
        "live_read": data.live_read,
        "live_conflicts": data.live_conflicts[:1000],
    }
