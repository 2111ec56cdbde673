"""A real cluster per test: broker processes under a temporary state dir, on the session's ZooKeeper."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from kafkaops.cluster.local.cluster import LocalCluster

FAST = {
    "zookeeper.session.timeout.ms": 6000,
    "controlled.shutdown.retry.backoff.ms": 300,
    "leader.imbalance.check.interval.seconds": 1,
    # librdkafka's consumers look up their group's coordinator even with assign(): a small offsets topic
    "offsets.topic.num.partitions": 4,
}


@pytest.fixture
def cluster(zk_connect: str, tmp_path: Path) -> Iterator[Callable[..., LocalCluster]]:
    """`cluster(brokers=3, **overrides)` starts brokers on this test's chroot; all are killed afterwards."""
    started: list[LocalCluster] = []

    def start(brokers: int = 3, racks: dict[int, str] | None = None, **overrides: Any) -> LocalCluster:
        local = LocalCluster(tmp_path / f"cluster-{len(started)}")
        started.append(local)
        local.up(brokers=brokers, zookeeper_connect=zk_connect, broker_overrides={**FAST, **overrides}, racks=racks)
        return local

    try:
        yield start
    finally:
        for local in started:
            for broker_id in local.broker_ids():
                local.stop_broker(broker_id, hard=True)


@contextmanager
def module_cluster(
    zookeeper_server: Any,
    tmp_path_factory: pytest.TempPathFactory,
    name: str,
    overrides: dict[str, Any],
    brokers: int = 3,
) -> Iterator[LocalCluster]:
    """A cluster a test module shares: `brokers` brokers with `overrides` on a chroot of its own of the
    session's ZooKeeper; every broker killed afterwards."""
    connect = f"{zookeeper_server.connect_string}/kafkaops-{name}-{time.time_ns()}"
    local = LocalCluster(tmp_path_factory.mktemp(f"{name}-cluster"))
    try:
        local.up(brokers=brokers, zookeeper_connect=connect, broker_overrides=overrides)
        yield local
    finally:
        for broker_id in local.broker_ids():
            local.stop_broker(broker_id, hard=True)
