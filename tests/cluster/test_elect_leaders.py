"""ElectLeaders (key 43) against real brokers: any broker forwards it to the controller, which runs Kafka's
`processReplicaLeaderElection` (preferred and unclean)."""

from __future__ import annotations

import os
import subprocess
import sys

from kafkaops.admin import topics as admin_topics
from kafkaops.admin.assignment import JavaRandom
from kafkaops.cluster.broker.network_client import send_request
from kafkaops.cluster.common import errors
from kafkaops.cluster.local.waiting import wait_for
from kafkaops.cluster.protocol.schemas import ApiKey
from kafkaops.cluster.zk.values import TopicPartition

NO_REBALANCE = {"auto.leader.rebalance.enable": False}


def _elect(local, broker_id: int, election_type: int, partitions: dict[str, list[int]] | None) -> dict:
    host, port = next(b for b in local.status().brokers if b.broker_id == broker_id).endpoint.split("//")[1].split(":")
    body = {
        "election_type": election_type,
        "topic_partitions": None
        if partitions is None
        else [{"topic": t, "partition_id": ps} for t, ps in partitions.items()],
        "timeout_ms": 30000,
    }
    response = send_request(host, int(port), ApiKey.ELECT_LEADERS, 1, body, "elect-test")
    return {
        TopicPartition(r["topic"], p["partition_id"]): p["error_code"]
        for r in response["replica_election_results"]
        for p in r["partition_result"]
    }


def _leader(zk, tp: TopicPartition) -> int | None:
    state = zk.get_partition_states([tp])[tp]
    return state.leader_and_isr.leader if state is not None else None


def only_an_out_of_sync_replica_alive(cluster, zk) -> tuple:  # type: ignore[no-untyped-def]
    """Topic u's partition 0 on two brokers other than the controller: the follower dies, the ISR shrinks to
    the leader, the leader dies, the follower comes back out of sync. (cluster, controller, follower, u-0)."""
    local = cluster(brokers=3, **NO_REBALANCE)
    # broker 0 as controller is a falsy id: wait on the status that names it
    controller = wait_for(lambda: (s := local.status()).controller_id is not None and s).controller_id
    first, second = (b for b in (0, 1, 2) if b != controller)  # the controller stays up throughout
    admin_topics.create_topic(zk, "u", None, None, {0: [first, second]}, {}, rng=JavaRandom(1))
    u0 = TopicPartition("u", 0)
    wait_for(lambda: _leader(zk, u0) == first)
    local.stop_broker(second, hard=True)
    wait_for(lambda: zk.get_partition_states([u0])[u0].leader_and_isr.isr == (first,), timeout_s=30)
    local.stop_broker(first, hard=True)
    wait_for(lambda: _leader(zk, u0) == -1, timeout_s=30)
    local.start_broker(second)
    return local, controller, second, u0


def test_preferred_election_through_a_broker_that_is_not_the_controller(cluster, zk):
    local = cluster(brokers=3, **NO_REBALANCE)
    admin_topics.create_topic(zk, "p", None, None, {0: [0, 1, 2], 1: [1, 2, 0]}, {}, rng=JavaRandom(1))
    p0, p1 = TopicPartition("p", 0), TopicPartition("p", 1)
    wait_for(lambda: _leader(zk, p0) == 0 and _leader(zk, p1) == 1)
    local.stop_broker(0)  # controlled shutdown moves leadership of p-0 away
    wait_for(lambda: _leader(zk, p0) not in (0, None))
    local.start_broker(0)
    wait_for(lambda: 0 in zk.get_partition_states([p0])[p0].leader_and_isr.isr, timeout_s=30)
    controller = local.status().controller_id
    other = next(b for b in (0, 1, 2) if b != controller)
    results = _elect(local, other, 0, {"p": [0, 1, 7]})
    assert results == {
        p0: errors.NONE,
        p1: errors.ElectionNotNeededError.code,
        TopicPartition("p", 7): errors.UnknownTopicOrPartitionError.code,
    }
    assert _leader(zk, p0) == 0
    # null = every partition: nothing left to do
    assert set(_elect(local, controller, 0, None).values()) == {errors.ElectionNotNeededError.code}


def test_unclean_election_brings_an_out_of_sync_replica_back_as_leader(cluster, zk):
    local, controller, second, u0 = only_an_out_of_sync_replica_alive(cluster, zk)
    # `second` is not in the ISR and unclean election is off for the topic: the partition stays offline.
    assert _leader(zk, u0) == -1
    assert _elect(local, second, 0, {"u": [0]}) == {u0: errors.PreferredLeaderNotAvailableError.code}
    assert _elect(local, second, 1, {"u": [0]}) == {u0: errors.NONE}
    assert _leader(zk, u0) == second
    assert _elect(local, second, 1, {"u": [0]}) == {u0: errors.ElectionNotNeededError.code}


def test_leader_election_command_through_bootstrap_server(cluster, zk, tmp_path):
    local = cluster(brokers=2, **NO_REBALANCE)
    admin_topics.create_topic(zk, "c", None, None, {0: [0, 1], 1: [1, 0]}, {}, rng=JavaRandom(1))
    c0 = TopicPartition("c", 0)
    wait_for(lambda: _leader(zk, c0) == 0)
    local.stop_broker(0)
    wait_for(lambda: _leader(zk, c0) == 1)
    local.start_broker(0)
    wait_for(lambda: 0 in zk.get_partition_states([c0])[c0].leader_and_isr.isr, timeout_s=30)
    bootstrap = local.status().brokers[1].endpoint.split("//")[1]
    env = {**os.environ, "KAFKAOPS_STATE_DIR": str(tmp_path / "state")}
    command = [sys.executable, "-m", "kafkaops.cli", "leader-election", "--bootstrap-server", bootstrap]
    done = subprocess.run(
        [*command, "--election-type", "preferred", "--all-topic-partitions"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert "Successfully completed leader election (PREFERRED) for partitions c-0" in done.stdout
    assert _leader(zk, c0) == 0
    again = subprocess.run(
        [*command, "--election-type", "unclean", "--topic", "c", "--partition", "1"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert again.returncode == 0, again.stderr
    assert "c-1" in again.stdout  # leader alive: no election needed
