"""The faults a run injects, each an episode on its own thread: prepared on the chaos loop's thread (its
target picked among the brokers, nodes or partitions found then, and reserved), then inject, hold, recover,
and wait until the broker is back in every ISR, as ZooKeeper says. Healing at the end is here too."""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import time
from collections.abc import Callable
from functools import partial

from kafkaops.cluster.common.jvm_text import java_string_hash
from kafkaops.cluster.local.waiting import wait_for
from kafkaops.cluster.local.zookeeper import expire_session
from kafkaops.cluster.zk import znodes

from .context import POLL_S, ChaosContext, Intent, Interrupted, last_line
from .schedule import BROKER_KINDS, REPLICATION_FACTOR, TARGETS, PlannedAction, pick_from
from .workload import COMMIT_GROUP


def signal_name(hard: bool) -> str:
    return "SIGKILL" if hard else "SIGTERM"


OFFSETS_TOPIC = "__consumer_offsets"


class FaultInjector:
    """Turns a planned action into an episode (or skips it), and runs the recoveries episodes share."""

    def __init__(self, ctx: ChaosContext) -> None:
        self.ctx = ctx

    def prepare(self, action: PlannedAction) -> Callable[[], None] | None:
        """Pick and reserve `action`'s target now; the episode to run on its own thread, None if skipped."""
        if action.kind in BROKER_KINDS:
            return self.broker_fault(action)
        match action.kind:
            case "zk_node_kill":
                return self.zk_node_kill(action)
            case "session_expire":
                return self.session_expire(action)
            case "zombie_freeze":
                return self.zombie_freeze(action)
            case "reassignment":
                return self.reassignment(action)
            case "preferred_election":
                return self.preferred_election(action)
            case "topic_deletion":
                return self.topic_deletion(action)
        raise ValueError(f"unknown action kind {action.kind!r}")

    def resolve_broker(self, target: str, pick: float, mine: int | None = None) -> tuple[int | None, str]:
        """The broker a fault hits: among those no other episode holds (`mine` is the caller's own)."""
        with self.ctx.lock:
            free = [b for b in self.ctx.local.broker_ids() if b not in self.ctx.impaired or b == mine]
        candidates = [b for b in free if self.ctx.local.broker_pid(b) is not None]
        if not candidates:
            return None, "no free broker"
        if target == "controller":
            controller = self.ctx.zk_call(lambda zk: zk.get_controller_id())
            if controller in candidates:
                return controller, "controller"
            return None, f"controller {controller} is busy or not running"
        if target == "coordinator":
            return self.coordinator(candidates)
        if target == "leader":
            partitions = self.ctx.surviving_partitions()
            states = self.ctx.partition_states(partitions)
            start = int(pick * len(partitions))
            for index in range(len(partitions)):
                tp = partitions[(start + index) % len(partitions)]
                state = states.get(tp)
                if state is not None and state.leader in candidates:
                    return state.leader, f"leader of {tp[0]}-{tp[1]}"
            return None, "no partition led by a free broker"
        return pick_from(candidates, pick), "random"

    def coordinator(self, candidates: list[int]) -> tuple[int | None, str]:
        """The leader of the group consumer's `__consumer_offsets` partition (Kafka's `partitionFor`:
        abs(hashCode) % partitions), if it is free."""
        counts = self.ctx.assignments([OFFSETS_TOPIC])
        if not counts:
            return None, f"no {OFFSETS_TOPIC} yet"
        code = java_string_hash(COMMIT_GROUP)
        partition = (0 if code == -(2**31) else abs(code)) % len(counts)  # Kafka's Utils.abs
        state = self.ctx.partition_states([(OFFSETS_TOPIC, partition)]).get((OFFSETS_TOPIC, partition))
        if state is None or state.leader not in candidates:
            return None, f"the coordinator of {COMMIT_GROUP} is busy or has no leader"
        return state.leader, f"coordinator of {COMMIT_GROUP} ({OFFSETS_TOPIC}-{partition})"

    def broker_fault(self, action: PlannedAction) -> Callable[[], None] | None:
        mode, target = action.kind.split(":")
        broker, why = self.resolve_broker(target, action.pick)
        if broker is None or not self.ctx.reserve(broker):
            self.ctx.skip(action.kind, why)
            return None
        hard = mode.startswith("hard")
        fault = self.ctx.record(action.kind, broker=broker, target=why, hold_s=action.hold_s, bounces=action.bounces)

        def shutdown() -> None:
            try:
                self.ctx.log(
                    f"{action.kind}: {signal_name(hard)} broker {broker} ({why}), down for {action.hold_s:.0f}s"
                )
                self.stop_broker(broker, hard)
                self.ctx.hold(action.hold_s)
                self.restart_broker(broker)
                self.wait_rejoined(broker)
            finally:
                self.ctx.release(broker)

        def bounce() -> None:
            victim, reason = broker, why
            try:
                for number in range(1, action.bounces + 1):
                    if number > 1 and self.ctx.ending.is_set():
                        self.ctx.log(f"{action.kind}: no bounce {number} (the chaos phase is over)")
                        return
                    if number > 1:
                        # Kafka's replication_test bounces the current leader / controller again
                        again, reason = self.resolve_broker(target, action.pick, mine=victim)
                        if again is None or (again != victim and not self.ctx.reserve(again)):
                            self.ctx.log(f"{action.kind}: no bounce {number} ({reason})")
                            return
                        if again != victim:
                            self.ctx.release(victim)
                            victim = again
                    if number > 1:
                        # each later bounce is a fault of its own in the unavailability table
                        with self.ctx.lock:
                            fault.setdefault("later_bounces", []).append(
                                {"at": round(self.ctx.log.now(), 2), "broker": victim}
                            )
                    self.ctx.log(
                        f"{action.kind}: {signal_name(hard)} broker {victim} ({reason}), bounce {number} of "
                        f"{action.bounces}"
                    )
                    self.stop_broker(victim, hard)
                    self.restart_broker(victim)
                    self.wait_rejoined(victim)
            finally:
                self.ctx.release(victim)

        return shutdown if mode.endswith("_shutdown") else bounce

    def stop_broker(self, broker: int, hard: bool) -> None:
        """SIGKILL, or SIGTERM and up to `clean_stop_timeout_s` for the controlled shutdown before a SIGKILL
        (as a service manager would; Kafka's system tests wait 60 s)."""
        started = time.monotonic()
        timeout_s = self.ctx.config.clean_stop_timeout_s
        self.ctx.local.stop_broker(broker, hard=hard, timeout_s=timeout_s)
        took = time.monotonic() - started
        killed = not hard and took >= timeout_s
        self.ctx.log(
            f"broker {broker} stopped after {took:.1f}s" + (" (SIGKILL: SIGTERM did not end it)" if killed else "")
        )
        if not hard and took > min(20.0, timeout_s - 1):
            with self.ctx.lock:
                self.ctx.slow_stops.append((broker, round(took, 1)))

    def restart_broker(self, broker: int, attempts: int = 5) -> None:
        """Start `broker` again and wait for its new registration.

        A broker refuses to start while its old registration is still held by a session that has not
        expired yet (Kafka's "node already exists and owner ... does not match current session"): after a
        SIGKILL, ZooKeeper expires the old session one session timeout later, or later still if the
        ensemble elected a new leader meanwhile (the new leader restarts every session's timer). Like an
        operator, the runner starts it again then. Raises TimeoutError or RuntimeError (it exited)."""
        started = time.monotonic()
        path = znodes.BrokerIdZNode.path(broker)
        timeout_s = self.ctx.config.session_timeout_ms / 1000 + 60
        for attempt in range(1, attempts + 1):
            if self.ctx.closing.is_set():
                raise Interrupted("closing")
            entry = self.ctx.zk_call(lambda zk: zk.get(path))
            stale = entry[1].czxid if entry is not None else None
            self.ctx.local.start_broker(broker, wait=False)
            deadline = time.monotonic() + timeout_s
            while True:
                entry = self.ctx.zk_call(lambda zk: zk.get(path))
                if entry is not None and entry[1].czxid != stale:
                    self.ctx.log(f"broker {broker} registered again after {time.monotonic() - started:.1f}s")
                    return
                if self.ctx.local.broker_pid(broker) is None:
                    break
                if time.monotonic() > deadline:
                    self.ctx.anomaly(f"broker {broker} runs but did not register within {timeout_s:.0f}s of starting")
                    raise TimeoutError(f"broker {broker} runs but did not register within {timeout_s:.0f}s")
                time.sleep(0.2)
            last = last_line(self.ctx.server_tail(broker, 3))
            self.ctx.log(f"broker {broker} exited during start-up (attempt {attempt}): {last}")
            if "already exists" not in last or attempt == attempts:
                self.ctx.anomaly(f"broker {broker} exited during start-up: {last}")
                raise RuntimeError(f"broker {broker} exited during start-up: {last}")
            time.sleep(2.0)

    def wait_rejoined(self, broker: int, timeout_s: float | None = None) -> bool:
        """Wait until `broker` is in the ISR of every surviving partition it replicates (so a fault that
        follows finds the replication factor whole again)."""
        partitions = self.ctx.surviving_partitions()
        timeout_s = timeout_s if timeout_s is not None else self.ctx.config.heal_timeout_s

        started = time.monotonic()

        def rejoined() -> bool:
            """In every ISR, as written after the broker's current registration: an ISR that still names
            it from before its restart (the controller has not caught up) does not count, for 5 s."""
            if self.ctx.closing.is_set():
                raise Interrupted("closing")
            replicas = self.ctx.assignments(self.ctx.surviving)
            mine = [tp for tp in partitions if broker in replicas.get(tp, ())]
            paths = {tp: znodes.TopicPartitionStateZNode.path(*tp) for tp in mine}
            registration = znodes.BrokerIdZNode.path(broker)
            found = self.ctx.zk_call(lambda zk: zk.get_many([registration, *paths.values()]))
            registered = found[registration]
            if registered is None:
                return False
            epoch = registered[1].czxid
            patient = time.monotonic() - started < 5
            for tp, path in paths.items():
                entry = found[path]
                if entry is None:
                    return False
                state = znodes.TopicPartitionStateZNode.decode(tp[0], tp[1], entry[0], entry[1].version)
                if broker not in state.leader_and_isr.isr or (patient and entry[1].mzxid < epoch):
                    return False
            return True

        try:
            wait_for(rejoined, timeout_s, interval_s=POLL_S, what=f"broker {broker} back in every ISR")
        except TimeoutError:
            message = f"broker {broker} not back in every ISR within {timeout_s:.0f}s of starting again"
            with self.ctx.lock:
                self.ctx.anomalies.append(message)
            self.ctx.log(f"ANOMALY {message}: {self.ctx.partition_states(partitions)}")
            return False
        self.ctx.log(f"broker {broker} back in every ISR after {time.monotonic() - started:.1f}s")
        return True

    def zk_node_kill(self, action: PlannedAction) -> Callable[[], None] | None:
        modes = self.ctx.ensemble.modes()
        serving = [n for n, mode in modes.items() if mode in ("leader", "follower")]
        if len(serving) < len(modes) or "leader" not in modes.values():
            self.ctx.skip(action.kind, f"ensemble not whole ({modes})")
            return None
        leader = next(n for n, mode in modes.items() if mode == "leader")
        followers = [n for n in serving if n != leader]
        node = leader if action.pick < 0.5 else pick_from(followers, action.pick2)
        role = modes[node]
        self.ctx.zk_busy = True
        self.ctx.record(action.kind, node=node, role=role, hold_s=action.hold_s)

        def episode() -> None:
            try:
                self.ctx.log(f"zk_node_kill: SIGKILL ZooKeeper node {node} ({role}), down for {action.hold_s:.0f}s")
                self.ctx.ensemble.stop_node(node, hard=True)
                self.ctx.hold(action.hold_s)
                started = time.monotonic()
                self.ctx.ensemble.start_node(node, timeout_s=120)
                self.ctx.log(
                    f"ZooKeeper node {node} back as {self.ctx.ensemble.modes()[node]} after "
                    f"{time.monotonic() - started:.1f}s"
                )
            finally:
                self.ctx.zk_busy = False

        return episode

    def session_expire(self, action: PlannedAction) -> Callable[[], None] | None:
        target = pick_from(TARGETS, action.pick2)
        broker, why = self.resolve_broker(target, action.pick)
        owner = self.ctx.registration_owner(broker) if broker is not None else None
        if broker is None or owner is None or not self.ctx.reserve(broker):
            self.ctx.skip(action.kind, why if broker is None else f"broker {broker} not registered or busy")
            return None
        session = f"0x{owner & 0xFFFFFFFFFFFFFFFF:x}"
        self.ctx.record(action.kind, broker=broker, target=why, session=session)

        def episode() -> None:
            try:
                self.ctx.log(f"session_expire: ending broker {broker}'s ZooKeeper session {session} ({why})")
                closes = expire_session(self.ctx.connect, owner)
                if closes > 1:
                    self.ctx.log(f"session {session} needed {closes} closes (broker {broker}'s client took it back)")
                if self.expect_reregistration(broker, owner, "its session was ended"):
                    self.wait_rejoined(broker)
            finally:
                self.ctx.release(broker)

        return episode

    def expect_reregistration(self, broker: int, old_owner: int, why: str, may_survive: bool = False) -> bool:
        """Wait until `broker` is registered under a new session (it lost the old one); an anomaly if not.

        `may_survive`: a frozen broker's session can outlive the freeze, legitimately: when the ensemble
        elects a new leader meanwhile, the new leader restarts every session's timer. Then the old
        registration is still held by the old session one session timeout after the broker resumed (an
        expired session's ephemeral node would be gone by then), and that is accepted."""
        started = time.monotonic()
        timeout_s = self.ctx.config.session_timeout_ms / 1000 + 60
        grace_s = self.ctx.config.session_timeout_ms / 1000 + 3
        outcome = ""

        def settled() -> bool:
            nonlocal outcome
            if self.ctx.closing.is_set():
                raise Interrupted("closing")
            owner = self.ctx.registration_owner(broker)
            if owner is not None and owner != old_owner:
                outcome = "new"
                return True
            if may_survive and owner == old_owner and time.monotonic() - started > grace_s:
                outcome = "survived"
                return True
            return False

        try:
            wait_for(settled, timeout_s, interval_s=POLL_S, what="re-registration")
        except TimeoutError:
            self.ctx.anomaly(
                f"broker {broker} did not register again within {timeout_s:.0f}s after {why}\n    "
                + self.ctx.server_tail(broker)
            )
            return False
        if outcome == "survived":
            session = f"0x{old_owner & 0xFFFFFFFFFFFFFFFF:x}"
            self.ctx.log(
                f"broker {broker} kept its session {session} (a ZooKeeper leader change restarts session timers)"
            )
            return True
        self.ctx.log(f"broker {broker} registered again with a new session after {time.monotonic() - started:.1f}s")
        return True

    def zombie_freeze(self, action: PlannedAction) -> Callable[[], None] | None:
        broker, why = self.resolve_broker("leader", action.pick)
        pid = self.ctx.local.broker_pid(broker) if broker is not None else None
        if broker is None or pid is None or not self.ctx.reserve(broker):
            self.ctx.skip(action.kind, why)
            return None
        owner = self.ctx.registration_owner(broker)
        controller = self.ctx.zk_call(lambda zk: zk.get_controller_id())
        role = why + (", controller" if controller == broker else "")
        self.ctx.record(action.kind, broker=broker, target=role, hold_s=action.hold_s)

        def episode() -> None:
            try:
                self.ctx.log(
                    f"zombie_freeze: SIGSTOP broker {broker} ({role}) for {action.hold_s:.1f}s "
                    f"(session timeout {self.ctx.config.session_timeout_ms / 1000:.0f}s)"
                )
                os.kill(pid, signal.SIGSTOP)
                try:
                    self.ctx.hold(action.hold_s)
                finally:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGCONT)
                    self.ctx.log(f"zombie_freeze: SIGCONT broker {broker}")
                if owner is not None and self.expect_reregistration(
                    broker, owner, "it was frozen past its session timeout", may_survive=True
                ):
                    self.wait_rejoined(broker)
            finally:
                self.ctx.release(broker)

        return episode

    def reassignment(self, action: PlannedAction) -> Callable[[], None] | None:
        topic = pick_from(self.ctx.surviving, action.pick)
        brokers = self.ctx.zk_call(lambda zk: zk.get_sorted_broker_ids())
        if len(brokers) < REPLICATION_FACTOR:  # a broker fault holds one down: no plan of RF distinct brokers
            self.ctx.skip(action.kind, f"only brokers {brokers} registered")
            return None
        current = self.ctx.assignments([topic])
        rng = random.Random(int(action.pick2 * 2**32))
        plan = []
        for (t, partition), replicas in sorted(current.items()):
            target = rng.sample(brokers, REPLICATION_FACTOR)
            if target == replicas:
                target = target[1:] + target[:1]
            plan.append({"topic": t, "partition": partition, "replicas": target})
        path = self.ctx.state_dir / f"reassignment-{len(self.ctx.intents)}.json"
        path.write_text(json.dumps({"version": 1, "partitions": plan}))
        intent = Intent(
            "reassignment",
            self.ctx.log.now(),
            f"{topic} → {[p['replicas'] for p in plan]}",
            {"plan": plan, "file": str(path)},
        )
        self.ctx.intents.append(intent)
        self.ctx.record(action.kind, topic=topic, plan=[p["replicas"] for p in plan], registered=brokers)

        def episode() -> None:
            self.ctx.log(f"reassignment of {topic}: {list(current.values())} → {[p['replicas'] for p in plan]}")
            intent.exit_code, intent.output = self.ctx.cli(
                "reassign-partitions",
                "--zookeeper",
                self.ctx.connect,
                "--reassignment-json-file",
                str(path),
                "--execute",
            )
            self.ctx.log(f"reassign-partitions --execute exited {intent.exit_code}: {last_line(intent.output)}")
            if intent.exit_code != 0:
                intent.status = "refused"

        return episode

    def preferred_election(self, action: PlannedAction) -> Callable[[], None] | None:
        intent = Intent("preferred_election", self.ctx.log.now(), "all partitions")
        self.ctx.intents.append(intent)
        self.ctx.record(action.kind)

        def episode() -> None:
            self.ctx.log("preferred-replica-election for all partitions")
            intent.exit_code, intent.output = self.ctx.cli(
                "preferred-replica-election", "--zookeeper", self.ctx.connect
            )
            self.ctx.log(f"preferred-replica-election exited {intent.exit_code}: {last_line(intent.output)}")
            if intent.exit_code != 0:
                intent.status = "refused"

        return episode

    def topic_deletion(self, action: PlannedAction) -> Callable[[], None] | None:
        remaining = [t for t in self.ctx.doomed if t not in self.ctx.deleted]
        if not remaining:
            self.ctx.skip(action.kind, "no topic left to delete")
            return None
        topic = remaining[0]
        intent = Intent("topic_deletion", self.ctx.log.now(), topic, {"topic": topic})
        self.ctx.intents.append(intent)
        self.ctx.record(action.kind, topic=topic)

        def episode() -> None:
            producer = self.ctx.producers.get(topic)
            if producer is not None:
                producer.stop(flush_timeout_s=20)
                unflushed = ", some sends not acknowledged within 20 s" if producer.unflushed else ""
                self.ctx.log(f"producer of {topic} stopped ({len(producer.acked)} acked{unflushed}) before deleting it")
            self.ctx.log(f"topics --delete --topic {topic}")
            intent.exit_code, intent.output = self.ctx.cli(
                "topics", "--zookeeper", self.ctx.connect, "--delete", "--topic", topic
            )
            self.ctx.log(f"topics --delete exited {intent.exit_code}: {last_line(intent.output)}")
            if intent.exit_code != 0:
                intent.status = "refused"

        return episode

    def check_health(self) -> None:
        """A broker process that died without being told to is an anomaly: noted, then started again."""
        for broker in self.ctx.local.broker_ids():
            with self.ctx.lock:
                if broker in self.ctx.impaired:
                    continue
            if self.ctx.local.broker_pid(broker) is not None or not self.ctx.reserve(broker):
                continue
            message = f"broker {broker} exited on its own"
            with self.ctx.lock:
                self.ctx.anomalies.append(message)
            self.ctx.log(f"ANOMALY {message}; its last lines:\n    {self.ctx.server_tail(broker, 25)}")

            def restart(b: int = broker) -> None:
                try:
                    self.restart_broker(b)
                    self.wait_rejoined(b)
                finally:
                    self.ctx.release(b)

            self.ctx.spawn(f"restart-crashed-{broker}", restart)

    def heal(self) -> None:
        self.ctx.log("healing: every ZooKeeper node and broker running, none frozen")
        for node_id in self.ctx.ensemble.nodes:
            if self.ctx.ensemble.nodes[node_id].pid() is None:
                self.ctx.log(f"ZooKeeper node {node_id} not running: starting it")
                self.ctx.ensemble.start_node(node_id, timeout_s=120)
        self.ctx.ensemble.wait_serving(list(self.ctx.ensemble.nodes), 120)
        for broker in self.ctx.local.broker_ids():
            pid = self.ctx.local.broker_pid(broker)
            if pid is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGCONT)
                continue
            self.ctx.log(f"broker {broker} not running: starting it")
            self.ctx.attempt(f"restart broker {broker}", partial(self.restart_broker, broker))
        ids = self.ctx.local.broker_ids()
        wait_for(
            lambda: set(self.ctx.zk_call(lambda zk: zk.get_sorted_broker_ids())) >= set(ids),
            self.ctx.config.heal_timeout_s,
            interval_s=POLL_S,
            what=f"brokers {ids} registered",
        )
        self.ctx.log(f"healed: ensemble {self.ctx.ensemble.modes()}, brokers {ids} registered")
