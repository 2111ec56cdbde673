"""What a run does and when: the fault kinds, the run's configuration and its seeded schedule (pure)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

MODES = ("clean_shutdown", "hard_shutdown", "clean_bounce", "hard_bounce")
TARGETS = ("leader", "controller", "random")
COORDINATOR_KINDS = ("hard_shutdown:coordinator", "clean_bounce:coordinator")
"""Faults on the broker coordinating the group consumer's group (the leader of its `__consumer_offsets`
partition): a coordinator failover, hard and clean."""
BROKER_KINDS = tuple(f"{mode}:{target}" for mode in MODES for target in TARGETS) + COORDINATOR_KINDS
OTHER_FAULT_KINDS = ("zk_node_kill", "session_expire", "zombie_freeze")
FAULT_KINDS = BROKER_KINDS + OTHER_FAULT_KINDS
ADMIN_KINDS = ("reassignment", "preferred_election", "topic_deletion")
ALL_KINDS = FAULT_KINDS + ADMIN_KINDS
ADMIN_FRACTIONS = {"reassignment": 0.3, "preferred_election": 0.45, "topic_deletion": 0.6}
"""Where in each admin round (a slice of the run) each admin action starts: in the middle of the faults."""

REPLICATION_FACTOR = 3
TOPIC_CONFIG = {"min.insync.replicas": "2", "unclean.leader.election.enable": "false"}
SURVIVING_PREFIX = "chaos-"
DOOMED_PREFIX = "doomed-"

T = TypeVar("T")


@dataclass(frozen=True)
class ChaosConfig:
    seed: int
    duration_s: float
    brokers: int = 3
    topics: int = 2
    partitions: int = 3
    rate: float = 100.0
    """Records per second per topic."""
    session_timeout_ms: int = 6000
    fault_interval_s: float = 20.0
    """Mean time between two fault starts (each gap drawn from 0.5x to 1.5x)."""
    hold_s: float = 20.0
    """Mean time a shut-down broker stays down (drawn from 0.5x to 1.5x); ZooKeeper nodes half of it."""
    kinds: tuple[str, ...] = ALL_KINDS
    admin_every_s: float = 600.0
    """One round of admin actions (reassignment, preferred election, deletion) per this many seconds."""
    max_impaired: int = 1
    """Brokers down or frozen at once, at most."""
    heal_timeout_s: float = 240.0
    """Per phase of the end: healing, intents, full ISRs, reading, replica comparison."""
    clean_stop_timeout_s: float = 60.0
    """After a SIGTERM, how long a broker may take to exit before it gets a SIGKILL."""
    warmup_s: float = 8.0
    security: str = "plaintext"
    """The cluster's `up --security` mode: every listener, inter-broker included, speaks its protocol, and
    every client of the run logs in with the cluster's `client.properties`."""


@dataclass(frozen=True)
class PlannedAction:
    """One scheduled action: `at_s` seconds after the chaos phase starts. `pick` and `pick2` (in [0, 1))
    choose among the candidates found when it runs (a partition, a broker, a node, a target kind)."""

    at_s: float
    kind: str
    hold_s: float = 0.0
    bounces: int = 1
    pick: float = 0.0
    pick2: float = 0.0


def expand_kinds(spec: str) -> tuple[str, ...]:
    """`--faults` text → kinds: names from ALL_KINDS, a mode (all its targets), `broker`, `admin`, `all`.

    Raises ValueError naming an unknown entry."""
    kinds: list[str] = []
    for entry in (e.strip() for e in spec.split(",")):
        if not entry:
            continue
        if entry == "all":
            found: Sequence[str] = ALL_KINDS
        elif entry == "broker":
            found = BROKER_KINDS
        elif entry == "admin":
            found = ADMIN_KINDS
        elif entry in MODES:
            found = [f"{entry}:{t}" for t in TARGETS]
        elif entry == "coordinator":
            found = COORDINATOR_KINDS
        elif entry in TARGETS:
            found = [f"{m}:{entry}" for m in MODES]
        elif entry in ALL_KINDS:
            found = [entry]
        else:
            raise ValueError(
                f"unknown fault kind {entry!r}: one of {', '.join(ALL_KINDS)}, a mode, a target, broker, admin, all"
            )
        kinds.extend(k for k in found if k not in kinds)
    return tuple(kinds)


def plan_schedule(config: ChaosConfig) -> list[PlannedAction]:
    """The run's actions in time order; a pure function of the config (its seed included)."""
    rng = random.Random(config.seed)
    duration = config.duration_s
    session_s = config.session_timeout_ms / 1000
    actions: list[PlannedAction] = []
    fault_kinds = [k for k in config.kinds if k in FAULT_KINDS]
    deck: list[str] = []
    at = min(config.warmup_s, duration * 0.15)
    last_start = duration - max(3.0, min(config.fault_interval_s, duration * 0.1))
    first = True
    while fault_kinds:
        if not first:
            at += rng.uniform(0.5, 1.5) * config.fault_interval_s
        first = False
        if at > last_start:
            break
        if not deck:
            deck = list(fault_kinds)
            rng.shuffle(deck)
        kind = deck.pop()
        mode = kind.split(":")[0]
        hold = 0.0
        bounces = 1
        if mode.endswith("_shutdown"):
            hold = rng.uniform(0.5, 1.5) * config.hold_s
        elif mode.endswith("_bounce"):
            bounces = rng.randint(1, 3)
        elif kind == "zk_node_kill":
            hold = rng.uniform(0.25, 0.75) * config.hold_s
        elif kind == "zombie_freeze":
            hold = session_s * 1.5 + rng.uniform(1.0, 4.0)
        actions.append(PlannedAction(round(at, 3), kind, round(hold, 3), bounces, rng.random(), rng.random()))
    admin_kinds = [k for k in ADMIN_KINDS if k in config.kinds]
    if admin_kinds:
        rounds = max(1, round(duration / config.admin_every_s))
        width = duration / rounds
        for index in range(rounds):
            for kind in admin_kinds:
                at = index * width + (ADMIN_FRACTIONS[kind] + rng.uniform(-0.05, 0.05)) * width
                actions.append(PlannedAction(round(at, 3), kind, 0.0, 1, rng.random(), rng.random()))
    return sorted(actions, key=lambda a: a.at_s)


def admin_rounds(schedule: Sequence[PlannedAction]) -> int:
    return sum(1 for a in schedule if a.kind == "topic_deletion")


def pick_from(items: Sequence[T], pick: float) -> T:
    return items[min(int(pick * len(items)), len(items) - 1)]
