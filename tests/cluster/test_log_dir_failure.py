"""A log dir that fills up takes only its own partitions offline: the broker reports it through
`/log_dir_event_notification`, the controller moves those leaderships to in-sync replicas, and the broker
keeps serving its other dir (Kafka's log-dir failure path)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from kafkaops.admin import topics as admin_topics
from kafkaops.admin.assignment import JavaRandom
from kafkaops.admin.kafka_client import KafkaClient
from kafkaops.cluster.common.errors import KafkaProtocolError
from kafkaops.cluster.local.waiting import wait_for
from kafkaops.cluster.zk.values import TopicPartition


@pytest.fixture
def small_disk(tmp_path: Path):
    """A 512 KiB tmpfs: a log dir that fills up after a few hundred KB."""
    mount = tmp_path / "small-disk"
    mount.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", str(mount)], check=False, capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _leader(zk, tp: TopicPartition) -> int | None:
    state = zk.get_partition_states([tp])[tp]
    return state.leader_and_isr.leader if state is not None else None


def test_a_full_log_dir_moves_only_its_partitions_away(small_disk, cluster, zk):  # disk torn down last
    local = cluster(brokers=2, **{"auto.leader.rebalance.enable": False})
    # Broker 1 gets a second log dir, first in the list: new logs go to the dir holding the fewest.
    local.stop_broker(1)
    config_path = local.broker_dir(1) / "broker.yaml"
    config = yaml.safe_load(config_path.read_text())
    config["log.dirs"] = f"{small_disk},{config['log.dirs']}"
    config_path.write_text(yaml.safe_dump(config, sort_keys=False))
    local.start_broker(1)
    admin_topics.create_topic(zk, "full", None, None, {0: [1, 0]}, {}, rng=JavaRandom(1))
    full0, ok0 = TopicPartition("full", 0), TopicPartition("ok", 0)
    wait_for(lambda: _leader(zk, full0) == 1)
    admin_topics.create_topic(zk, "ok", None, None, {0: [1, 0]}, {}, rng=JavaRandom(1))
    wait_for(lambda: _leader(zk, ok0) == 1)
    assert (small_disk / "full-0").is_dir() and not (small_disk / "ok-0").exists()

    bootstrap = ",".join(b.endpoint.split("//")[1] for b in local.status().brokers)
    acked: list[bytes] = []
    with KafkaClient(bootstrap, request_timeout_ms=10000, delivery_timeout_ms=60000) as client:
        wait_for(lambda: len(zk.get_partition_states([full0])[full0].leader_and_isr.isr) == 2, timeout_s=30)
        value = b"x" * 20_000
        for i in range(200):  # ~4 MB into a 512 KiB dir: the leader's append fails part way
            record = value + b"%04d" % i
            try:
                client.produce("full", 0, [(None, record, ())], acks=-1)
            except KafkaProtocolError:
                continue
            acked.append(record)
            if _leader(zk, full0) == 0 and len(acked) > 30:
                break
        # The controller moved full-0 to broker 0; broker 1 still leads and serves its healthy dir.
        wait_for(lambda: _leader(zk, full0) == 0, timeout_s=30)
        assert _leader(zk, ok0) == 1
        assert client.produce("ok", 0, [(None, b"still serving", ())], acks=-1) == 0
        assert local.broker_pid(1) is not None
        # Every acknowledged record is on the new leader.
        fetched: list[bytes] = []
        offset = 0
        while len(fetched) < len(acked):
            result = client.fetch("full", 0, offset, max_bytes=1 << 20, max_wait_ms=500)
            if not result.records:
                break
            fetched.extend(r.value for r in result.records)
            offset = result.next_offset
        assert set(acked) <= set(fetched)
    assert zk.get_children("/log_dir_event_notification") == []  # the controller consumed the report
