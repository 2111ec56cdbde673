"""Client quotas enforced by real brokers, seen by real clients: a producer over its `producer_byte_rate`
is told `throttle_time_ms` > 0 in its Produce responses (librdkafka's throttle callback) and every record
still arrives; once the quota is deleted (`kafkaops configs --delete-config`, a change notification the
broker applies live) the same client id produces unthrottled."""

from __future__ import annotations

from typing import Any

from kafkaops.admin import topics as admin_topics
from kafkaops.admin.assignment import JavaRandom
from kafkaops.cluster.local.waiting import wait_for
from tests.cluster.clients_util import CLIENT_TIMEOUT_S, bootstrap_of, wait_partitions

CLIENT_ID = "quota-producer"
RECORDS = 60
RECORD_BYTES = 1024


def produce(bootstrap: str, topic: str) -> tuple[list[Any], list[float]]:
    """RECORDS records of RECORD_BYTES by a confluent-kafka producer with client.id CLIENT_ID; returns the
    delivery results (offsets or errors) and the throttle times its throttle callback reported (librdkafka
    gives the responses' throttle_time_ms in seconds)."""
    from confluent_kafka import Producer

    throttles: list[float] = []
    results: list[Any] = []
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "client.id": CLIENT_ID,
            "acks": "all",
            "linger.ms": 0,
            "batch.num.messages": 4,
            "message.timeout.ms": int(CLIENT_TIMEOUT_S * 1000),
            "throttle_cb": lambda event: throttles.append(event.throttle_time),
        }
    )
    for i in range(RECORDS):
        producer.produce(
            topic,
            value=bytes([i % 256]) * RECORD_BYTES,
            partition=0,
            on_delivery=lambda err, msg: results.append(err if err is not None else msg.offset()),
        )
        producer.poll(0)
    assert producer.flush(CLIENT_TIMEOUT_S) == 0
    producer.poll(0)
    return results, throttles


def test_producer_throttled_by_its_quota_then_let_go(cluster, zk, run_cli) -> None:  # type: ignore[no-untyped-def]
    # 4 KB/s over the 10-second window: 40 KB pass at once, the other 20 KB only at the quota's pace
    quota = run_cli(
        "configs", "--alter", "--entity-type", "clients", "--entity-name", CLIENT_ID,
        "--add-config", "producer_byte_rate=4096",
    )  # fmt: skip
    assert quota.exit_code == 0, quota.stderr
    local = cluster(brokers=1)
    admin_topics.create_topic(zk, "q", 1, 1, None, {}, rng=JavaRandom(1))
    wait_partitions(zk, "q", 1, isr_size=1)
    bootstrap = bootstrap_of(local)

    results, throttles = produce(bootstrap, "q")
    assert results == list(range(RECORDS))  # every record delivered, in order
    assert max(throttles) > 0, throttles

    deleted = run_cli(
        "configs", "--alter", "--entity-type", "clients", "--entity-name", CLIENT_ID,
        "--delete-config", "producer_byte_rate",
    )  # fmt: skip
    assert deleted.exit_code == 0, deleted.stderr

    def unthrottled() -> bool:
        results, throttles = produce(bootstrap, "q")
        assert all(isinstance(r, int) for r in results), results
        return not any(throttles)

    wait_for(unthrottled, timeout_s=60, what="a producer without a quota produced unthrottled")


