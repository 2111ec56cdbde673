"""The run from start to end, and the command (`bench/chaos.py`): set up the ensemble, the brokers and the
topics; keep the workload going while the schedule's actions start on time; heal, check, report; and stop
every process it started, on error and on a signal too."""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any, TextIO

from kafkaops.cluster.local.signals import install_signal_handlers
from kafkaops.cluster.local.waiting import wait_for
from kafkaops.cluster.zk import znodes

from .checks import EXIT_INTERRUPTED, EXIT_PASS, EXIT_SETUP, RunChecks
from .context import POLL_S, ChaosContext, Interrupted
from .faults import FaultInjector
from .report import print_report, write_report
from .schedule import (
    ALL_KINDS,
    BROKER_KINDS,
    REPLICATION_FACTOR,
    TOPIC_CONFIG,
    ChaosConfig,
    PlannedAction,
    expand_kinds,
    plan_schedule,
)
from .workload import KAFKA_PYTHON_LOG, GroupCommitConsumer, LiveConsumer, ProducerWorker, kafka_python_log

TEARDOWN_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
CLIENTS_CLOSE_S = 20.0
"""Teardown waits this long for the producers and the consumer to close (their pending sends aborted)."""


@dataclass
class _Progress:
    """The chaos loop's progress line every 30 s, and the live consumer's stalls it notices."""

    next_at: float = 30.0
    last_read: int = -1
    last_acked: int = 0
    stall_since: float | None = None
    next_probe: float = 0.0


