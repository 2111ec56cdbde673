"""The plan report: the figures topicmappr and Cruise Control print (moves against the lower bound,
spreads per broker and per topic, rack violations, bytes), for a plan of either strategy and either
engine (Spark computes `TopicFigures` next to the plan and merges them with `ReportBuilder`)."""

from __future__ import annotations

import dataclasses
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

from kafkaops.admin.planner.layout import Key, make_layout, rack_span_violation
from kafkaops.admin.planner.stats import collect_stats
from kafkaops.admin.planner.targets import LowerBound, lower_bound


@dataclasses.dataclass(frozen=True)
class Spread:
    """min / max / mean / population stddev of a per-broker figure; `spread` = max - min."""

    min: float
    max: float
    mean: float
    stddev: float

    @property
    def spread(self) -> float:
        return self.max - self.min

    @staticmethod
    def of(values: Sequence[float]) -> Spread:
        if not values:
            return Spread(0, 0, 0.0, 0.0)
        mean = sum(values) / len(values)
        return Spread(min(values), max(values), mean, math.sqrt(sum((v - mean) ** 2 for v in values) / len(values)))


@dataclasses.dataclass
class TopicFigures:
    """One topic's share of the report (Spark computes these next to the plan and merges them)."""

    topic: str
    partitions: int = 0
    replicas: int = 0
    moved: int = 0
    bytes_moved: int = 0
    leader_changes: int = 0
    changed: int = 0
    racks_before: int = 0
    racks_after: int = 0
    spread_before: int = 0
    spread_after: int = 0
    replicas_before: dict[int, int] = dataclasses.field(default_factory=dict)
    replicas_after: dict[int, int] = dataclasses.field(default_factory=dict)
    leaders_before: dict[int, int] = dataclasses.field(default_factory=dict)
    leaders_after: dict[int, int] = dataclasses.field(default_factory=dict)
    bytes_before: dict[int, int] = dataclasses.field(default_factory=dict)
    bytes_after: dict[int, int] = dataclasses.field(default_factory=dict)


def topic_figures(
    topic: str,
    rows: Iterable[tuple[Sequence[int], Sequence[int], int]],
    targets: Sequence[int],
    racks: Mapping[int, str],
    num_racks_before: int,
    num_racks_after: int,
) -> TopicFigures:
    """Figures of one topic from (current replicas, proposed replicas, size in bytes) rows, broker ids.

    The topic's spread is max - min of its replicas per broker: after over the target brokers, before
    over the target brokers and the brokers that held it.
    """
    f = TopicFigures(topic)
    rb, ra, lb, la, bb, ba = (
        f.replicas_before,
        f.replicas_after,
        f.leaders_before,
        f.leaders_after,
        f.bytes_before,
        f.bytes_after,
    )
    for old, new, size in rows:
        f.partitions += 1
        f.replicas += len(new)
        for b in old:
            rb[b] = rb.get(b, 0) + 1
            bb[b] = bb.get(b, 0) + size
        for b in new:
            ra[b] = ra.get(b, 0) + 1
            ba[b] = ba.get(b, 0) + size
        if old:
            lb[old[0]] = lb.get(old[0], 0) + 1
        la[new[0]] = la.get(new[0], 0) + 1
        added = len(set(new) - set(old))
        f.moved += added
        f.bytes_moved += added * size
        f.leader_changes += bool(old) and old[0] != new[0]
        f.changed += list(old) != list(new)
        if racks:
            f.racks_before += rack_span_violation(old, racks, num_racks_before)
            f.racks_after += rack_span_violation(new, racks, num_racks_after)
    target_set = set(targets)
    after = [ra.get(b, 0) for b in targets] + [c for b, c in ra.items() if b not in target_set]
    before = [rb.get(b, 0) for b in targets] + [c for b, c in rb.items() if b not in target_set]
    f.spread_after = max(after) - min(after) if after else 0
    f.spread_before = max(before) - min(before) if before else 0
    return f


@dataclasses.dataclass(frozen=True)
class BrokerFigures:
    broker: int
    rack: str | None
    target: bool
    replicas_before: int
    replicas_after: int
    leaders_before: int
    leaders_after: int
    bytes_before: int
    bytes_after: int


