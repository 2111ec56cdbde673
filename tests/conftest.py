"""Fixtures shared by every test: one real ZooKeeper per test session, a fresh chroot per test."""

from __future__ import annotations

import os
import signal
import subprocess
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from kafkaops.cluster.local.standin import register_standin_brokers
from kafkaops.cluster.local.zookeeper import LocalZooKeeper, free_port
from kafkaops.cluster.zk.client import KafkaZkClient

# Property tests check results, never time: on 2 loaded cores an example may take longer than hypothesis'
# 200 ms default deadline, which would fail a correct test one run in a few (a test's own settings win).
settings.register_profile("kafkaops", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("kafkaops")

# Markers by directory, so that `pytest -m "not slow"` is the fast suite (pure logic, and the tools
# against one real ZooKeeper): tests that start broker processes or a Spark session are slow.
_DIRECTORY_MARKERS = {"cluster": ("slow",), "spark": ("slow", "spark")}


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups (`--dist loadgroup`)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    tests_dir = Path(__file__).parent
    for item in items:
        if not item.path.is_relative_to(tests_dir):
            continue
        relative = item.path.relative_to(tests_dir)
        for marker in _DIRECTORY_MARKERS.get(relative.parts[0], ()):
            item.add_marker(marker)
        # Under `pytest -n 2 --dist loadgroup` (the README's command) the tests that start broker processes run
        # one at a time on one worker, as timing-bound as they were alone (two clusters at once on 2 cores
        # made session timeouts and leader moves race), while the other worker runs the rest, a file's tests
        # together; the Spark tests share one worker's Spark session.
        if not any(item.iter_markers("xdist_group")):
            group = relative.parts[0] if relative.parts[0] in ("cluster", "spark") else str(relative)
            item.add_marker(pytest.mark.xdist_group(group))


@pytest.fixture(scope="session")
def zookeeper_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalZooKeeper]:
    server = LocalZooKeeper(state_dir=tmp_path_factory.mktemp("zk-state"), port=free_port())
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def zk_connect(zookeeper_server: LocalZooKeeper) -> str:
    """A connect string with a chroot of this test's own."""
    return f"{zookeeper_server.connect_string}/kafkaops-test-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def zk(zk_connect: str) -> Iterator[KafkaZkClient]:
    client = KafkaZkClient(zk_connect)
    try:
        yield client
    finally:
        client.close()


@pytest.fixture
def brokers(zk_connect: str) -> Iterator[Callable[..., KafkaZkClient]]:
    """`brokers([0, 1, 2], racks={...})` registers stand-in brokers for the rest of the test."""
    sessions: list[KafkaZkClient] = []

    def register(ids: list[int], racks: dict[int, str] | None = None) -> KafkaZkClient:
        session = KafkaZkClient(zk_connect)
        sessions.append(session)
        register_standin_brokers(session, ids, racks)
        return session

    try:
        yield register
    finally:
        for session in sessions:
            session.close()


@pytest.fixture
def cli_env(zk_connect: str, tmp_path: Path) -> dict[str, str]:
    """Environment for running `kafkaops` against this test's chroot, isolated from ~/.kafkaops."""
    env = dict(os.environ)
    env.update({"KAFKAOPS_ZOOKEEPER": zk_connect, "KAFKAOPS_STATE_DIR": str(tmp_path / "state")})
    env.pop("KAFKAOPS_CONFIG", None)
    return env


def start_with_sigint_ignored(command: list[str], **options: Any) -> subprocess.Popen[str]:
    """Start `command` with SIGINT ignored, as `nohup`, a non-interactive shell's `&` and some CI runners start
    their children (an ignored signal stays ignored across exec). A program stopping on Ctrl-C only through
    Python's default handler would then never stop: a test that sends SIGINT starts its child this way, so it
    checks the program's own handler whatever this test process inherited. Call it from the main thread."""
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        return subprocess.Popen(command, text=True, **options)
    finally:
        signal.signal(signal.SIGINT, previous)


def read_tree(client: KafkaZkClient, path: str = "/") -> dict[str, bytes]:
    """Every znode under `path` with its data: compare before and after to prove nothing changed."""
    tree: dict[str, bytes] = {}
    stack = [path]
    while stack:
        current = stack.pop()
        entry = client.get(current)
        if entry is None:
            continue
        tree[current] = entry[0]
        for child in client.get_children(current) or []:
            stack.append(f"{current.rstrip('/')}/{child}")
    return tree


@pytest.fixture
def zk_tree(zk: KafkaZkClient) -> Callable[[], dict[str, bytes]]:
    """`zk_tree()`: a snapshot of this test's chroot."""
    return lambda: read_tree(zk)


@pytest.fixture
def run_cli(cli_env: dict[str, str]) -> Callable[..., object]:
    """Run `kafkaops <args>` in-process against this test's chroot; returns the CliRunner result."""
    from typer.testing import CliRunner

    from kafkaops.cli.app import app

    def run(*args: str, env: dict[str, str] | None = None) -> object:
        return CliRunner().invoke(app, list(args), env={**cli_env, **(env or {})}, catch_exceptions=False)

    return run