class ChaosRun:
    def __init__(self, config: ChaosConfig, state_dir: Path, echo: TextIO | None, consumer_debug: bool = False) -> None:
        self.ctx = ChaosContext(config, state_dir, echo, consumer_debug)
        self.injector = FaultInjector(self.ctx)
        self.checker = RunChecks(self.ctx)

    # -- setup --

    def setup(self) -> None:
        ctx = self.ctx
        config = ctx.config
        ctx.log(
            f"seed {config.seed}, duration {config.duration_s:.0f}s, {config.brokers} brokers, "
            f"state dir {ctx.state_dir}"
        )
        ctx.ensemble.start(timeout_s=90)
        ctx.log(f"ZooKeeper ensemble {ctx.connect} serving: {ctx.ensemble.modes()}")
        overrides = {
            "zookeeper.session.timeout.ms": config.session_timeout_ms,
            "controlled.shutdown.retry.backoff.ms": 500,
            "leader.imbalance.check.interval.seconds": 30,
            "unclean.leader.election.enable": False,
            "auto.create.topics.enable": False,
            "min.insync.replicas": 2,
            "default.replication.factor": REPLICATION_FACTOR,
            "replica.lag.time.max.ms": 10000,
        }
        ctx.local.up(
            brokers=config.brokers,
            zookeeper_connect=ctx.connect,
            broker_overrides=overrides,
            timeout_s=120,
            security=config.security,
        )
        ctx.load_client_properties()
        status = ctx.local.status()
        ctx.log(
            f"cluster up: brokers {[b.broker_id for b in status.brokers]}, controller {status.controller_id}, "
            f"security {config.security}"
        )
        for topic in ctx.surviving + ctx.doomed:
            code, output = ctx.cli(
                "topics", "--zookeeper", ctx.connect, "--create", "--topic", topic,
                "--partitions", str(config.partitions), "--replication-factor", str(REPLICATION_FACTOR),
                *[arg for name, value in TOPIC_CONFIG.items() for arg in ("--config", f"{name}={value}")],
            )  # fmt: skip
            if code != 0:
                raise RuntimeError(f"creating {topic} failed ({code}): {output}")
        every = [(t, p) for t in ctx.surviving + ctx.doomed for p in range(config.partitions)]
        wait_for(lambda: ctx.isrs_full(every), 120, interval_s=POLL_S, what="every new partition led with a full ISR")
        ctx.log(f"topics {', '.join(ctx.surviving + ctx.doomed)} online (RF {REPLICATION_FACTOR}, {TOPIC_CONFIG})")

    # -- the chaos phase --

    def run_chaos(self) -> None:
        ctx = self.ctx
        self.start_workload()
        queue = list(ctx.schedule)
        deferred_since: dict[int, float] = {}
        next_health_check = 0.0
        progress = _Progress()
        end = ctx.config.duration_s
        while (now := ctx.log.now()) < end:
            for action in [a for a in queue if a.at_s <= now]:
                if self.can_start(action):
                    queue.remove(action)
                    self.launch(action)
                    continue
                first = deferred_since.setdefault(id(action), now)
                if now - first > max(30.0, ctx.config.fault_interval_s):
                    queue.remove(action)
                    ctx.skip(action.kind, f"its preconditions did not hold for {now - first:.0f}s")
            if now >= next_health_check:
                self.injector.check_health()
                self.checker.settle_intents()
                next_health_check = now + 2.0
            if now >= progress.next_at:
                self.log_progress(now, progress)
            time.sleep(0.1)
        for action in queue:
            ctx.skip(action.kind, f"planned at +{action.at_s:.0f}s, the chaos phase is over")
        ctx.chaos_end = ctx.log.now()
        if progress.stall_since is not None:
            ctx.consumer_stalls.append((progress.stall_since, ctx.chaos_end - progress.stall_since))
        self.end_episodes()

    def start_workload(self) -> None:
        """The chaos phase's clock starts, then the producers (every topic) and the live consumer (the
        surviving ones)."""
        ctx = self.ctx
        bootstrap = ctx.bootstrap()
        ctx.log.origin = time.monotonic()
        ctx.log(
            f"chaos phase starts: producers at {ctx.config.rate:.0f}/s per topic, live consumer, "
            f"{len(ctx.schedule)} actions planned"
        )
        kafka_python_log(ctx.state_dir / KAFKA_PYTHON_LOG)
        for topic in ctx.surviving + ctx.doomed:
            ctx.producers[topic] = ProducerWorker(
                topic,
                ctx.config.partitions,
                bootstrap,
                ctx.config.rate,
                ctx.log.now,
                self.send_refused,
                settings=ctx.kafka_python_settings(),
            )
        ctx.consumer = LiveConsumer(
            bootstrap,
            ctx.surviving_partitions(),
            ctx.state_dir / "live-consumer-debug.log" if ctx.consumer_debug else None,
            settings=ctx.librdkafka_settings(),
        )
        ctx.group_consumer = GroupCommitConsumer(
            bootstrap,
            ctx.surviving,
            settings=ctx.librdkafka_settings(),
            debug_log=ctx.state_dir / "group-consumer-debug.log" if ctx.consumer_debug else None,
        )

    def log_progress(self, now: float, progress: _Progress) -> None:
        ctx = self.ctx
        acked = sum(len(w.acked) for w in ctx.producers.values())
        read = len(ctx.consumer.seen) if ctx.consumer is not None else 0
        errors = dict(ctx.consumer.errors) if ctx.consumer is not None else {}
        with ctx.lock:
            held = sorted(ctx.impaired)
        ctx.log(
            f"progress: {acked} acked, {read} read live (consumer errors {errors or 'none'}), "
            f"brokers held by faults {held}"
        )
        if ctx.consumer is not None and read == progress.last_read and acked > progress.last_acked and now > 60:
            ctx.log(f"  the live consumer made no progress for 30 s: {ctx.consumer.partition_states()}")
            if progress.stall_since is None:
                progress.stall_since = now - 30.0
            if now >= progress.next_probe:
                self.probe_leaders("the live consumer is stalled")
                progress.next_probe = now + 300.0
        elif progress.stall_since is not None:
            ctx.consumer_stalls.append((progress.stall_since, now - progress.stall_since))
            ctx.log(f"  the live consumer progresses again after {now - progress.stall_since:.0f}s")
            progress.stall_since = None
        progress.last_read = read
        progress.last_acked = acked
        progress.next_at = now + 30.0

    def end_episodes(self) -> None:
        """Cut the running episodes' holds short and wait for them (up to the heal timeout)."""
        ctx = self.ctx
        running = [t.name for t in ctx.episodes if t.is_alive()]
        ctx.log(f"chaos phase over; episodes still running (their holds cut short): {running or 'none'}")
        ctx.ending.set()
        deadline = time.monotonic() + ctx.config.heal_timeout_s
        for thread in ctx.episodes:
            thread.join(max(0.0, deadline - time.monotonic()))
        stuck = [t.name for t in ctx.episodes if t.is_alive()]
        if stuck:
            ctx.anomalies.append(f"episodes still running {ctx.config.heal_timeout_s:.0f}s after the end: {stuck}")
            ctx.log(f"ANOMALY episodes still running: {stuck}")

    def send_refused(self, topic: str, error: BaseException) -> None:
        """The producer's send() refused a record: log it, and if its metadata lacked a partition, ask each
        broker which partitions of the topic its Metadata answer lists (a broker's partial cache)."""
        ctx = self.ctx
        ctx.log(f"producer of {topic}: send() refused: {type(error).__name__}: {error}")
        if not isinstance(error, ValueError):
            return
        for broker, endpoint in ctx.endpoints().items():
            try:
                with ctx.kafka_client(endpoint, "chaos-metadata-probe", 5000, retries=0) as c:
                    info = c.metadata([topic]).topics.get(topic)
            except Exception as problem:  # noqa: BLE001 - a broker down or frozen: said so
                ctx.log(f"  metadata probe of broker {broker}: {type(problem).__name__}: {problem}")
                continue
            listed = sorted(p.partition for p in info.partitions) if info is not None else None
            expected = list(range(ctx.config.partitions))
            ctx.log(f"  broker {broker} lists {topic} partitions {listed} (error {info.error_code if info else '-'})")
            if info is not None and info.error_code == 0 and listed != expected:
                message = (
                    f"broker {broker} answered Metadata for {topic} with partitions {listed}, not {expected}, "
                    f"at +{ctx.log.now():.1f}s"
                )
                with ctx.lock:
                    ctx.warnings.append(message)
                ctx.log(f"WARNING {message}")

    def probe_leaders(self, why: str) -> None:
        """Log the leader of every surviving partition as each broker's Metadata answer and ZooKeeper say
        (a client stuck on a leader no broker names is then told apart from a broker serving stale leaders)."""
        ctx = self.ctx
        states, answers = ctx.metadata_views(ctx.surviving_partitions())
        ctx.log(
            f"  leaders ({why}), ZooKeeper: "
            + ", ".join(f"{t}-{p}: {s.leader if s is not None else '?'}" for (t, p), s in sorted(states.items()))
        )
        for broker, answer in answers.items():
            if isinstance(answer, str):
                ctx.log(f"  leaders, broker {broker}'s Metadata: {answer}")
                continue
            shown = [
                f"{t}-{p}: {info.leader}" + (f" (error {info.error_code})" if info.error_code else "")
                for (t, p), info in sorted(answer.items())
            ]
            ctx.log(f"  leaders, broker {broker}'s Metadata: {', '.join(shown) or 'none'}")

    def can_start(self, action: PlannedAction) -> bool:
        ctx = self.ctx
        kind = action.kind
        if kind in BROKER_KINDS or kind in ("zombie_freeze", "session_expire"):
            return len(ctx.impaired) < ctx.config.max_impaired
        if kind == "zk_node_kill":
            return not ctx.zk_busy
        if kind == "reassignment":
            self.checker.settle_intents()
            registered = ctx.zk_call(lambda zk: zk.get_sorted_broker_ids())
            return len(registered) >= REPLICATION_FACTOR and not ctx.exists(znodes.ReassignPartitionsZNode.path())
        if kind == "preferred_election":
            return not ctx.exists(znodes.PreferredReplicaElectionZNode.path())
        return True

    def launch(self, action: PlannedAction) -> None:
        """Prepare `action` on this thread (pick and reserve its target), then run its episode on its own."""
        try:
            body = self.injector.prepare(action)
        except (Interrupted, KeyboardInterrupt):
            raise
        except Exception as error:  # noqa: BLE001 - one action failing must not end the run
            self.ctx.action_error(action.kind, error)
            return
        if body is not None:
            self.ctx.spawn(f"{action.kind}@{self.ctx.log.now():.0f}", body)

    # -- the end --

    def heal_and_check(self) -> None:
        """After the chaos phase: heal, settle the intents, finish the traffic, compare records and replicas."""
        self.injector.heal()
        self.checker.wait_intents()
        self.checker.finish_traffic()
        self.checker.verify()

    def teardown(self) -> None:
        """Stop every process this run started, whatever state it is in (frozen ones are resumed first).

        Episodes are told to stop first (they start no process once `closing` is set); the brokers are
        swept twice, in case one was being started as the flag went up. The clients are closed last, each
        with its pending sends aborted: a producer left open prints tracebacks at exit."""
        ctx = self.ctx
        ctx.closing.set()
        ctx.ending.set()
        for worker in ctx.producers.values():
            worker.abort(flush_timeout_s=2.0)
        if ctx.consumer is not None:
            ctx.consumer.abort()
        if ctx.group_consumer is not None:
            ctx.group_consumer.abort()
        deadline = time.monotonic() + 10
        for thread in ctx.episodes:
            thread.join(max(0.1, deadline - time.monotonic()))
        for sweep in range(2):
            if sweep:
                time.sleep(1.0)
            if ctx.local.config_file.exists():
                for broker in ctx.local.broker_ids():
                    pid = ctx.local.broker_pid(broker)
                    if pid is not None:
                        with contextlib.suppress(ProcessLookupError):
                            os.kill(pid, signal.SIGCONT)
                    with contextlib.suppress(Exception):
                        ctx.local.stop_broker(broker, hard=True, timeout_s=10)
            with contextlib.suppress(Exception):
                ctx.ensemble.stop(hard=True)
        if ctx.zk is not None:
            with contextlib.suppress(Exception):
                ctx.zk.close()
        deadline = time.monotonic() + CLIENTS_CLOSE_S
        for worker in ctx.producers.values():
            worker.join(max(0.1, deadline - time.monotonic()))
        if ctx.consumer is not None:
            ctx.consumer.join(max(0.1, deadline - time.monotonic()))
        if ctx.group_consumer is not None:
            ctx.group_consumer.join(max(0.1, deadline - time.monotonic()))
        ctx.log.close()