@dataclasses.dataclass(frozen=True)
class PlanReport:
    """The figures topicmappr and Cruise Control print, for one plan."""

    partitions: int
    replicas: int
    replicas_moved: int
    lower_bound: LowerBound
    leader_changes: int
    partitions_changed: int
    brokers: tuple[BrokerFigures, ...]
    replicas_before: Spread
    replicas_after: Spread
    leaders_before: Spread
    leaders_after: Spread
    topics: int
    topic_spread_before: int  # worst topic
    topic_spread_after: int
    topics_within_one_before: int
    topics_within_one_after: int
    rack_violations_before: int
    rack_violations_after: int
    bytes_moved: int | None = None
    bytes_before: Spread | None = None
    bytes_after: Spread | None = None
    topic_spreads: dict[str, tuple[int, int]] = dataclasses.field(default_factory=dict)

    def as_dict(self) -> dict[str, object]:
        """A JSON-ready document (`--stats-json`, `--output json`)."""

        def spread(s: Spread | None) -> dict[str, float] | None:
            if s is None:
                return None
            return {
                "min": s.min,
                "max": s.max,
                "mean": round(s.mean, 3),
                "stddev": round(s.stddev, 3),
                "spread": s.spread,
            }

        return {
            "partitions": self.partitions,
            "replicas": self.replicas,
            "replicas_moved": self.replicas_moved,
            "lower_bound": self.lower_bound.total,
            "lower_bound_parts": dataclasses.asdict(self.lower_bound),
            "leader_changes": self.leader_changes,
            "partitions_changed": self.partitions_changed,
            "replicas_per_broker": {"before": spread(self.replicas_before), "after": spread(self.replicas_after)},
            "leaders_per_broker": {"before": spread(self.leaders_before), "after": spread(self.leaders_after)},
            "bytes_per_broker": {"before": spread(self.bytes_before), "after": spread(self.bytes_after)},
            "bytes_moved": self.bytes_moved,
            "topics": self.topics,
            "topic_spread": {"before": self.topic_spread_before, "after": self.topic_spread_after},
            "topics_within_one": {"before": self.topics_within_one_before, "after": self.topics_within_one_after},
            "rack_violations": {"before": self.rack_violations_before, "after": self.rack_violations_after},
            "brokers": [dataclasses.asdict(b) for b in self.brokers],
            "topic_spreads": {t: {"before": b, "after": a} for t, (b, a) in sorted(self.topic_spreads.items())},
        }


