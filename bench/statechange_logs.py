"""Realistic synthetic state-change logs: N brokers x M entries, each broker's file sorted by time.

Each broker writes in one Kafka version's shapes (kafka-reference.md §4: 0.8 unprefixed `[t,p]`, 1.1 and
2.8 prefixed `t-p`), broker 0 also as the controller; about one entry in 2,000 is an ERROR with a stack
trace. With `rotate_hourly`, a broker's log is cut into `state-change.log.yyyy-MM-dd-HH` files plus the
live `state-change.log`, as log4j's DailyRollingFileAppender leaves them. Deterministic for a seed.

Run as a script to write a fleet: `python bench/statechange_logs.py DIR --brokers 100 --entries 100000`.
"""

from __future__ import annotations

import argparse
import os
import random
from collections.abc import Iterator
from datetime import datetime, timedelta

from kafkaops.cluster.common import log4j

VERSIONS = ("0.8", "1.1", "2.8")
TOPICS = ("orders", "payments-v2", "audit.log", "__consumer_offsets", "user-events-eu-1")
STACK = (
    "kafka.common.StateChangeFailedException: Failed to elect leader for partition {tp} under strategy "
    "OfflinePartitionLeaderElectionStrategy(false)",
    "\tat kafka.controller.ZkPartitionStateMachine.$anonfun$doElectLeaderForPartitions$7"
    "(PartitionStateMachine.scala:430)",
    "\tat scala.collection.mutable.ResizableArray.foreach(ResizableArray.scala:62)",
    "\tat kafka.controller.ZkPartitionStateMachine.doElectLeaderForPartitions(PartitionStateMachine.scala:427)",
    "\tat kafka.controller.ZkPartitionStateMachine.electLeaderForPartitions(PartitionStateMachine.scala:334)",
    "\tat kafka.controller.KafkaController.process(KafkaController.scala:2375)",
    "\tat kafka.controller.ControllerEventManager$ControllerEventThread.doWork(ControllerEventManager.scala:137)",
)


def _message(version: str, broker: int, controller: bool, rng: random.Random) -> tuple[str, str]:
    """(level, message) of one entry in the given version's shapes."""
    topic = rng.choice(TOPICS)
    partition = rng.randrange(50)
    leader = rng.randrange(3)
    corr = rng.randrange(1_000_000)
    if version == "0.8":
        tp = f"[{topic},{partition}]"
        if controller:
            return "TRACE", (
                f"Controller {broker} epoch 7 sending become-leader LeaderAndIsr request "
                f"(Leader:{leader},ISR:0,1,2,LeaderEpoch:3,ControllerEpoch:7) with correlationId {corr} "
                f"to broker {leader} for partition {tp}"
            )
        return "TRACE", (
            f"Broker {broker} cached leader info (LeaderAndIsrInfo:(Leader:{leader},ISR:0,1,2,LeaderEpoch:3,"
            f"ControllerEpoch:7),ReplicationFactor:3),AllReplicas:0,1,2) for partition {tp} in response to "
            f"UpdateMetadata request sent by controller 0 epoch 7 with correlation id {corr}"
        )
    tp = f"{topic}-{partition}"
    level = "TRACE" if version == "1.1" else "INFO"
    if controller:
        return level, (
            f"[Controller id={broker} epoch=7] Changed partition {tp} from OfflinePartition to OnlinePartition "
            f"with state LeaderAndIsr(leader={leader}, leaderEpoch=4, isr=List(0, 1, 2), zkVersion=9)"
        )
    return level, (
        f"[Broker id={broker}] Handling LeaderAndIsr request correlationId {corr} from controller 0 epoch 7 "
        f"starting the become-follower transition for partition {tp} with leader {leader}"
    )


def broker_lines(broker: int, entries: int, start: datetime, seed: int) -> Iterator[tuple[datetime, str]]:
    """(time, line) of one broker's log, in time order (a stack trace is several lines, one time)."""
    rng = random.Random(seed * 100_003 + broker)
    version = VERSIONS[broker % len(VERSIONS)]
    moment = start
    for _ in range(entries):
        moment += timedelta(milliseconds=rng.randrange(0, 40))
        controller = broker == 0 and rng.random() < 0.5
        if rng.random() < 0.0005:
            tp = f"{rng.choice(TOPICS)}-{rng.randrange(50)}"
            line = (
                f"[{log4j.timestamp(moment)}] ERROR [Controller id={broker} epoch=7] Controller {broker} epoch 7 "
                f"failed to change state for partition {tp} from OfflinePartition to OnlinePartition "
                "(state.change.logger)"
            )
            yield moment, line
            for trace in STACK:
                yield moment, trace.format(tp=tp)
            continue
        level, message = _message(version, broker, controller, rng)
        yield moment, f"[{log4j.timestamp(moment)}] {level} {message} (state.change.logger)"


def write_fleet(
    directory: str,
    brokers: int,
    entries: int,
    *,
    rotate_hourly: bool = False,
    seed: int = 0,
    start: datetime = datetime(2024, 5, 1, 12, 0, 0),
) -> list[str]:
    """Write one log per broker (`broker-<id>/state-change.log*` when rotated, else
    `broker-<id>.state-change.log`); returns the paths written."""
    written: list[str] = []
    for broker in range(brokers):
        if rotate_hourly:
            base = os.path.join(directory, f"broker-{broker}")
            os.makedirs(base, exist_ok=True)
            written.extend(_write_rotated(os.path.join(base, "state-change.log"), broker, entries, start, seed))
        else:
            path = os.path.join(directory, f"broker-{broker}.state-change.log")
            with open(path, "w", encoding="utf-8") as out:
                out.writelines(line + "\n" for _, line in broker_lines(broker, entries, start, seed))
            written.append(path)
    return written


def _write_rotated(live: str, broker: int, entries: int, start: datetime, seed: int) -> list[str]:
    lines = list(broker_lines(broker, entries, start, seed))
    last_hour = lines[-1][0].strftime("%Y-%m-%d-%H") if lines else ""
    by_hour: dict[str, list[str]] = {}
    for moment, line in lines:
        by_hour.setdefault(moment.strftime("%Y-%m-%d-%H"), []).append(line)
    paths = []
    for hour, chunk in by_hour.items():
        path = live if hour == last_hour else f"{live}.{hour}"
        with open(path, "w", encoding="utf-8") as out:
            out.writelines(line + "\n" for line in chunk)
        paths.append(path)
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory")
    parser.add_argument("--brokers", type=int, default=20)
    parser.add_argument("--entries", type=int, default=200_000)
    parser.add_argument("--rotate-hourly", action="store_true")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    os.makedirs(args.directory, exist_ok=True)
    paths = write_fleet(args.directory, args.brokers, args.entries, rotate_hourly=args.rotate_hourly, seed=args.seed)
    print(f"wrote {len(paths)} files under {args.directory}")


if __name__ == "__main__":
    from kafkaops.cluster.local.signals import run_program  # Ctrl-C stops it, even inherited ignored

    run_program(main)