# --- the command -----------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Chaos runner: faults against a local cluster, then data checks.")
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--duration", type=float, default=300.0, help="seconds of chaos (default 300)")
    parser.add_argument("--brokers", type=int, default=3, choices=range(3, 6), metavar="3..5")
    parser.add_argument("--topics", type=int, default=2, help="surviving topics (default 2)")
    parser.add_argument("--partitions", type=int, default=3)
    parser.add_argument("--rate", type=float, default=100.0, help="records/s per topic (default 100)")
    parser.add_argument("--session-timeout-ms", type=int, default=6000, help="brokers' zookeeper.session.timeout.ms")
    parser.add_argument("--fault-interval", type=float, default=20.0, help="mean seconds between fault starts")
    parser.add_argument("--hold", type=float, default=20.0, help="mean seconds a shut-down broker stays down")
    parser.add_argument("--admin-every", type=float, default=600.0, help="seconds per round of admin actions")
    parser.add_argument(
        "--max-impaired",
        type=int,
        default=None,
        help="brokers down or frozen at once (default: 1 for 3 brokers, 2 above)",
    )
    parser.add_argument(
        "--faults",
        default="all",
        help=f"comma list of kinds (default all): {', '.join(ALL_KINDS)}; or a mode, a target, broker, admin",
    )
    parser.add_argument("--heal-timeout", type=float, default=240.0)
    parser.add_argument(
        "--clean-stop-timeout", type=float, default=60.0, help="seconds after SIGTERM before SIGKILL (default 60)"
    )
    parser.add_argument("--state-dir", type=Path, default=None, help="default: a new temporary directory (kept)")
    parser.add_argument("--keep-data", action="store_true", help="keep the partition logs after a passing run")
    parser.add_argument("--print-schedule", action="store_true", help="print the planned actions and exit")
    parser.add_argument(
        "--consumer-debug", action="store_true", help="librdkafka debug lines of both consumers to files"
    )
    parser.add_argument(
        "--security",
        default="plaintext",
        choices=("plaintext", "ssl", "sasl_plaintext", "sasl_ssl"),
        help="the cluster's `cluster up --security` mode: every listener, inter-broker included (default plaintext)",
    )
    parser.add_argument(
        "--quiet", action="store_true", help="only the summary on stdout (events still go to the log file)"
    )
    return parser.parse_args(argv)


