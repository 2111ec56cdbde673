"""The installed `kafkaops` executable, run as a CI script would run it."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from kafkaops.cluster.local.cluster import LocalCluster
from kafkaops.cluster.local.zookeeper import LocalZooKeeper, free_port
from tests.conftest import start_with_sigint_ignored

KAFKAOPS = str(Path(sys.executable).parent / "kafkaops")


def run(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([KAFKAOPS, *args], env=env, capture_output=True, text=True, timeout=240, check=False)


def test_topics_and_configs_from_a_script(brokers, cli_env):
    brokers([0, 1])
    created = run("topics", "--create", "--topic", "ci", "--partitions", "2", "--replication-factor", "2", env=cli_env)
    assert (created.returncode, created.stdout, created.stderr) == (0, "Created topic ci.\n", "")
    altered = run("configs", "--alter", "--topic", "ci", "--add-config", "retention.ms=1", env=cli_env)
    assert altered.stdout == "Completed updating config for entity: topic 'ci'.\n"
    described = json.loads(run("topics", "--describe", "--topic", "ci", "--output", "json", env=cli_env).stdout)
    assert described[0]["configs"] == {"retention.ms": "1"}
    again = run("topics", "--create", "--topic", "ci", "--partitions", "2", "--replication-factor", "2", env=cli_env)
    assert again.returncode == 1
    assert again.stderr == "Error while executing topic command : Topic 'ci' already exists.\n"


def test_bad_flags_exit_1(cli_env):
    for args in (["topics", "--no-such-flag"], ["topics", "--create", "--partitions", "abc"], ["nosuchcommand"]):
        result = run(*args, env=cli_env)
        assert result.returncode == 1, args
        assert "Traceback" not in result.stderr


def test_local_zookeeper_lifecycle(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    state = ["--state-dir", str(tmp_path / "state")]
    port = free_port()
    server = LocalZooKeeper(tmp_path / "state", port)
    try:
        started = run("cluster", "zookeeper", "start", *state, "--port", str(port), env=env)
        assert started.returncode == 0, started.stderr
        assert started.stdout.startswith(f"Started ZooKeeper at 127.0.0.1:{port} (pid ")
        again = run("cluster", "zookeeper", "start", *state, env=env)
        assert again.stdout.startswith(f"Already running: ZooKeeper at 127.0.0.1:{port}")
        status = run("cluster", "zookeeper", "status", *state, env=env)
        assert status.returncode == 0 and "Mode: standalone" in status.stdout
        listed = run("topics", "--list", env={**env, "KAFKAOPS_STATE_DIR": str(tmp_path / "state")})
        assert (listed.returncode, listed.stdout) == (0, "")
        stopped = run("cluster", "zookeeper", "stop", *state, env=env)
        assert stopped.stdout == f"Stopped ZooKeeper at 127.0.0.1:{port}\n"
        assert run("cluster", "zookeeper", "status", *state, env=env).returncode == 1
    finally:
        server.stop()


DEMO_PARTITIONS = [f"clicks-{p}" for p in range(3)] + [f"orders-{p}" for p in range(6)]


def stopped(local: LocalCluster, broker_ids: range) -> bool:
    """Whether no broker of `broker_ids` and not the cluster's ZooKeeper runs; stops any that does, so a failing
    test leaves nothing behind."""
    running = [b for b in broker_ids if local.broker_pid(b) is not None]
    zookeeper = LocalZooKeeper.from_state_dir(local.state_dir)
    if running or zookeeper.pid() is not None:
        local.down()
        zookeeper.stop()
        return False
    return True


@pytest.mark.slow  # starts four broker processes
def test_demo_runs_end_to_end(tmp_path):
    """The README's main job, as a CI script runs it: a 3-broker cluster with data grows by a broker; a balanced
    plan executed under a throttle, verified until complete; replicas verified; preferred leaders elected; the
    records read back intact; everything the demo started stopped."""
    local = LocalCluster(tmp_path / "state" / "demo")
    try:
        demo = run("cluster", "demo", "--state-dir", str(tmp_path / "state"), env={"PATH": "/usr/bin:/bin"})
    finally:
        clean = stopped(local, range(4))
    assert demo.returncode == 0, demo.stdout + demo.stderr
    out = demo.stdout
    for expected in (
        "Created topic orders.\n",
        "Created topic clicks.\n",
        "5000 records sent, ",
        "$ kafkaops cluster add-broker --rack rack-d\nBroker 3 running (pid ",
        "--topics-to-move-json-file topics-to-move.json --broker-list 0,1,2,3 --generate\n"
        "Current partition replica assignment\n{",
        "\n\nProposed partition reassignment configuration\n{",
        "--reassignment-json-file plan.json --execute --throttle 1000000\nCurrent partition replica assignment\n",
        "The inter-broker throttle limit was set to 1000000 B/s\n"
        "Successfully started partition reassignments for " + ",".join(DEMO_PARTITIONS) + "\n",
        "--reassignment-json-file plan.json --verify --wait\n",
        "Status of partition reassignment:\n"
        + "".join(f"Reassignment of partition {tp} is complete.\n" for tp in DEMO_PARTITIONS),
        "Clearing broker-level throttles on brokers 0,1,2,3\nClearing topic-level throttles on topics clicks,orders\n",
        ": verification process is started.\n",
        "among 9 partitions\n",
        "--election-type preferred --all-topic-partitions\n",
        "Processed a total of 2000 messages\n",
        "# all 2000 records read back intact: every key and value as sent\n",
        "$ kafkaops cluster down\nCluster stopped\n",
    ):
        assert expected in out, expected
    assert ": max lag is 0 for partition " in out
    # every admin step speaks the Admin API to the broker named on its printed command line
    commands = [line for line in out.splitlines() if line.startswith("$ kafkaops ")]
    admin = [c for c in commands if c.split()[2] in ("topics", "reassign-partitions", "leader-election")]
    assert len(admin) == 7, commands
    assert all(" --bootstrap-server 127.0.0.1:" in c for c in admin), admin
    assert not any("--zookeeper" in c for c in commands), commands
    election = out.split("--all-topic-partitions\n")[1].split("\n\n")[0].splitlines()
    assert election and all(
        line.startswith(("Successfully completed leader election (PREFERRED) for partitions ", "Valid replica"))
        for line in election
    ), election
    # the balanced plan moved replicas onto the new broker, and their data with them
    plan = json.loads((local.state_dir / "ci" / "plan.json").read_text())
    moved = [f"{p['topic']}-{p['partition']}" for p in plan["partitions"] if 3 in p["replicas"]]
    assert moved, plan
    broker_3_logs = local.broker_dir(3) / "data"
    held = {d.name for d in broker_3_logs.rglob("*") if d.is_dir() and d.name in moved}
    assert held == set(moved), (held, moved)
    assert any(s.stat().st_size > 0 for s in broker_3_logs.rglob("*.log")), "no record reached broker 3"
    assert "Traceback" not in out + demo.stderr
    assert clean, "the demo left processes running"


@pytest.mark.slow  # starts four broker processes
def test_demo_stops_what_it_started_on_sigint(tmp_path):
    """Ctrl-C once the fourth broker runs: the demo stops all four brokers and its ZooKeeper, exit 130."""
    local = LocalCluster(tmp_path / "state" / "demo")
    demo = start_with_sigint_ignored(
        [KAFKAOPS, "cluster", "demo", "--state-dir", str(tmp_path / "state")],
        env={"PATH": "/usr/bin:/bin"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert demo.stdout is not None
        seen = ""
        while not (line := demo.stdout.readline()).startswith("Broker 3 running") and line:
            seen += line
        assert line, seen
        demo.send_signal(signal.SIGINT)
        out, err = demo.communicate(timeout=60)
    finally:
        if demo.poll() is None:
            demo.kill()
            demo.communicate()
        clean = stopped(local, range(4))
    assert demo.returncode == 130, out + err
    assert out.endswith("$ kafkaops cluster down\nCluster stopped\n\n"), out
    assert "Traceback" not in err, err
    assert clean, "the demo left processes running"
