"""A short chaos run in CI: bench/chaos.py (the package bench/chaos_runner/) with a fixed seed for 50 s of
faults (under 2 minutes in all).

The runner starts its own 3-node ZooKeeper ensemble and 3 brokers, produces with acks=all to RF-3 topics
(min.insync.replicas=2, unclean election off) while a consumer reads, and hits the cluster with a few
faults of each broker type — the leader of a partition and the controller, each cleanly and hard, shut
down and bounced — plus a ZooKeeper node killed, a broker's session ended from outside, a leader frozen
past its session timeout, and a reassignment, a preferred election and a topic deletion in the middle.

Timeouts are generous (a loaded 2-core machine), the data checks are not: every acknowledged record
exactly once at its offset, nothing a consumer read gone afterwards, every replica identical, every
intent completed. The runner stops everything it started; the test kills whatever a pid file under its
state dir still names, in case the runner itself was killed. Ctrl-C stops the runner whatever signal
dispositions it inherited: the test starts it with SIGINT ignored, as a background job of a shell is.

The same short run again with `--security sasl_ssl` (issue 17): every listener, inter-broker included,
SASL_SSL with SCRAM-SHA-512, every client of the run logging in with the cluster's client.properties.

The pure parts of the runner (schedule, record checks, unavailability) are tested here too.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from bench.chaos_runner.checks import check_records, max_gaps
from bench.chaos_runner.schedule import ADMIN_KINDS, ALL_KINDS, FAULT_KINDS, ChaosConfig, expand_kinds, plan_schedule
from bench.chaos_runner.workload import Ack, kafka_python_settings, librdkafka_settings
from kafkaops.admin.configs import load_properties
from kafkaops.cluster.local import processes
from tests.conftest import start_with_sigint_ignored

REPO = Path(__file__).resolve().parents[2]
RUNNER = REPO / "bench" / "chaos.py"
SEED = 18
"""Its schedule starts with the four broker faults, then a session ended, a ZooKeeper node killed, a zombie."""
DURATION_S = 50
CI_KINDS = (
    "hard_bounce:controller",
    "clean_bounce:leader",
    "hard_shutdown:leader",
    "clean_shutdown:controller",
    "zk_node_kill",
    "session_expire",
    "zombie_freeze",
)
RUN_TIMEOUT_S = 420


def _pid_files(state_dir: Path) -> list[Path]:
    """The pid files of the brokers and the ZooKeeper nodes a run started under `state_dir`."""
    return [*state_dir.glob("cluster/brokers/*/broker.pid"), *state_dir.glob("zookeeper-*/zookeeper.pid")]


def _kill_leftovers(state_dir: Path) -> list[int]:
    """SIGCONT then SIGKILL every live process a pid file under `state_dir` names; returns their pids."""
    killed = []
    for pid_file in _pid_files(state_dir):
        pid = processes.read_pid(pid_file)
        if pid is None:
            continue
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGCONT)
        with contextlib.suppress(OSError):
            processes.stop(pid, signal.SIGKILL, timeout_s=10)
        killed.append(pid)
    return killed


# --- the run ---------------------------------------------------------------------------------------------


def _short_run(state_dir: Path, *extra: str) -> tuple[dict[str, Any], str, int]:
    """The short run (CI's settings) with `extra` options: its report, the tail of its output, its exit code.
    Whatever it left running is killed, and the test fails on it."""
    command = [
        sys.executable,
        str(RUNNER),
        "--seed", str(SEED),
        "--duration", str(DURATION_S),
        "--brokers", "3",
        "--fault-interval", "5",
        "--hold", "5",
        "--admin-every", str(DURATION_S),
        "--faults", ",".join([*CI_KINDS, "admin"]),
        "--clean-stop-timeout", "15",
        "--max-impaired", "2",
        "--state-dir", str(state_dir),
        *extra,
    ]  # fmt: skip
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=RUN_TIMEOUT_S, cwd=REPO, check=False)
    finally:
        leftovers = _kill_leftovers(state_dir)
    output = done.stdout[-12000:] + done.stderr[-4000:]
    assert not leftovers, f"the runner left processes running: {leftovers}\n{output}"
    report_file = state_dir / "chaos-report.json"
    assert report_file.exists(), f"no report (exit {done.returncode}):\n{output}"
    return json.loads(report_file.read_text()), output, done.returncode


def _assert_passed(report: dict[str, Any], output: str, returncode: int) -> None:
    """The short run's verdict: every data check strict, every fault kind of CI_KINDS' families injected."""
    data = report["data"]
    assert data is not None, f"the run did not get to the data checks (exit {returncode}):\n{output}"
    # the data checks, strict
    assert data["lost"] == [] and data["moved"] == [], f"acknowledged records lost or moved:\n{output}"
    assert data["duplicated"] == [], f"values appended twice:\n{output}"
    assert data["gaps"] == [], f"offsets not contiguous:\n{output}"
    assert data["live_conflicts"] == [], f"records a consumer read are gone:\n{output}"
    assert data["acked"] > 1000, f"too little acknowledged to mean anything:\n{output}"
    checks = report["checks"]
    for name in ("replicas identical", "intents", "full ISRs", "acks after healing", "workload ran throughout"):
        assert checks[name]["ok"], f"{name}: {checks[name]['detail']}\n{output}"
    assert checks["replica-verification --once"]["ok"] is not False, f"replica-verification disagrees:\n{output}"
    assert report["anomalies"] == [], f"brokers misbehaved: {report['anomalies']}\n{output}"
    assert returncode == 0, f"exit {returncode}:\n{output}"
    # the faults happened: both broker types, hard and clean, and the ZooKeeper-side ones
    injected = report["injected"]
    broker_faults = {kind: n for kind, n in injected.items() if ":" in kind}
    assert sum(broker_faults.values()) >= 3, f"only {broker_faults} broker faults:\n{output}"
    assert {kind.split(":")[1] for kind in broker_faults} == {"leader", "controller"}, f"{injected}\n{output}"
    assert sum(injected.get(kind, 0) for kind in ("zk_node_kill", "session_expire", "zombie_freeze")) >= 2, (
        f"{injected}\n{output}"
    )
    assert injected.get("preferred_election") == 1 and injected.get("topic_deletion") == 1, f"{injected}\n{output}"
    # a reassignment waits for every broker to be registered (Kafka refuses a plan naming a dead one)
    assert injected.get("reassignment", 0) + report["skipped"].get("reassignment", 0) == 1, f"{injected}\n{output}"


@pytest.mark.slow
def test_a_short_chaos_run_loses_nothing(tmp_path: Path) -> None:
    state_dir = tmp_path / "chaos"
    _assert_passed(*_short_run(state_dir))
    assert (state_dir / "state-change-timeline.log").stat().st_size > 0


@pytest.mark.slow
def test_a_short_chaos_run_with_every_listener_sasl_ssl_loses_nothing(tmp_path: Path) -> None:
    """The same run on a `--security sasl_ssl` cluster: the brokers replicate and send controller requests
    over SASL_SSL (SCRAM-SHA-512), the producers, consumers, probes and tools log in over TLS."""
    state_dir = tmp_path / "chaos"
    report, output, returncode = _short_run(state_dir, "--security", "sasl_ssl")
    cluster = state_dir / "cluster"
    properties = load_properties(cluster / "client.properties")
    assert properties["security.protocol"] == "SASL_SSL" and properties["sasl.mechanism"] == "SCRAM-SHA-512"
    for broker_yaml in cluster.glob("brokers/*/broker.yaml"):
        config = yaml.safe_load(broker_yaml.read_text())
        assert str(config["listeners"]).startswith("SASL_SSL://"), config["listeners"]
        assert config["inter.broker.listener.name"] == "SASL_SSL"
    _assert_passed(report, output, returncode)


@pytest.mark.slow
def test_ctrl_c_stops_every_process_the_runner_started(tmp_path: Path) -> None:
    state_dir = tmp_path / "chaos"
    command = [sys.executable, str(RUNNER), "--seed", "1", "--duration", "600", "--state-dir", str(state_dir)]
    # started with SIGINT ignored, as a background job of a non-interactive shell is
    runner = start_with_sigint_ignored(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=REPO)
    lines: list[str] = []
    try:
        assert runner.stdout is not None
        for line in runner.stdout:
            lines.append(line)
            if "chaos phase starts" in line:
                break
        assert any("chaos phase starts" in line for line in lines), "".join(lines[-30:])
        pids = [processes.read_pid(f) for f in _pid_files(state_dir)]
        assert len([p for p in pids if p is not None]) == 3 + 3, pids
        runner.send_signal(signal.SIGINT)
        rest, _ = runner.communicate(timeout=90)
        lines.append(rest)
        assert runner.returncode == 130, "".join(lines[-30:])
        assert not [p for p in pids if p is not None and processes.alive(p)], "processes outlived the runner"
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait(30)
        leftovers = _kill_leftovers(state_dir)
    assert not leftovers, f"the runner left {leftovers} running"
    assert "stopping every process (exit 130)" in "".join(lines)
    assert "Traceback" not in "".join(lines), "".join(lines[-60:])


# --- pure parts of the runner ----------------------------------------------------------------------------


def _config(**overrides: Any) -> ChaosConfig:
    return ChaosConfig(**{"seed": 3, "duration_s": 300.0, **overrides})


def test_the_schedule_is_a_function_of_the_seed() -> None:
    assert plan_schedule(_config()) == plan_schedule(_config())
    assert plan_schedule(_config()) != plan_schedule(_config(seed=4))


def test_the_schedule_deals_every_fault_kind_before_repeating_one() -> None:
    schedule = plan_schedule(_config(duration_s=1800.0, fault_interval_s=20.0))
    faults = [a.kind for a in schedule if a.kind in FAULT_KINDS]
    first_round = faults[: len(FAULT_KINDS)]
    assert sorted(first_round) == sorted(FAULT_KINDS)
    assert [a.at_s for a in schedule] == sorted(a.at_s for a in schedule)
    assert all(0 <= a.at_s <= 1800 for a in schedule)
    # one round of admin actions per admin_every_s, each in the middle of its round
    assert [a.kind for a in schedule if a.kind in ADMIN_KINDS].count("topic_deletion") == 3
    zombies = [a for a in schedule if a.kind == "zombie_freeze"]
    assert zombies and all(a.hold_s > 6000 / 1000 for a in zombies), "a zombie is frozen past its session timeout"


def test_expand_kinds() -> None:
    assert expand_kinds("hard_bounce") == ("hard_bounce:leader", "hard_bounce:controller", "hard_bounce:random")
    assert expand_kinds("controller,zk_node_kill")[-1] == "zk_node_kill"
    assert expand_kinds("all") == ALL_KINDS
    with pytest.raises(ValueError, match="unknown fault kind 'sigsegv'"):
        expand_kinds("sigsegv")


def _ack(partition: int, offset: int, value: str, at: float = 0.0) -> Ack:
    return Ack("t", partition, offset, value.encode(), at)


def test_check_records_finds_lost_moved_duplicated_and_read_then_gone() -> None:
    final = {("t", 0): {0: b"a", 1: b"b", 2: b"a"}, ("t", 1): {0: b"c", 1: b"x"}}
    acked = [_ack(0, 0, "a"), _ack(0, 1, "b"), _ack(1, 0, "d"), _ack(1, 2, "x")]
    live = {("t", 1, 0): b"c", ("t", 1, 1): b"y"}
    verdict = check_records(acked, final, live, ["t"])
    assert verdict.acked == 4 and verdict.consumed == 5
    assert verdict.lost == [("t", 1, 0, "d", "c")]
    assert verdict.moved == [("t", 1, 2, 1, "x")]
    assert verdict.duplicated == [("a", [(0, 0), (0, 2)])]
    assert verdict.live_conflicts == [("t", 1, 1, "y", "x")]
    assert not verdict.ok


def test_check_records_passes_a_clean_log_and_ignores_other_topics() -> None:
    final = {("t", 0): {0: b"a", 1: b"b"}, ("gone", 0): {0: b"z"}}
    verdict = check_records([_ack(0, 0, "a"), _ack(0, 1, "b")], final, {("t", 0, 1): b"b"}, ["t"])
    assert verdict.ok and verdict.consumed == 2 and verdict.live_read == 1 and verdict.unacked_present == 0


def test_check_records_reports_offset_gaps() -> None:
    verdict = check_records([], {("t", 0): {0: b"a", 2: b"c"}}, {}, ["t"])
    assert verdict.gaps == [("t", 0, "offsets 0..2 with 2 records")]


def test_max_gaps_counts_the_edges_of_the_window() -> None:
    acks = [_ack(0, 0, "a", 1.0), _ack(0, 1, "b", 2.0), _ack(0, 2, "c", 7.5), _ack(1, 0, "d", 9.0)]
    gaps = max_gaps(acks, [("t", 0), ("t", 1), ("t", 2)], 0.0, 10.0)
    assert gaps[("t", 0)] == (5.5, 2.0)
    assert gaps[("t", 1)] == (9.0, 0.0)
    assert gaps[("t", 2)] == (10.0, 0.0)


def test_client_settings_follow_the_client_properties() -> None:
    properties = {
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.jaas.config": 'org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" '
        'password="secret";',
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": "/state/ssl/ca.pem",
    }
    assert librdkafka_settings(properties) == {
        "security.protocol": "SASL_SSL",
        "ssl.ca.location": "/state/ssl/ca.pem",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": "admin",
        "sasl.password": "secret",
    }
    assert kafka_python_settings(properties) == {
        "security_protocol": "SASL_SSL",
        "ssl_cafile": "/state/ssl/ca.pem",
        "sasl_mechanism": "SCRAM-SHA-512",
        "sasl_plain_username": "admin",
        "sasl_plain_password": "secret",
    }
    assert librdkafka_settings({}) == {} and kafka_python_settings({"security.protocol": "PLAINTEXT"}) == {}
