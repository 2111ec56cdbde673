"""What a run checks: the records (every acknowledged one exactly once at its offset, nothing a consumer read
gone), the replicas (identical), the intents (completed or reported failed), the cluster (whole again), and
the verdict they make. The record checks are pure; the end phase reads the cluster to feed them."""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kafkaops.cluster.local.waiting import wait_for
from kafkaops.cluster.zk import znodes

from .context import POLL_S, ChaosContext, Intent, last_line
from .workload import KAFKA_PYTHON_LOG, Ack, confluent_settings

LIVE_STALL_LIMIT_S = 120.0
"""The live consumer may read nothing new for this long while the producers get acks (the longest
unavailability of a partition is about 20 s); longer fails the check "live consumer kept up"."""

EXIT_PASS, EXIT_DATA, EXIT_CHECKS, EXIT_SETUP, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


# --- records (pure) --------------------------------------------------------------------------------------


@dataclass
class DataVerdict:
    acked: int = 0
    consumed: int = 0
    lost: list[tuple[str, int, int, str, str | None]] = field(default_factory=list)
    """(topic, partition, acked offset, value, what the log holds there)."""
    moved: list[tuple[str, int, int, int, str]] = field(default_factory=list)
    """(topic, partition, acked offset, offset found at, value)."""
    duplicated: list[tuple[str, list[tuple[int, int]]]] = field(default_factory=list)
    """(value, [(partition, offset), ...])."""
    gaps: list[tuple[str, int, str]] = field(default_factory=list)
    """(topic, partition, what is wrong with its offsets)."""
    unacked_present: int = 0
    live_read: int = 0
    live_conflicts: list[tuple[str, int, int, str, str | None]] = field(default_factory=list)
    """(topic, partition, offset, value the live consumer read, what the log holds there now)."""

    @property
    def ok(self) -> bool:
        return not (self.lost or self.moved or self.duplicated or self.gaps or self.live_conflicts)


def check_records(
    acked: Iterable[Ack],
    final: dict[tuple[str, int], dict[int, bytes]],
    live: dict[tuple[str, int, int], bytes],
    topics: Iterable[str],
) -> DataVerdict:
    """Compare what was acknowledged and what the live consumer read with the logs read at the end.

    `final[(topic, partition)]` maps offset → value for every record read from the beginning to the high
    watermark. Only `topics` are checked (a deleted topic's records are gone by design)."""
    wanted = set(topics)
    verdict = DataVerdict()
    where: dict[bytes, list[tuple[str, int, int]]] = defaultdict(list)
    for (topic, partition), records in final.items():
        if topic not in wanted:
            continue
        offsets = sorted(records)
        verdict.consumed += len(offsets)
        if offsets and offsets != list(range(offsets[0], offsets[0] + len(offsets))):
            verdict.gaps.append((topic, partition, f"offsets {offsets[0]}..{offsets[-1]} with {len(offsets)} records"))
        elif offsets and offsets[0] != 0:
            verdict.gaps.append((topic, partition, f"log starts at offset {offsets[0]}, not 0"))
        for offset, value in records.items():
            where[value].append((topic, partition, offset))
    acked_values: set[bytes] = set()
    for ack in acked:
        if ack.topic not in wanted:
            continue
        verdict.acked += 1
        acked_values.add(ack.value)
        found = final.get((ack.topic, ack.partition), {}).get(ack.offset)
        if found == ack.value:
            continue
        elsewhere = [w for w in where.get(ack.value, []) if w[:2] == (ack.topic, ack.partition)]
        if elsewhere:
            verdict.moved.append((ack.topic, ack.partition, ack.offset, elsewhere[0][2], ack.value.decode()))
        else:
            verdict.lost.append(
                (
                    ack.topic,
                    ack.partition,
                    ack.offset,
                    ack.value.decode(),
                    found.decode() if found is not None else None,
                )
            )
    for value, places in where.items():
        if len(places) > 1:
            verdict.duplicated.append((value.decode(), [(p, o) for _, p, o in places]))
        if value not in acked_values:
            verdict.unacked_present += 1
    for (topic, partition, offset), value in live.items():
        if topic not in wanted:
            continue
        verdict.live_read += 1
        found = final.get((topic, partition), {}).get(offset)
        if found != value:
            verdict.live_conflicts.append(
                (topic, partition, offset, value.decode(), found.decode() if found is not None else None)
            )
    return verdict