class ReportBuilder:
    """Accumulates `TopicFigures` (in any order, from any number of workers) into a `PlanReport`."""

    def __init__(self) -> None:
        self.totals = dict.fromkeys(
            (
                "partitions",
                "replicas",
                "moved",
                "bytes_moved",
                "leader_changes",
                "changed",
                "racks_before",
                "racks_after",
            ),
            0,
        )
        self.per_broker: dict[str, dict[int, int]] = {
            name: defaultdict(int)
            for name in (
                "replicas_before",
                "replicas_after",
                "leaders_before",
                "leaders_after",
                "bytes_before",
                "bytes_after",
            )
        }
        self.spreads: dict[str, tuple[int, int]] = {}

    def add(self, f: TopicFigures) -> ReportBuilder:
        self.totals["partitions"] += f.partitions
        self.totals["replicas"] += f.replicas
        self.totals["moved"] += f.moved
        self.totals["bytes_moved"] += f.bytes_moved
        self.totals["leader_changes"] += f.leader_changes
        self.totals["changed"] += f.changed
        self.totals["racks_before"] += f.racks_before
        self.totals["racks_after"] += f.racks_after
        for name, counts in self.per_broker.items():
            for b, c in getattr(f, name).items():
                counts[b] += c
        self.spreads[f.topic] = (f.spread_before, f.spread_after)
        return self

    def merge(self, other: ReportBuilder) -> ReportBuilder:
        for key, value in other.totals.items():
            self.totals[key] += value
        for name, counts in other.per_broker.items():
            for b, c in counts.items():
                self.per_broker[name][b] += c
        self.spreads.update(other.spreads)
        return self

    def finish(
        self, targets: Sequence[int], racks: Mapping[int, str], bound: LowerBound, with_bytes: bool
    ) -> PlanReport:
        pb = self.per_broker
        target_set = set(targets)
        before_set = target_set | {b for b, c in pb["replicas_before"].items() if c}
        brokers = tuple(
            BrokerFigures(
                b,
                racks.get(b),
                b in target_set,
                pb["replicas_before"].get(b, 0),
                pb["replicas_after"].get(b, 0),
                pb["leaders_before"].get(b, 0),
                pb["leaders_after"].get(b, 0),
                pb["bytes_before"].get(b, 0),
                pb["bytes_after"].get(b, 0),
            )
            for b in sorted(before_set | {b for b, c in pb["replicas_after"].items() if c})
        )
        before = [x for x in brokers if x.broker in before_set]
        after = [x for x in brokers if x.target or x.replicas_after]
        spreads = self.spreads
        t = self.totals
        return PlanReport(
            partitions=t["partitions"],
            replicas=t["replicas"],
            replicas_moved=t["moved"],
            lower_bound=bound,
            leader_changes=t["leader_changes"],
            partitions_changed=t["changed"],
            brokers=brokers,
            replicas_before=Spread.of([x.replicas_before for x in before]),
            replicas_after=Spread.of([x.replicas_after for x in after]),
            leaders_before=Spread.of([x.leaders_before for x in before]),
            leaders_after=Spread.of([x.leaders_after for x in after]),
            topics=len(spreads),
            topic_spread_before=max((b for b, _ in spreads.values()), default=0),
            topic_spread_after=max((a for _, a in spreads.values()), default=0),
            topics_within_one_before=sum(1 for b, _ in spreads.values() if b <= 1),
            topics_within_one_after=sum(1 for _, a in spreads.values() if a <= 1),
            rack_violations_before=t["racks_before"],
            rack_violations_after=t["racks_after"],
            bytes_moved=t["bytes_moved"] if with_bytes else None,
            bytes_before=Spread.of([x.bytes_before for x in before]) if with_bytes else None,
            bytes_after=Spread.of([x.bytes_after for x in after]) if with_bytes else None,
            topic_spreads=dict(spreads),
        )


def plan_report(
    current: Mapping[Key, Sequence[int]],
    proposed: Mapping[Key, Sequence[int]],
    brokers: Iterable[int],
    racks: Mapping[int, str] | None = None,
    sizes: Mapping[Key, int] | None = None,
    all_racks: Mapping[int, str] | None = None,
    bound: LowerBound | None = None,
) -> PlanReport:
    """The report of any plan of `current` onto the target `brokers` (either strategy).

    `all_racks` gives the racks of brokers outside the target list too (for "before" figures).
    `bound` is computed when not given. Raises the errors of `make_layout`.
    """
    layout = make_layout(brokers, racks)
    if bound is None:
        bound = lower_bound(collect_stats(current, layout), layout)
    known_racks = dict(all_racks or {})
    known_racks.update(layout.racks or {})
    racks_before = len(set(known_racks.values())) if known_racks else 1
    by_topic: dict[str, list[tuple[Sequence[int], Sequence[int], int]]] = defaultdict(list)
    for key, old in current.items():
        by_topic[key[0]].append((old, proposed.get(key, old), int(sizes.get(key, 0)) if sizes else 0))
    builder = ReportBuilder()
    targets = layout.brokers
    for topic in sorted(by_topic):
        builder.add(
            topic_figures(
                topic, by_topic[topic], targets, known_racks if layout.racks else {}, racks_before, layout.num_racks
            )
        )
    report = builder.finish(targets, known_racks, bound, sizes is not None)
    if report.replicas_after.spread > 1 and sizes is None:
        # Racks of unequal size can make counts within 1 unreachable: the balance part of the bound
        # then bounds a goal no plan meets. What any rack-respecting plan must move still holds.
        report = dataclasses.replace(
            report, lower_bound=LowerBound(forced=bound.forced, cluster=0, per_topic=0, rack=bound.rack)
        )
    return report