def consume(bootstrap: str, topic: str, count: int) -> tuple[list[int], list[float]]:
    """The offsets a confluent-kafka consumer (client.id CLIENT_ID, assign() only) reads up to `count`
    records, and the throttle times its throttle callback reported."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    throttles: list[float] = []
    offsets: list[int] = []
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "client.id": CLIENT_ID,
            "group.id": "kafkaops-test",
            "enable.auto.commit": False,
            "throttle_cb": lambda event: throttles.append(event.throttle_time),
        }
    )
    try:
        consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])

        def read_all() -> bool:
            message = consumer.poll(0.2)
            if message is not None and message.error() is None:
                offsets.append(message.offset())
            return len(offsets) >= count

        wait_for(read_all, timeout_s=CLIENT_TIMEOUT_S, interval_s=0, what=f"{count} records consumed")
    finally:
        consumer.close()
    return offsets, throttles


def test_consumer_throttled_by_its_quota(cluster, zk, run_cli) -> None:  # type: ignore[no-untyped-def]
    local = cluster(brokers=1)
    admin_topics.create_topic(zk, "q", 1, 1, None, {}, rng=JavaRandom(1))
    wait_partitions(zk, "q", 1, isr_size=1)
    bootstrap = bootstrap_of(local)
    results, _ = produce(bootstrap, "q")  # no quota yet
    assert results == list(range(RECORDS))
    # the default client's quota: 4 KB/s, 40 KB in the first window, the other 20 KB at its pace
    quota = run_cli("configs", "--alter", "--client-defaults", "--add-config", "consumer_byte_rate=4096")
    assert quota.exit_code == 0, quota.stderr

    def throttled() -> list[float] | None:
        offsets, throttles = consume(bootstrap, "q", RECORDS)
        assert offsets == list(range(RECORDS))  # every record, in order, throttled or not
        return throttles if any(throttles) else None

    # the broker applies the quota when its watch fires: until then a consumer is not throttled
    throttles = wait_for(throttled, timeout_s=120, interval_s=0, what="a consumer over its quota was throttled")
    assert max(throttles) > 0


def test_request_percentage_throttles_for_one_window_at_most(cluster, zk, run_cli) -> None:  # type: ignore[no-untyped-def]
    # a quota of a millionth of a percent of a request handler: any request is over it, and Kafka's
    # ClientRequestQuotaManager throttles for one quota window (1 s) at most
    quota = run_cli(
        "configs", "--alter", "--entity-type", "users", "--entity-name", "ANONYMOUS",
        "--entity-type", "clients", "--entity-name", CLIENT_ID, "--add-config", "request_percentage=0.000001",
    )  # fmt: skip
    assert quota.exit_code == 0, quota.stderr
    local = cluster(brokers=1)
    admin_topics.create_topic(zk, "q", 1, 1, None, {}, rng=JavaRandom(1))
    wait_partitions(zk, "q", 1, isr_size=1)
    results, throttles = produce(bootstrap_of(local), "q")
    assert results == list(range(RECORDS))
    assert 0 < max(throttles) <= 1.0, throttles  # seconds


def test_setting_quotas_runbook(cluster, zk) -> None:  # type: ignore[no-untyped-def]
    """Kafka 2.8's "Setting quotas" runbook as an operator types it (`--state-dir` for `--zookeeper`), then
    the defaults it sets slowing a producer down."""
    from tests.cluster.test_ops_runbooks import ok

    local = cluster(brokers=1)
    quotas = "producer_byte_rate=1024,consumer_byte_rate=2048,request_percentage=200"
    user_client = ("--entity-type", "users", "--entity-name", "user1", "--entity-type", "clients", "--entity-name")
    for entity, text in [
        ((*user_client, "clientA"), "user-principal 'user1', client-id 'clientA'"),
        (("--entity-type", "users", "--entity-name", "user1"), "user-principal 'user1'"),
        (("--entity-type", "clients", "--entity-name", "clientA"), "client-id 'clientA'"),
        (
            ("--entity-type", "users", "--entity-default", "--entity-type", "clients", "--entity-default"),
            "default user-principal, default client-id",
        ),
    ]:
        assert ok(local, "configs", "--alter", "--add-config", quotas, *entity) == (
            f"Completed updating config for entity: {text}.\n"
        )
    # java.util.Properties order (Java 9+), where Kafka's docs show the order they were given in
    shown = "request_percentage=200,producer_byte_rate=1024,consumer_byte_rate=2048"
    assert ok(local, "configs", "--describe", *user_client, "clientA") == (
        f"Configs for user-principal 'user1', client-id 'clientA' are {shown}\n"
    )
    assert ok(local, "configs", "--describe", "--entity-type", "users") == (
        f"Configs for user-principal 'user1' are {shown}\n"
    )
    assert ok(local, "configs", "--describe", "--entity-type", "users", "--entity-type", "clients") == (
        f"Configs for default user-principal, default client-id are {shown}\n"
        f"Configs for user-principal 'user1', client-id 'clientA' are {shown}\n"
    )
    # without authentication every client is the user ANONYMOUS: the <default, default> quota is ours
    ok(
        local, "configs", "--alter", "--add-config", "producer_byte_rate=4096", "--entity-type", "users",
        "--entity-default", "--entity-type", "clients", "--entity-default",
    )  # fmt: skip
    ok(local, "topics", "--create", "--topic", "q", "--partitions", "1", "--replication-factor", "1")
    wait_partitions(zk, "q", 1, isr_size=1)
    bootstrap = bootstrap_of(local)

    def throttled() -> bool:
        results, throttles = produce(bootstrap, "q")
        assert all(isinstance(r, int) for r in results), results  # every record delivered, throttled or not
        return any(throttles)

    # the broker applies the quota when its watch on /config/changes fires
    wait_for(throttled, timeout_s=120, interval_s=0, what="a producer over the default quota was throttled")


def test_describe_and_alter_client_quotas_over_the_admin_api(cluster, zk, run_cli) -> None:  # type: ignore[no-untyped-def]
    """AlterClientQuotas and DescribeClientQuotas served by a broker (kafkaops' Kafka client on the wire):
    what one writes, `kafkaops configs --zookeeper` reads, and the other way round."""
    from kafkaops.admin import client_quotas as cq
    from kafkaops.admin.kafka_client import KafkaClient
    from kafkaops.admin.kafka_client.client_quotas import alter_client_quotas, describe_client_quotas
    from kafkaops.cluster.common.errors import InvalidRequestError

    local = cluster(brokers=1)
    set_by_tool = run_cli("configs", "--alter", "--client", "c1", "--add-config", "consumer_byte_rate=2048")
    assert set_by_tool.exit_code == 0, set_by_tool.stderr
    client = KafkaClient(bootstrap_of(local))
    try:
        results = alter_client_quotas(
            client,
            [
                cq.QuotaAlteration({cq.USER: "u1", cq.CLIENT_ID: None}, (("producer_byte_rate", 1024.0),)),
                cq.QuotaAlteration({cq.CLIENT_ID: "c1"}, (("request_percentage", 12.5), ("bogus", 1.0))),
            ],
        )
        assert results[0] == ({cq.USER: "u1", cq.CLIENT_ID: None}, None)
        entity, error = results[1]
        assert isinstance(error, InvalidRequestError) and error.message == "Invalid configuration key bogus"
        described = describe_client_quotas(client, [])
        assert sorted(described, key=repr) == sorted(
            [
                ({cq.CLIENT_ID: "c1"}, {"consumer_byte_rate": 2048.0}),
                ({cq.CLIENT_ID: None, cq.USER: "u1"}, {"producer_byte_rate": 1024.0}),
            ],
            key=repr,
        )
        exact = describe_client_quotas(client, [cq.FilterComponent(cq.USER, cq.MATCH_EXACT, "u1")], strict=True)
        assert exact == []  # strict: only <user> entities, and u1 has only a <user, client-id> quota
        try:
            describe_client_quotas(client, [cq.FilterComponent("", cq.MATCH_ANY)])
        except InvalidRequestError as refused:
            assert refused.message == "Unexpected empty filter component entity type"
        else:
            raise AssertionError("a bad filter was not refused")
    finally:
        client.close()
    described = run_cli("configs", "--describe", "--user", "u1", "--client-defaults")
    assert described.stdout == "Configs for user-principal 'u1', default client-id are producer_byte_rate=1024\n"