def unread_acks(
    acked: Iterable[Ack], read_offsets: dict[tuple[str, int], set[int]], topics: Iterable[str]
) -> list[tuple[str, int, int]]:
    """The acknowledged records of `topics` a group member never read: (topic, partition, offset)."""
    wanted = set(topics)
    return sorted(
        (a.topic, a.partition, a.offset)
        for a in acked
        if a.topic in wanted and a.offset not in read_offsets.get((a.topic, a.partition), set())
    )


def max_gaps(
    acks: Iterable[Ack], partitions: Iterable[tuple[str, int]], start: float, end: float
) -> dict[tuple[str, int], tuple[float, float]]:
    """Per partition, the longest time without a successful ack between `start` and `end` (seconds since
    the chaos phase began): (gap seconds, when the gap began)."""
    times: dict[tuple[str, int], list[float]] = {tp: [] for tp in partitions}
    for ack in acks:
        if (ack.topic, ack.partition) in times:
            times[(ack.topic, ack.partition)].append(ack.at)
    result = {}
    for tp, moments in times.items():
        points = [start, *sorted(moments), end]
        best = (0.0, start)
        for before, after in zip(points, points[1:], strict=False):
            if after - before > best[0]:
                best = (after - before, before)
        result[tp] = best
    return result


def count_per_topic(
    final: dict[tuple[str, int], dict[int, bytes]], acked: Iterable[Ack]
) -> tuple[dict[str, int], dict[str, int]]:
    consumed: Counter[str] = Counter()
    acked_values = {a.value for a in acked}
    unacked: Counter[str] = Counter()
    for (topic, _), records in final.items():
        consumed[topic] += len(records)
        unacked[topic] += sum(1 for v in records.values() if v not in acked_values)
    return dict(consumed), dict(unacked)


# --- reading the cluster ---------------------------------------------------------------------------------


def read_to_end(
    bootstrap: str,
    partitions: Sequence[tuple[str, int]],
    timeout_s: float,
    settings: Mapping[str, Any] | None = None,
) -> tuple[dict[tuple[str, int], dict[int, bytes]], dict[tuple[str, int], int], int]:
    """Every record of `partitions` from the beginning to the high watermark found first (a fresh
    confluent-kafka consumer, with `settings` on top: security). Returns (records by partition: offset →
    value, high watermarks, records read twice at one offset by this reader). Raises TimeoutError naming the
    partitions not read to the end."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer
    from confluent_kafka import TopicPartition as CTopicPartition

    consumer = Consumer(confluent_settings(bootstrap, {**(settings or {}), "enable.partition.eof": False}))
    try:
        ends: dict[tuple[str, int], int] = {}
        deadline = time.monotonic() + timeout_s
        for tp in partitions:
            while True:
                try:
                    ends[tp] = int(consumer.get_watermark_offsets(CTopicPartition(*tp), timeout=10)[1])
                    break
                except Exception:  # noqa: BLE001 - KafkaException while metadata settles: retried
                    if time.monotonic() > deadline:
                        raise TimeoutError(f"no high watermark for {tp[0]}-{tp[1]} within {timeout_s:.0f}s") from None
                    time.sleep(0.5)
        records: dict[tuple[str, int], dict[int, bytes]] = {tp: {} for tp in partitions}
        reread = 0
        wanted = [tp for tp in partitions if ends[tp] > 0]
        consumer.assign([CTopicPartition(t, p, OFFSET_BEGINNING) for t, p in wanted])
        remaining = set(wanted)
        while remaining:
            if time.monotonic() > deadline:
                shown = ", ".join(f"{t}-{p} ({len(records[(t, p)])} of {ends[(t, p)]})" for t, p in sorted(remaining))
                raise TimeoutError(f"not read to the end within {timeout_s:.0f}s: {shown}")
            message = consumer.poll(0.5)
            if message is None or message.error() is not None:
                continue
            tp = (str(message.topic()), int(message.partition() or 0))
            offset = int(message.offset() or 0)
            if offset in records[tp]:
                reread += 1
            records[tp][offset] = message.value() or b""
            if tp in remaining and offset >= ends[tp] - 1:
                remaining.discard(tp)
        return records, ends, reread
    finally:
        consumer.close()


def fetch_replica(
    client: Any, broker_id: int, topic: str, partition: int
) -> tuple[list[tuple[int, bytes | None]], int]:
    """A replica's records (offset, value) from the start up to its high watermark, and that watermark,
    fetched from the broker itself as Kafka's debugging consumer."""
    records: list[tuple[int, bytes | None]] = []
    offset = 0
    high_watermark = 0
    while True:
        result = client.fetch_from_broker(broker_id, topic, partition, offset, max_bytes=1 << 20)
        high_watermark = result.high_watermark
        records.extend((r.offset, r.value) for r in result.records)
        if result.next_offset <= offset or result.next_offset >= high_watermark:
            return [r for r in records if r[0] < high_watermark], high_watermark
        offset = result.next_offset


