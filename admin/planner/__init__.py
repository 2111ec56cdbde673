"""Reassignment planning that moves the least data (issue 7): pure functions over plain data.

Kafka's `--generate` redraws every topic from a random start, so adding one broker moves nearly every
replica. This planner keeps what is well placed. In priority order its plan

  (a) uses only the target brokers (a broker left out of the list is decommissioned);
  (b) respects racks: a partition spans min(RF, racks) racks, spread as evenly as RF allows;
  (c) balances replicas per broker across the cluster to within 1, and per topic to within 1
      (where racks of unequal size make that impossible, as even as the racks allow);
  (d) balances leaders (first replicas) to within 1, per topic and across the cluster, by
      reordering replica lists, which moves no data;
  (e) moves the fewest replicas that achieve (a)-(d): a replica moves only off a broker that holds
      more of its topic than its target.

How (the same phases run in-process for `--engine local` and as a Spark job for `--engine spark`,
which is why they are separate functions over picklable values):

1. `normalize_partition` — per partition: the replicas that must move whatever the plan (on a broker
   that is not a target, or a second replica in a rack that must not hold two) become holes.
2. `TopicStats` — per topic: partition and replica counts, replicas kept per broker, leaders kept per
   broker. Mergeable, so Spark computes them with a reduce.
3. `solve_targets` — the exact count of replicas (and leaders) every broker should hold of every
   topic. Per topic the counts are floor/ceil of the fair share (water-filled over racks when racks
   cap a share, with a cap per rack where a small topic's partitions could not host more); the
   cluster's totals are as even as those per-topic bounds allow. Which brokers get a topic's "+1"s
   is a degree-constrained bipartite assignment between topics and brokers, solved greedily so that
   a +1 lands where the topic already has a replica to keep (that saves a move), then improved by a
   bounded local search (a chain of +1s moving between brokers, or the cluster's own +1 moving to
   another broker) while any chain keeps more replicas in place. With exact counts a plan moves
   Σ max(0, kept - target): this is where the moves are decided.
4. `realize_topic` — per topic, independently: which partitions shed a replica from a broker above
   its count (followers before leaders) and which hole or shed each broker below its count receives
   (no broker twice in a partition, rack rule kept); where greedy choice gets stuck, augmenting
   paths re-route earlier placements (no extra move), and only then does a two-partition exchange
   spend one. Then the leaders, by a capacitated matching of partitions to their replicas
   (augmenting paths), keeping the current leader wherever the counts allow.
5. `repair_leaders` — cluster-wide leader repair (reordering only, `fix_leaders`) over the
   partitions that `needs_leader_repair` picks, when per-topic leader counts could not all be met
   (sparse topics, or topics of RF 1, whose leaders are pinned to their replicas); over every
   partition when that pick leaves the counts out of bounds.

The lower bound reported next to the moves is the replicas on brokers that are not targets, plus
the largest of: the rack-breaking replicas; Σ over brokers of max(0, held - target) with the +1
targets given to the brokers already holding most (cluster); the same per topic; and both at once
(every +1 that could keep a replica in place, bounded per topic and per broker). No plan that meets
(a)-(c) moves fewer replicas.

Everything is deterministic for a given seed: ties are broken by `random.Random(seed)` (per topic
`random.Random(f"{seed}/{topic}")`), and nothing depends on the order Spark delivers rows in.

Known shortcuts, named openly: the bipartite assignment and the partition-level moves are greedy with
local repair, not an exact min-cost flow (on small random clusters it matches an exact min-cost flow
in about 98% of cases, off by one move otherwise; the benchmark prints moves against the bound);
leaders within 1 can be out of reach when topics of RF 1 sit beside others (their leaders are their
replicas), and balance within 1 when racks differ in size; with partition sizes the planner
balances bytes by a best-fit heuristic, on one machine, and replica counts are then not balanced.

One module per phase: `layout` (the target cluster, the rack rule, input checks), `stats` (1, 2),
`targets` (3, and the lower bound) with `extras` (3's assignment of the +1s), `realize` (4),
`leaders` (4's leader matching, 5), `engines` (the local engine, balancing bytes, Kafka's strategy),
`report` (the plan report), `batches` (a plan cut into files). The names below are the API.
"""

from kafkaops.admin.planner.batches import batch_figures, split_batches
from kafkaops.admin.planner.engines import Plan, finish_leaders, iter_rows, plan_balanced, plan_kafka
from kafkaops.admin.planner.layout import (
    HOLE,
    Key,
    Layout,
    make_layout,
    rack_limits,
    rack_span_violation,
    validate_current,
)
from kafkaops.admin.planner.leaders import (
    RepairRow,
    fix_leaders,
    leaders_balanced,
    needs_leader_repair,
    repair_leaders,
)
from kafkaops.admin.planner.realize import TopicOutcome, realize_topic, topic_rng
from kafkaops.admin.planner.report import (
    BrokerFigures,
    PlanReport,
    ReportBuilder,
    Spread,
    TopicFigures,
    plan_report,
    topic_figures,
)
from kafkaops.admin.planner.stats import TopicStats, collect_stats, dropped_for_racks, normalize_partition
from kafkaops.admin.planner.targets import LowerBound, Targets, lower_bound, solve_targets

__all__ = [
    "HOLE",
    "BrokerFigures",
    "Key",
    "Layout",
    "LowerBound",
    "Plan",
    "PlanReport",
    "RepairRow",
    "ReportBuilder",
    "Spread",
    "Targets",
    "TopicFigures",
    "TopicOutcome",
    "TopicStats",
    "batch_figures",
    "collect_stats",
    "dropped_for_racks",
    "finish_leaders",
    "fix_leaders",
    "iter_rows",
    "leaders_balanced",
    "lower_bound",
    "make_layout",
    "needs_leader_repair",
    "normalize_partition",
    "plan_balanced",
    "plan_kafka",
    "plan_report",
    "rack_limits",
    "rack_span_violation",
    "realize_topic",
    "repair_leaders",
    "solve_targets",
    "split_batches",
    "topic_figures",
    "topic_rng",
    "validate_current",
]