def config_from_args(args: argparse.Namespace, kinds: tuple[str, ...]) -> ChaosConfig:
    return ChaosConfig(
        seed=args.seed,
        duration_s=args.duration,
        brokers=args.brokers,
        topics=args.topics,
        partitions=args.partitions,
        rate=args.rate,
        session_timeout_ms=args.session_timeout_ms,
        fault_interval_s=args.fault_interval,
        hold_s=args.hold,
        kinds=kinds,
        admin_every_s=args.admin_every,
        max_impaired=args.max_impaired if args.max_impaired is not None else (1 if args.brokers <= 3 else 2),
        heal_timeout_s=args.heal_timeout,
        clean_stop_timeout_s=args.clean_stop_timeout,
        security=args.security,
    )


def print_schedule(config: ChaosConfig) -> None:
    for action in plan_schedule(config):
        print(
            f"+{action.at_s:8.1f}s {action.kind:28s} hold {action.hold_s:5.1f}s bounces {action.bounces} "
            f"pick {action.pick:.3f}/{action.pick2:.3f}"
        )


def _interrupted(signum: int, _frame: FrameType | None) -> None:
    raise Interrupted(f"signal {signum}")


def own_signals() -> dict[signal.Signals, Any]:
    """Ctrl-C raises KeyboardInterrupt, also when SIGINT was inherited ignored (a background job of a
    non-interactive shell, nohup, CI); SIGTERM and SIGHUP end the run as Ctrl-C does. Returns the handlers
    they replace."""
    previous = {sig: signal.getsignal(sig) for sig in TEARDOWN_SIGNALS}
    install_signal_handlers()
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _interrupted)
    return previous