# --- the end phase ---------------------------------------------------------------------------------------


class RunChecks:
    """The end of a run, once the cluster is healed: intents settled, traffic finished, records and replicas
    compared; each finding goes to `ctx.checks` for the report, and `verdict()` makes the exit code."""

    def __init__(self, ctx: ChaosContext) -> None:
        self.ctx = ctx

    def wait_intents(self) -> None:
        deadline = time.monotonic() + self.ctx.config.heal_timeout_s

        def outstanding() -> list[str]:
            left = []
            paths = [znodes.ReassignPartitionsZNode.path(), znodes.PreferredReplicaElectionZNode.path()]
            for topic in self.ctx.deleted:
                paths += [znodes.TopicZNode.path(topic), znodes.DeleteTopicsTopicZNode.path(topic)]
            for path in paths:
                if self.ctx.exists(path):
                    left.append(path)
            return left

        started = time.monotonic()
        left = outstanding()
        while left and time.monotonic() < deadline:
            time.sleep(0.5)
            left = outstanding()
        self.ctx.log(
            f"intents: {'all done' if not left else 'still there: ' + ', '.join(left)} "
            f"after {time.monotonic() - started:.1f}s"
        )
        for intent in self.ctx.intents:
            if intent.status not in ("started",):
                continue
            if intent.kind == "reassignment":
                if znodes.ReassignPartitionsZNode.path() in left:
                    intent.status = "not completed"
                    intent.output += f"\n{znodes.ReassignPartitionsZNode.path()} still there"
                else:
                    self.settle_reassignment(intent)
            elif intent.kind == "preferred_election":
                intent.status = "not completed" if znodes.PreferredReplicaElectionZNode.path() in left else "completed"
            elif intent.kind == "topic_deletion":
                topic = intent.target["topic"]
                gone = (
                    znodes.TopicZNode.path(topic) not in left and znodes.DeleteTopicsTopicZNode.path(topic) not in left
                )
                intent.status = "completed" if gone else "not completed"
        stuck = [i for i in self.ctx.intents if i.status in ("not completed", "started")]
        refused = [i for i in self.ctx.intents if i.status == "refused"]
        failed = [i for i in self.ctx.intents if i.status == "failed"]
        self.ctx.checks["intents"] = (
            not stuck,
            f"{sum(i.status == 'completed' for i in self.ctx.intents)} completed, {len(failed)} reported failed"
            + (f" ({'; '.join(i.kind + ': ' + i.reason for i in failed)})" if failed else "")
            + f", {len(refused)} refused by the CLI, {len(stuck)} not completed"
            + (f" ({', '.join(i.kind + ': ' + i.detail for i in stuck)})" if stuck else ""),
        )

    def settle_reassignment(self, intent: Intent) -> None:
        """A reassignment whose znode is gone: `reassign-partitions --verify` says, per partition, complete or
        failed ("There is no active reassignment of partition ..., but replica set is ... rather than ...");
        a failed partition must have been reported by a controller ("Failed reassignment through zk")."""
        code, output = self.ctx.cli(
            "reassign-partitions", "--zookeeper", self.ctx.connect, "--reassignment-json-file", intent.target["file"],
            "--verify", "--preserve-throttles",
        )  # fmt: skip
        lines = output.splitlines()
        intent.output += "\n--verify: " + " / ".join(lines[-8:])
        if any("still in progress" in line for line in lines) or code not in (0, 1):
            return
        failed = [line for line in lines if line.startswith("There is no active reassignment")]
        if not failed:
            intent.status = "completed"
            self.ctx.log(f"reassignment at +{intent.at:.0f}s: complete")
            return
        reports = [
            line.strip()
            for broker in self.ctx.local.broker_ids()
            for line in self.ctx.server_lines(broker)
            if "Failed reassignment through zk" in line
        ]
        partitions = [line.split("partition ", 1)[1].split(",", 1)[0] for line in failed]
        unexplained = [p for p in partitions if not any(f"{p} ->" in report for report in reports)]
        intent.reason = "; ".join(failed) + (
            " — the controller logged: " + " | ".join(r[r.find("Failed") :][:200] for r in reports[-2:])
            if reports
            else ""
        )
        intent.status = "not completed" if unexplained else "failed"
        self.ctx.log(f"reassignment at +{intent.at:.0f}s: {intent.status}: {intent.reason}")

    def settle_intents(self) -> None:
        """Settle reassignments whose znode has gone, before another one changes the same assignments."""
        open_ones = [
            i for i in self.ctx.intents if i.kind == "reassignment" and i.status == "started" and i.exit_code == 0
        ]
        if open_ones and not self.ctx.exists(znodes.ReassignPartitionsZNode.path()):
            for intent in open_ones:
                self.settle_reassignment(intent)

    def log_client_warnings(self, partitions: Sequence[tuple[str, int]], last: int = 5) -> None:
        """The producers' client's last warnings about each of `partitions` (why their acks stopped)."""
        path = self.ctx.state_dir / KAFKA_PYTHON_LOG
        lines = path.read_text(errors="replace").splitlines() if path.exists() else []
        for topic, partition in partitions:
            needles = (f"topic='{topic}', partition={partition})", f"{topic}-{partition} ", f"{topic}-{partition}:")
            about = [line for line in lines if any(n in line for n in needles)]
            self.ctx.log(f"kafka-python on {topic}-{partition}: {len(about)} warnings ({path})")
            for line in about[-last:]:
                self.ctx.log(f"  {line[:400]}")

    def log_metadata_views(self, partitions: Sequence[tuple[str, int]]) -> None:
        """ZooKeeper's state of each of `partitions` beside each broker's Metadata answer for it (a producer sent
        to a stale leader goes round NOT_LEADER and Metadata for as long as a cache stays stale), then each
        broker's last ISR lines for it: the leader's in-memory ISR decides acks=all, and only its log tells it."""
        states, answers = self.ctx.metadata_views(partitions)
        for tp in partitions:
            views = []
            for broker, answer in answers.items():
                if isinstance(answer, str):
                    view = answer
                elif (info := answer.get(tp)) is None:
                    view = "none"
                else:
                    view = (
                        f"leader {info.leader} epoch {info.leader_epoch} isr {list(info.isr)} error {info.error_code}"
                    )
                views.append(f"broker {broker}: {view}")
            self.ctx.log(f"{tp[0]}-{tp[1]}: ZooKeeper {states.get(tp)}; " + "; ".join(views))
            needle = f"[Partition {tp[0]}-{tp[1]} "
            for broker in self.ctx.local.broker_ids():
                for line in [line for line in self.ctx.server_lines(broker) if needle in line][-3:]:
                    self.ctx.log(f"  broker {broker}: {line[:300]}")

    def finish_traffic(self) -> None:
        partitions = self.ctx.surviving_partitions()

        def wait_isrs_full() -> None:
            """Raises TimeoutError once the heal timeout has passed."""
            wait_for(
                lambda: self.ctx.isrs_full(partitions),
                self.ctx.config.heal_timeout_s,
                interval_s=POLL_S,
                what="full ISRs",
            )

        started = time.monotonic()
        try:
            wait_isrs_full()
            self.ctx.log(f"every ISR full after {time.monotonic() - started:.1f}s")
        except TimeoutError:
            states = self.ctx.partition_states(partitions)
            self.ctx.log(f"ISRs not full within {self.ctx.config.heal_timeout_s:.0f}s: {states}")
            self.ctx.checks["full ISRs"] = (False, f"not full within {self.ctx.config.heal_timeout_s:.0f}s: {states}")
        # the healed cluster must take writes again on every partition
        marks = {t: len(self.ctx.producers[t].acked) for t in self.ctx.surviving}

        def every_partition_acked() -> bool:
            return all(
                len({a.partition for a in self.ctx.producers[t].acked[marks[t] :]}) == self.ctx.config.partitions
                for t in self.ctx.surviving
            )

        started = time.monotonic()
        try:
            wait_for(every_partition_acked, 60, interval_s=POLL_S, what="an ack on every partition after healing")
            self.ctx.checks["acks after healing"] = (True, f"every partition within {time.monotonic() - started:.1f}s")
        except TimeoutError:
            acked_since = {
                t: sorted({a.partition for a in self.ctx.producers[t].acked[marks[t] :]}) for t in self.ctx.surviving
            }
            self.ctx.checks["acks after healing"] = (False, f"partitions acked within 60 s, per topic: {acked_since}")
            stuck = [
                (t, p) for t, acked in acked_since.items() for p in range(self.ctx.config.partitions) if p not in acked
            ]
            self.log_client_warnings(stuck)
            for topic in sorted({t for t, _ in stuck}):
                partitions = [p for t, p in stuck if t == topic]
                self.ctx.log(f"producer of {topic}: {self.ctx.producers[topic].client_state(partitions)}")
            self.log_metadata_views(stuck)
        self.ctx.log(f"acks after healing: {self.ctx.checks['acks after healing'][1]}")
        self.ctx.producer_stop = self.ctx.log.now()
        for worker in self.ctx.producers.values():
            worker.stop(flush_timeout_s=60)
        if self.ctx.consumer is not None:
            self.ctx.consumer.stop()
        problems = [f"producer of {t}: {w.error!r}" for t, w in self.ctx.producers.items() if w.error is not None]
        # a doomed topic's producer is stopped whenever its deletion comes, faults or not: what it had not
        # flushed by then was never acknowledged, and the topic goes, so only the survivors must flush
        deleted = set(self.ctx.deleted)
        problems += [
            f"producer of {t}: flush timed out"
            for t, w in self.ctx.producers.items()
            if w.unflushed and t not in deleted
        ]
        if self.ctx.consumer is not None and self.ctx.consumer.error is not None:
            problems.append(f"live consumer: {self.ctx.consumer.error!r}")
        self.ctx.checks["workload ran throughout"] = (
            not problems,
            "; ".join(problems) or "producers and the live consumer ran to the end",
        )
        longest = max(self.ctx.consumer_stalls, key=lambda s: s[1], default=None)
        self.ctx.checks["live consumer kept up"] = (
            longest is None or longest[1] <= LIVE_STALL_LIMIT_S,
            "never read nothing for 30 s while acks went on"
            if longest is None
            else f"{len(self.ctx.consumer_stalls)} stall(s) while acks went on, longest {longest[1]:.0f}s from "
            f"+{longest[0]:.0f}s (limit {LIVE_STALL_LIMIT_S:.0f}s)",
        )
        self.ctx.log("producers flushed, live consumer stopped")
        if "full ISRs" not in self.ctx.checks:
            try:
                wait_isrs_full()
                self.ctx.checks["full ISRs"] = (True, "every surviving partition's ISR is its replica set")
            except TimeoutError:
                self.ctx.checks["full ISRs"] = (
                    False,
                    f"not full after the producers stopped: {self.ctx.partition_states(partitions)}",
                )

    def verify(self) -> None:
        partitions = self.ctx.surviving_partitions()
        bootstrap = self.ctx.bootstrap()
        acked = [a for t in self.ctx.surviving for a in self.ctx.producers[t].acked]
        live = dict(self.ctx.consumer.seen) if self.ctx.consumer is not None else {}
        final, ends, reread = read_to_end(
            bootstrap, partitions, self.ctx.config.heal_timeout_s, self.ctx.librdkafka_settings()
        )
        self.ctx.log(f"read {sum(len(r) for r in final.values())} records to the high watermarks {ends}")
        verdict = check_records(acked, final, live, self.ctx.surviving)
        self.ctx.verdict_data = verdict
        self.ctx.consumed_per_topic, self.ctx.unacked_per_topic = count_per_topic(final, acked)
        end = self.ctx.producer_stop if self.ctx.producer_stop is not None else self.ctx.chaos_end
        self.ctx.unavailability = max_gaps(acked, partitions, 0.0, end)
        self.ctx.checks["no acked record lost"] = (
            not verdict.lost and not verdict.moved,
            f"{len(verdict.lost)} lost, {len(verdict.moved)} at another offset",
        )
        self.ctx.checks["no duplicate"] = (not verdict.duplicated, f"{len(verdict.duplicated)} values twice")
        self.ctx.checks["offsets contiguous"] = (
            not verdict.gaps,
            "; ".join(f"{t}-{p}: {w}" for t, p, w in verdict.gaps) or "0..HW-1",
        )
        conflicts = len(verdict.live_conflicts) + (len(self.ctx.consumer.reread_conflicts) if self.ctx.consumer else 0)
        self.ctx.checks["read records stay"] = (
            not conflicts,
            f"{verdict.live_read} read live, {conflicts} changed or gone since",
        )
        self.check_group_consumer(acked, ends)
        self.compare_replicas(partitions, final)
        self.run_replica_verification()

    def check_group_consumer(self, acked: Sequence[Ack], ends: dict[tuple[str, int], int]) -> None:
        """The group member that commits as it reads: once it has read to the high watermarks, every acked
        record was read, no partition jumped forward, and no re-read started before the last commit the
        coordinator acknowledged (across the coordinator failovers the faults caused)."""
        member = self.ctx.group_consumer
        if member is None:
            return
        if member.commits == 0 and not member.read():
            # a cluster without a group coordinator: the member never got an assignment
            member.stop()
            self.ctx.checks["group consumer read every acked record"] = (
                None,
                f"never assigned a partition (commit errors {dict(member.commit_errors) or 'none'})",
            )
            return
        surviving = {tp: end for tp, end in ends.items() if tp[0] in self.ctx.surviving}
        try:
            wait_for(lambda: member.caught_up(surviving), self.ctx.config.heal_timeout_s, interval_s=POLL_S,
                     what="the group consumer at the high watermarks")  # fmt: skip
        except TimeoutError:
            call = member.in_call
            where = f": in {call[0]}() for {time.monotonic() - call[1]:.1f}s" if call is not None else ""
            self.ctx.log(f"the group consumer did not reach the high watermarks in time{where}")
        member.stop()
        unread = unread_acks(acked, member.read(), self.ctx.surviving)
        problems = [f"{len(unread)} acked records never read (first {unread[:3]})"] if unread else []
        problems += [f"{len(member.skips)} jumps forward (first {member.skips[:3]})"] if member.skips else []
        if member.error is not None:
            problems.append(f"consumer error {member.error!r}")
        self.ctx.checks["group consumer read every acked record"] = (
            not problems,
            "; ".join(problems)
            or f"{sum(len(o) for o in member.read().values())} offsets read, {member.commits} commits "
            f"({dict(member.commit_errors) or 'no'} commit errors), {member.rereads} re-reads after a commit",
        )
        self.ctx.checks["group re-reads only after the last commit"] = (
            not member.rewinds,
            f"{len(member.rewinds)} re-reads from before the last acknowledged commit"
            + (f" (first {member.rewinds[:3]})" if member.rewinds else ""),
        )
        self.ctx.log(f"group consumer: {self.ctx.checks['group consumer read every acked record'][1]}")

    def compare_replicas(
        self, partitions: Sequence[tuple[str, int]], final: dict[tuple[str, int], dict[int, bytes]]
    ) -> None:
        replicas = self.ctx.assignments(self.ctx.surviving)
        deadline = time.monotonic() + self.ctx.config.heal_timeout_s
        differences: dict[tuple[str, int], str] = {}
        with self.ctx.kafka_client(self.ctx.bootstrap(), "chaos-replica-compare", 15000) as client:
            pending = list(partitions)
            while pending:
                differences.clear()
                for tp in pending:
                    reference = sorted(final[tp].items())
                    for broker in replicas[tp]:
                        try:
                            copy, high_watermark = fetch_replica(client, broker, *tp)
                        except Exception as error:  # noqa: BLE001 - a broker not answering yet: compared again
                            differences[tp] = f"broker {broker}: {type(error).__name__}: {error}"
                            break
                        if copy != reference:
                            first = next(
                                (i for i, (a, b) in enumerate(zip(copy, reference, strict=False)) if a != b),
                                min(len(copy), len(reference)),
                            )
                            differences[tp] = (
                                f"broker {broker} holds {len(copy)} records (HW {high_watermark}), the log read holds "
                                f"{len(reference)}; first difference at index {first}"
                            )
                            break
                pending = [tp for tp in pending if tp in differences]
                if not pending or time.monotonic() > deadline:
                    break
                time.sleep(1.0)
        total = sum(len(replicas[tp]) for tp in partitions)
        self.ctx.checks["replicas identical"] = (
            not differences,
            f"{total} replicas of {len(partitions)} partitions fetched from their brokers"
            + ("" if not differences else ": " + "; ".join(f"{t}-{p}: {d}" for (t, p), d in differences.items())),
        )
        self.ctx.log(f"replica comparison: {self.ctx.checks['replicas identical'][1]}")

    def run_replica_verification(self) -> None:
        code, output = self.ctx.cli("replica-verification", "--help", timeout_s=60)
        if code != 0:
            self.ctx.checks["replica-verification --once"] = (None, "command not available")
            return
        pattern = "|".join(self.ctx.surviving)
        code, output = self.ctx.cli(
            "replica-verification", "--broker-list", self.ctx.bootstrap(), "--topic-white-list", pattern,
            *self.ctx.command_config(), "--once", "--time", "-2", timeout_s=self.ctx.config.heal_timeout_s,
        )  # fmt: skip
        last = last_line(output)
        self.ctx.checks["replica-verification --once"] = (code == 0, f"exit {code}: {last}")
        (self.ctx.state_dir / "replica-verification.out").write_text(output + "\n")
        self.ctx.log(f"replica-verification --once exited {code}: {last}")

    def merge_state_change_logs(self) -> None:
        files = sorted(str(p) for p in (self.ctx.state_dir / "cluster" / "brokers").glob("*/logs/state-change.log*"))
        if not files:
            self.ctx.checks["timeline"] = (None, "no state-change logs")
            return
        target = self.ctx.state_dir / "state-change-timeline.log"
        code, output = self.ctx.cli(
            "state-change-log-merger", "--logs", ",".join(files), "--output-path", str(target), timeout_s=300
        )
        lines = len(target.read_text(errors="replace").splitlines()) if target.exists() else 0
        self.ctx.checks["timeline"] = (
            None,
            f"{target} ({lines} lines from {len(files)} files)"
            if code == 0
            else f"merger exit {code}: {output[-300:]}",
        )
        verdict = self.ctx.verdict_data
        if verdict is None:
            return
        broken = sorted(
            {(t, p) for t, p, *_ in verdict.lost}
            | {(t, p) for t, p, *_ in verdict.moved}
            | {(t, p) for t, p, *_ in verdict.live_conflicts}
        )
        for topic, partition in broken:
            path = self.ctx.state_dir / f"timeline-{topic}-{partition}.log"
            self.ctx.cli(
                "state-change-log-merger", "--logs", ",".join(files), "--topic", topic, "--partitions", str(partition),
                "--output-path", str(path), timeout_s=300,
            )  # fmt: skip
            self.ctx.log(f"timeline of {topic}-{partition}: {path}")

    def verdict(self) -> int:
        data = self.ctx.verdict_data
        data_bad = data is None or not data.ok or self.ctx.checks.get("replicas identical", (True, ""))[0] is False
        if self.ctx.checks.get("replica-verification --once", (None, ""))[0] is False:
            data_bad = True
        for name in ("group consumer read every acked record", "group re-reads only after the last commit"):
            data_bad = data_bad or self.ctx.checks.get(name, (None, ""))[0] is False
        other_bad = bool(self.ctx.anomalies) or any(ok is False for name, (ok, _) in self.ctx.checks.items())
        if data_bad:
            return EXIT_DATA
        return EXIT_CHECKS if other_bad else EXIT_PASS
