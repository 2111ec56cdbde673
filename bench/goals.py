"""Issue 18's goals, and the rows (`bench/table.py`) each bench script makes of its figures against them:
one place for the goals' values and texts, so `bench/all.py`'s table and each script's own table agree.

Pure functions over the figures a script measured. A goal the issue sets at a size (10,000 partitions, ...)
is applied in proportion to a smaller size (`--quick`): the issue asks for costs linear in the partitions,
so a smaller run meeting the proportional goal is on course for the full one, and the goal's text says so.
"""

from __future__ import annotations

from bench.table import Row

ELECTION_PARTITIONS = 10_000
ELECTION_S = 0.5
CONTROLLER_SHARE_RAW_RATIO = 2.0
SHUTDOWN_S = 1.0
FAILOVER_PARTITIONS = 100_000
FAILOVER_S = 3.5
REASSIGN_PER_S = 2000.0
PRODUCE_SHARE_OF_LOOPBACK = {"a": 0.30, "b": 0.10}
"""bench/produce.py's scenarios: (a) RF 1 acks=1, (b) RF 3 acks=all."""
VERSUS_TANSU = 1.5
MERGE_VERSUS_SORT = 1.0
IDLE_PARTITIONS = 10_000
IDLE_CORES = 0.05


def per_size(limit: float, unit: str, size: int, at: int) -> tuple[float, str]:
    """A goal of `limit` (in `unit`) at `at` partitions, for `size` partitions: the limit in proportion and
    its text (just the limit at the issue's own size)."""
    if size == at:
        return limit, f"{limit:g} {unit}"
    return limit * size / at, f"{limit * size / at:.3g} {unit} ({limit:g} {unit} per {at:,})"


def election_rows(partitions: int, elapsed_s: float, controller_s: float, raw_s: float) -> list[Row]:
    """The leader of `partitions` SIGKILLed: from its broker znode gone to the survivor having applied every
    leadership (`elapsed_s`), and the controller's share of it (elect, write, send), against the raw fenced
    multi-write of as many state znodes in the same run."""
    limit, text = per_size(ELECTION_S, "s", partitions, ELECTION_PARTITIONS)
    baseline = " (baseline: raw fenced writes)"
    return [
        Row.measured(
            f"election, {partitions:,} partitions, leader SIGKILLed{baseline}",
            elapsed_s,
            "s",
            raw_s,
            f"<= {text}",
            elapsed_s <= limit,
        ),
        Row.measured(
            f"election, controller's share, {partitions:,} partitions{baseline}",
            controller_s,
            "s",
            raw_s,
            f"<= {CONTROLLER_SHARE_RAW_RATIO:g}x baseline",
            controller_s <= CONTROLLER_SHARE_RAW_RATIO * raw_s,
        ),
    ]


def shutdown_row(partitions: int, elapsed_s: float, raw_s: float | None, moved: bool) -> Row:
    """A broker leading `partitions` gets SIGTERM: seconds until it exits; the goal is met only if every
    leadership `moved` off it first."""
    limit, text = per_size(SHUTDOWN_S, "s", partitions, ELECTION_PARTITIONS)
    baseline = " (baseline: raw fenced writes)" if raw_s is not None else ""
    unmoved = "" if moved else ", NOT every leadership moved"
    return Row.measured(
        f"controlled shutdown, {partitions:,} partitions{unmoved}{baseline}",
        elapsed_s,
        "s",
        raw_s,
        f"<= {text}",
        moved and elapsed_s <= limit,
    )


def failover_row(partitions: int, elapsed_s: float, raw_reads_s: float) -> Row:
    """The controller of `partitions` (RF 2) SIGKILLed: from `/controller` gone to the new one ready,
    against reading every partition state znode pipelined in the same run."""
    limit, text = per_size(FAILOVER_S, "s", partitions, FAILOVER_PARTITIONS)
    return Row.measured(
        f"controller failover, {partitions:,} partitions RF 2 (baseline: pipelined state reads)",
        elapsed_s,
        "s",
        raw_reads_s,
        f"<= {text}",
        elapsed_s <= limit,
    )


def reassign_row(partitions: int, elapsed_s: float, raw_s: float, moved: bool) -> Row:
    """`partitions` empty RF 3 partitions moved onto new brokers, --execute to --verify complete, in
    partitions/s, against the raw fenced writes/s of as many state znodes; the goal is met only if every
    leader and new replica was found on the new brokers (`moved`) afterwards."""
    rate, raw_rate = partitions / elapsed_s, partitions / raw_s
    unmoved = "" if moved else ", NOT every leader and replica moved"
    return Row.measured(
        f"reassign {partitions:,} RF 3 partitions{unmoved} (baseline: raw fenced writes)",
        rate,
        "partitions/s",
        raw_rate,
        f">= {REASSIGN_PER_S:,.0f} partitions/s",
        moved and rate >= REASSIGN_PER_S,
    )


def produce_row(label: str, what: str, mb_s: float, loopback_mb_s: float) -> Row:
    """bench/produce.py's scenario `label` (`what`: "RF 1 acks=1"...) in MB/s, as a share of the loopback
    ceiling measured in the same run."""
    share = PRODUCE_SHARE_OF_LOOPBACK[label]
    return Row.measured(
        f"produce 1 KB, {what} (baseline: loopback)",
        mb_s,
        "MB/s",
        loopback_mb_s,
        f">= {share:.0%} of baseline",
        mb_s >= share * loopback_mb_s,
    )


def versus_tansu_row(what: str, mb_s: float, tansu_mb_s: float | None) -> Row:
    """A produce or consume figure against tansu (a Rust Kafka-compatible broker) with the same client in
    the same run; without a tansu binary (`tansu_mb_s` None) the row says so and the goal is not met."""
    return Row.measured(
        f"{what} (baseline: tansu{'' if tansu_mb_s is not None else ', not found'})",
        mb_s,
        "MB/s",
        tansu_mb_s,
        f">= {VERSUS_TANSU:g}x baseline",
        tansu_mb_s is not None and mb_s >= VERSUS_TANSU * tansu_mb_s,
    )


def merge_row(what: str, size_bytes: int, merger_s: float, sort_s: float) -> Row:
    """The state-change merger over `size_bytes` of logs in MB/s, against `LC_ALL=C sort -m` of the same
    files (wall times, best of the script's runs)."""
    return Row.measured(
        f"state-change merge {size_text(size_bytes)}, {what} (baseline: LC_ALL=C sort -m)",
        size_bytes / merger_s / 1e6,
        "MB/s",
        size_bytes / sort_s / 1e6,
        f">= {MERGE_VERSUS_SORT:g}x baseline",
        merger_s <= sort_s / MERGE_VERSUS_SORT,
    )


def size_text(size_bytes: int) -> str:
    return f"{size_bytes / 1e9:.1f} GB" if size_bytes >= 1e9 else f"{size_bytes / 1e6:.0f} MB"


def idle_row(partitions: int, follower_cores: float, baseline_cores: float) -> Row:
    """The follower of `partitions` idle partitions: its share of a core, against a broker of the same
    cluster holding none, over the same window."""
    limit, text = per_size(IDLE_CORES, "core", partitions, IDLE_PARTITIONS)
    return Row.measured(
        f"idle follower, {partitions:,} partitions (baseline: broker holding none)",
        follower_cores,
        "core",
        baseline_cores,
        f"< {text}",
        follower_cores < limit,
    )