@contextlib.contextmanager
def signals_ignored() -> Iterator[None]:
    """A second Ctrl-C must not cut the teardown short and leave processes behind."""
    previous = {sig: signal.signal(sig, signal.SIG_IGN) for sig in TEARDOWN_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def main(argv: Sequence[str] | None = None) -> int:
    """Exit codes: 0 all checks passed, 1 data, 2 other checks, 3 setup, 130 interrupted (the package's
    docstring says which is which)."""
    previous = own_signals()
    try:
        return run_command(parse_args(argv))
    except (Interrupted, KeyboardInterrupt):
        return EXIT_INTERRUPTED  # before the run started
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def run_command(args: argparse.Namespace) -> int:
    try:
        kinds = expand_kinds(args.faults)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_SETUP
    config = config_from_args(args, kinds)
    if args.print_schedule:
        print_schedule(config)
        return EXIT_PASS
    state_dir = args.state_dir or Path(tempfile.mkdtemp(prefix=f"kafkaops-chaos-{args.seed}-"))
    state_dir.mkdir(parents=True, exist_ok=True)
    run = ChaosRun(config, state_dir, None if args.quiet else sys.stdout, args.consumer_debug)
    ctx = run.ctx
    code = EXIT_SETUP
    try:
        try:
            run.setup()
        except (Interrupted, KeyboardInterrupt):
            raise
        except Exception as error:  # noqa: BLE001 - reported, then everything is stopped
            ctx.log(f"setup failed: {type(error).__name__}: {error}\n{traceback.format_exc()}")
            ctx.action_errors.append(f"setup: {error}")
            return EXIT_SETUP
        try:
            run.run_chaos()
            run.heal_and_check()
        except (Interrupted, KeyboardInterrupt):
            raise
        except Exception as error:  # noqa: BLE001 - reported as a failed check, after what could be checked
            ctx.log(f"the run broke off: {type(error).__name__}: {error}\n{traceback.format_exc()}")
            ctx.checks["run completed"] = (False, f"{type(error).__name__}: {error}")
        run.checker.merge_state_change_logs()
        code = run.checker.verdict()
        write_report(ctx, code)
        print_report(ctx, code, sys.stdout)
        return code
    except (Interrupted, KeyboardInterrupt) as error:
        code = EXIT_INTERRUPTED
        with contextlib.suppress(Exception):
            ctx.log(f"interrupted ({str(error) or 'Ctrl-C'}): stopping everything")
        return EXIT_INTERRUPTED
    finally:
        with signals_ignored():
            with contextlib.suppress(Exception):
                ctx.log(f"stopping every process (exit {code})")
            run.teardown()
        if code == EXIT_PASS and not args.keep_data:
            for data in (state_dir / "cluster" / "brokers").glob("*/data"):
                shutil.rmtree(data, ignore_errors=True)
