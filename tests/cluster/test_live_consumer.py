"""The chaos runner's live consumer (`bench.chaos_runner.workload.LiveConsumer`), which the reassignment and
chaos tests read with, replacing a confluent-kafka consumer whose librdkafka main thread has stopped
(confluentinc/librdkafka#5476): it must read on from where it was, nothing skipped."""

from __future__ import annotations

import pytest

from bench.chaos_runner import workload
from kafkaops.admin import topics as admin_topics
from kafkaops.cluster.local.waiting import wait_for
from tests.cluster.clients_util import all_bootstraps, kafka_python_produce, make_records, wait_partitions

TOPIC = "read-on"


def test_a_live_consumer_without_statistics_is_replaced_and_reads_on(
    cluster, zk, monkeypatch: pytest.MonkeyPatch
) -> None:
    local = cluster(brokers=1)
    admin_topics.create_topic(zk, TOPIC, 2, 1, None, {})
    wait_partitions(zk, TOPIC, 2)
    first = kafka_python_produce(all_bootstraps(local), TOPIC, [*make_records(0, 10, "a"), *make_records(1, 10, "a")])
    assert not first.errors, first.errors[:3]
    # no statistics ever; a consumer counts as stuck only while WEDGED_AFTER_S is 0
    monkeypatch.setattr(workload, "STATISTICS_INTERVAL_MS", 3_600_000)
    monkeypatch.setattr(workload, "WEDGED_AFTER_S", 3600.0)
    reader = workload.LiveConsumer(all_bootstraps(local), [(TOPIC, 0), (TOPIC, 1)], group_id="read-on")
    try:
        wait_for(lambda: len(reader.read()) == 20, timeout_s=60)
        monkeypatch.setattr(workload, "WEDGED_AFTER_S", 0.0)
        wait_for(lambda: reader.restarts >= 1, timeout_s=30)
        monkeypatch.setattr(workload, "WEDGED_AFTER_S", 3600.0)
        # a replacement starts after the last offset read, not from the beginning
        assert [(tp.partition, tp.offset) for tp in reader._assignment()] == [(0, 10), (1, 10)]
        second = kafka_python_produce(
            all_bootstraps(local), TOPIC, [*make_records(0, 5, "b"), *make_records(1, 5, "b")]
        )
        assert not second.errors, second.errors[:3]
        wait_for(lambda: len(reader.read()) == 30, timeout_s=60)
    finally:
        reader.stop()
    assert reader.error is None
    assert not reader.reread_conflicts
    produced = {(r.partition, r.offset): r.value for r in [*first.acked, *second.acked]}
    assert {(p, o): v for (_, p, o), v in reader.read().items()} == produced
