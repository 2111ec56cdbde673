"""Znode codecs and their value types: known-answer bytes from kafka-reference.md §1 (and the Kafka tests it
cites), decoding of every JSON example there, round trips, and one error policy for bad bytes."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkaops.cluster.common.errors import MalformedZNodeError
from kafkaops.cluster.zk import znodes
from kafkaops.cluster.zk.values import (
    AclEntry,
    BrokerRegistration,
    EndPoint,
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    ProducerIdBlock,
    ReplicaAssignment,
    TopicAssignment,
    TopicPartition,
)
from kafkaops.cluster.zk.znodes import (
    PERSISTENT_PATHS,
    AclChangeNotificationSequenceZNode,
    AclZNode,
    BrokerIdsZNode,
    BrokerIdZNode,
    BrokerSequenceIdZNode,
    ClusterIdZNode,
    ConfigEntityChangeNotificationSequenceZNode,
    ConfigEntityTypeZNode,
    ConfigEntityZNode,
    ConsumerOffsetZNode,
    ControllerEpochZNode,
    ControllerZNode,
    CreateMode,
    DelegationTokenChangeNotificationSequenceZNode,
    DeleteTopicsTopicZNode,
    DeleteTopicsZNode,
    ExtendedAclChangeNotificationSequenceZNode,
    FeatureZNode,
    IsrChangeNotificationSequenceZNode,
    LogDirEventNotificationSequenceZNode,
    PreferredReplicaElectionZNode,
    ProducerIdBlockZNode,
    ReassignPartitionsZNode,
    TopicPartitionStateZNode,
    TopicPartitionsZNode,
    TopicPartitionZNode,
    TopicsZNode,
    TopicZNode,
    sanitize_entity_name,
)

# --- paths and create modes (§1, §1.1) ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        (ControllerZNode.path(), "/controller"),
        (ControllerEpochZNode.path(), "/controller_epoch"),
        (BrokerIdsZNode.path(), "/brokers/ids"),
        (BrokerIdZNode.path(1001), "/brokers/ids/1001"),
        (BrokerSequenceIdZNode.path(), "/brokers/seqid"),
        (TopicsZNode.path(), "/brokers/topics"),
        (TopicZNode.path("t"), "/brokers/topics/t"),
        (TopicPartitionsZNode.path("t"), "/brokers/topics/t/partitions"),
        (TopicPartitionZNode.path("t", 0), "/brokers/topics/t/partitions/0"),
        (TopicPartitionStateZNode.path("t", 0), "/brokers/topics/t/partitions/0/state"),
        (TopicPartitionStateZNode.path("a.b_c-1", 17), "/brokers/topics/a.b_c-1/partitions/17/state"),
        (DeleteTopicsZNode.path(), "/admin/delete_topics"),
        (DeleteTopicsTopicZNode.path("t"), "/admin/delete_topics/t"),
        (ReassignPartitionsZNode.path(), "/admin/reassign_partitions"),
        (PreferredReplicaElectionZNode.path(), "/admin/preferred_replica_election"),
        (IsrChangeNotificationSequenceZNode.path(), "/isr_change_notification/isr_change_"),
        (IsrChangeNotificationSequenceZNode.path("0000000001"), "/isr_change_notification/isr_change_0000000001"),
        (LogDirEventNotificationSequenceZNode.path(), "/log_dir_event_notification/log_dir_event_"),
        (ConfigEntityTypeZNode.path("topics"), "/config/topics"),
        (ConfigEntityZNode.path("topics", "foo"), "/config/topics/foo"),
        (ConfigEntityZNode.path("brokers", "<default>"), "/config/brokers/<default>"),
        (ConfigEntityZNode.path("users", "alice/clients/c1"), "/config/users/alice/clients/c1"),
        (ConfigEntityChangeNotificationSequenceZNode.path(), "/config/changes/config_change_"),
        (
            ConfigEntityChangeNotificationSequenceZNode.path("0000000000"),
            "/config/changes/config_change_0000000000",
        ),
        (ClusterIdZNode.path(), "/cluster/id"),
        (ProducerIdBlockZNode.path(), "/latest_producer_id_block"),
        (FeatureZNode.path(), "/feature"),
        (ConsumerOffsetZNode.path("g", "t", 3), "/consumers/g/offsets/t/3"),
        (AclZNode.path("Topic", "foo"), "/kafka-acl/Topic/foo"),
        (AclZNode.path("Topic", "foo", "PREFIXED"), "/kafka-acl-extended/prefixed/Topic/foo"),
        (AclChangeNotificationSequenceZNode.path(), "/kafka-acl-changes/acl_changes_"),
        (ExtendedAclChangeNotificationSequenceZNode.path(), "/kafka-acl-extended-changes/acl_changes_"),
        (DelegationTokenChangeNotificationSequenceZNode.path(), "/delegation_token/token_changes/token_change_"),
    ],
)
def test_path(path: str, expected: str) -> None:
    assert path == expected


EPHEMERAL = [ControllerZNode, BrokerIdZNode]
SEQUENTIAL = [
    ConfigEntityChangeNotificationSequenceZNode,
    IsrChangeNotificationSequenceZNode,
    LogDirEventNotificationSequenceZNode,
    AclChangeNotificationSequenceZNode,
    ExtendedAclChangeNotificationSequenceZNode,
    DelegationTokenChangeNotificationSequenceZNode,
]
PERSISTENT = [
    ControllerEpochZNode,
    TopicZNode,
    TopicPartitionsZNode,
    TopicPartitionZNode,
    TopicPartitionStateZNode,
    DeleteTopicsTopicZNode,
    ReassignPartitionsZNode,
    PreferredReplicaElectionZNode,
    ConfigEntityZNode,
    ClusterIdZNode,
    ProducerIdBlockZNode,
    FeatureZNode,
    AclZNode,
]


@pytest.mark.parametrize(
    ("codec", "mode"),
    [(c, CreateMode.EPHEMERAL) for c in EPHEMERAL]
    + [(c, CreateMode.PERSISTENT_SEQUENTIAL) for c in SEQUENTIAL]
    + [(c, CreateMode.PERSISTENT) for c in PERSISTENT],
    ids=lambda v: v.__name__ if isinstance(v, type) else v.name,
)
def test_create_mode(codec: type, mode: CreateMode) -> None:
    assert codec.mode is mode


def test_persistent_paths_are_kafka_28s() -> None:
    # ZkData.PersistentZkPaths (2.8), in Kafka's order; ConfigType.all includes ips from 2.8.
    assert PERSISTENT_PATHS == (
        "/consumers",
        "/brokers/ids",
        "/brokers/topics",
        "/config/changes",
        "/admin/delete_topics",
        "/brokers/seqid",
        "/isr_change_notification",
        "/latest_producer_id_block",
        "/log_dir_event_notification",
        "/config/topics",
        "/config/clients",
        "/config/users",
        "/config/brokers",
        "/config/ips",
    )


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        # java.net.URLEncoder.encode(name, "UTF-8") on OpenJDK 17, then '*' -> %2A and '+' -> %20 (Sanitizer)
        ("alice", "alice"),
        ("user@x.com", "user%40x.com"),
        ("a b*c~d", "a%20b%2Ac%7Ed"),
        ("\u00e9/\u00fc", "%C3%A9%2F%C3%BC"),
        ("CN=a,O=b", "CN%3Da%2CO%3Db"),
        ("a-b_c.d", "a-b_c.d"),
        ("<default>", "%3Cdefault%3E"),
    ],
)
def test_sanitize_entity_name(name: str, expected: str) -> None:
    assert sanitize_entity_name(name) == expected


# --- known-answer bytes -----------------------------------------------------------------------------------


def state(leader: int, epoch: int, isr: tuple[int, ...], controller_epoch: int, zk: int = 0) -> Any:
    return LeaderIsrAndControllerEpoch(LeaderAndIsr(leader, epoch, isr, zk), controller_epoch)


@pytest.mark.parametrize(
    ("encoded", "expected"),
    [
        pytest.param(
            ControllerZNode.encode(1, 1614570663881),
            b'{"version":1,"brokerid":1,"timestamp":"1614570663881"}',
            id="controller",
        ),
        pytest.param(ControllerEpochZNode.encode(1), b"1", id="controller_epoch"),
        pytest.param(ControllerEpochZNode.encode(0), b"0", id="controller_epoch-initial"),
        pytest.param(
            TopicPartitionStateZNode.encode(state(1, 0, (1, 2), 1)),
            b'{"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,"isr":[1,2]}',
            id="partition-state",
        ),
        pytest.param(
            TopicPartitionStateZNode.encode(state(-1, 7, (), 3, zk=9)),
            b'{"controller_epoch":3,"leader":-1,"version":1,"leader_epoch":7,"isr":[]}',
            id="partition-state-no-leader",
        ),
        pytest.param(
            ReassignPartitionsZNode.encode({TopicPartition("foo", 0): [1, 2]}),
            b'{"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":[1,2]}]}',
            id="reassign_partitions",  # ReassignPartitionsZNodeTest
        ),
        pytest.param(
            ReassignPartitionsZNode.encode({TopicPartition("b", 1): (3,), TopicPartition("a", 0): (2, 1)}),
            b'{"version":1,"partitions":[{"topic":"b","partition":1,"replicas":[3]},'
            b'{"topic":"a","partition":0,"replicas":[2,1]}]}',
            id="reassign_partitions-input-order",
        ),
        pytest.param(
            PreferredReplicaElectionZNode.encode(
                [TopicPartition("foo", 0), TopicPartition("foo", 1), TopicPartition("foo", 0)]
            ),
            b'{"version":1,"partitions":[{"topic":"foo","partition":0},{"topic":"foo","partition":1}]}',
            id="preferred_replica_election",
        ),
        pytest.param(
            IsrChangeNotificationSequenceZNode.encode([TopicPartition("topic-a", 0), TopicPartition("topic-b", 0)]),
            b'{"version":1,"partitions":[{"topic":"topic-a","partition":0},{"topic":"topic-b","partition":0}]}',
            id="isr_change",  # KafkaZkClientTest.testPropagateIsrChanges
        ),
        pytest.param(
            LogDirEventNotificationSequenceZNode.encode(3), b'{"version":1,"broker":3,"event":1}', id="log_dir_event"
        ),
        pytest.param(
            ConfigEntityZNode.encode(
                {
                    "retention.ms": "1000", "cleanup.policy": "compact", "min.insync.replicas": "2",
                    "segment.bytes": "1048576", "max.message.bytes": "2000000",
                }
            ),
            b'{"version":1,"config":{"cleanup.policy":"compact","max.message.bytes":"2000000",'
            b'"min.insync.replicas":"2","retention.ms":"1000","segment.bytes":"1048576"}}',
            id="config-properties-order",  # §0.2 rule 5, Java 17
        ),
        pytest.param(ConfigEntityZNode.encode({}), b'{"version":1,"config":{}}', id="config-empty"),
        pytest.param(
            ConfigEntityChangeNotificationSequenceZNode.encode("topics/foo"),
            b'{"version":2,"entity_path":"topics/foo"}',
            id="config_change",
        ),
        pytest.param(
            ConfigEntityChangeNotificationSequenceZNode.encode("users/alice/clients/c1"),
            b'{"version":2,"entity_path":"users/alice/clients/c1"}',
            id="config_change-user-client",
        ),
        pytest.param(
            ClusterIdZNode.encode("xEkjI9dTTCOnB4O8AXLd2Q"),
            b'{"version":"1","id":"xEkjI9dTTCOnB4O8AXLd2Q"}',
            id="cluster_id",
        ),
        pytest.param(
            ProducerIdBlockZNode.encode(ProducerIdBlock(0, 0, 999)),
            b'{"version":1,"broker":0,"block_start":"0","block_end":"999"}',
            id="producer_id_block",
        ),
        pytest.param(
            ProducerIdBlockZNode.encode(ProducerIdBlock(2, 9223372036854774808, 9223372036854775807)),
            b'{"version":1,"broker":2,"block_start":"9223372036854774808","block_end":"9223372036854775807"}',
            id="producer_id_block-long",
        ),
        pytest.param(
            TopicZNode.encode_replicas({1: [2, 0], 0: [1, 2]}),
            b'{"partitions":{"0":[1,2],"1":[2,0]},"adding_replicas":{},"removing_replicas":{},"version":3}',
            id="topic-v3-no-id",
        ),
        pytest.param(
            TopicZNode.encode_replicas({0: [1, 2]}, topic_id="b8gXSxSNR6yZfQnOkzyMXA"),
            b'{"partitions":{"0":[1,2]},"topic_id":"b8gXSxSNR6yZfQnOkzyMXA",'
            b'"adding_replicas":{},"removing_replicas":{},"version":3}',
            id="topic-v3-id",
        ),
        pytest.param(
            TopicZNode.encode(
                {0: ReplicaAssignment((4, 1, 2, 3), adding_replicas=(4,), removing_replicas=(3,)), 1: ReplicaAssignment((2, 3))}
            ),
            b'{"partitions":{"0":[4,1,2,3],"1":[2,3]},"adding_replicas":{"0":[4]},'
            b'"removing_replicas":{"0":[3]},"version":3}',
            id="topic-v3-reassigning",  # only partitions with a non-empty list
        ),
        pytest.param(
            FeatureZNode.encode(1, {"f": (1, 2)}),
            b'{"features":{"f":{"min_version_level":1,"max_version_level":2}},"version":1,"status":1}',
            id="feature",
        ),
        pytest.param(
            AclZNode.encode([AclEntry("User:alice", "Allow", "Read", "*")]),
            b'{"version":1,"acls":[{"principal":"User:alice","permissionType":"Allow","operation":"Read","host":"*"}]}',
            id="acl",
        ),
        pytest.param(AclChangeNotificationSequenceZNode.encode("Topic", "foo"), b"Topic:foo", id="acl_change"),
        pytest.param(
            ExtendedAclChangeNotificationSequenceZNode.encode("Topic", "foo", "PREFIXED"),
            b'{"version":1,"resourceType":"Topic","name":"foo","patternType":"PREFIXED"}',
            id="extended_acl_change",
        ),
        pytest.param(ConsumerOffsetZNode.encode(42), b"42", id="consumer_offset"),
        pytest.param(DeleteTopicsTopicZNode.encode(), b"", id="delete_topic"),
        pytest.param(
            ConfigEntityZNode.encode({"k": 'a"b\\c\u00e9'}),
            '{"version":1,"config":{"k":"a\\"b\\\\c\u00e9"}}'.encode(),
            id="config-escaping",  # Jackson: escape quote and backslash, non-ASCII as raw UTF-8
        ),
    ],
)  # fmt: skip
def test_known_answer_bytes(encoded: bytes, expected: bytes) -> None:
    assert encoded == expected


# --- broker registration (§1.2) ------------------------------------------------------------------------------

REAL_V4 = (
    b'{"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},"endpoints":["PLAINTEXT://zjj101:9092"],'
    b'"jmx_port":-1,"host":"zjj101","timestamp":"1614570663881","port":9092,"version":4}'
)
REAL_V4_BROKER = BrokerRegistration(
    broker_id=0,
    endpoints=(EndPoint("PLAINTEXT", "zjj101", 9092),),
    timestamp_ms=1614570663881,
    jmx_port=-1,
    listener_security_protocol_map={"PLAINTEXT": "PLAINTEXT"},
    version=4,
)
V1_08 = b'{"jmx_port":-1,"timestamp":"1420485325400","host":"172.16.8.243","version":1,"port":9091}'


def test_decode_real_world_v4_registration() -> None:
    broker = BrokerIdZNode.decode(0, REAL_V4)
    assert broker == REAL_V4_BROKER
    assert broker.plaintext_endpoint == EndPoint("PLAINTEXT", "zjj101", 9092)


def test_encode_real_world_v4_registration_byte_for_byte() -> None:
    assert BrokerIdZNode.encode(REAL_V4_BROKER) == REAL_V4


def test_decode_08_v1_registration() -> None:
    # BrokerEndPointTest: 0.8.x wrote host and port only, in an immutable 5-map's order.
    assert BrokerIdZNode.decode(1, V1_08) == BrokerRegistration(
        broker_id=1,
        endpoints=(EndPoint("PLAINTEXT", "172.16.8.243", 9091),),
        timestamp_ms=1420485325400,
        jmx_port=-1,
        version=1,
    )


def test_decode_v2_registration() -> None:
    data = b'{"endpoints":["PLAINTEXT://h1:9092"],"jmx_port":9999,"host":"h1","timestamp":"5","port":9092,"version":2}'
    broker = BrokerIdZNode.decode(2, data)
    assert (broker.endpoints, broker.jmx_port, broker.timestamp_ms, broker.version) == (
        (EndPoint("PLAINTEXT", "h1", 9092),),
        9999,
        5,
        2,
    )


def keys_of(data: bytes) -> list[str]:
    return list(json.loads(data))


MULTI = BrokerRegistration(
    broker_id=3,
    endpoints=(EndPoint("INTERNAL", "10.0.0.1", 9092), EndPoint("EXTERNAL", "broker.example.com", 9093)),
    timestamp_ms=1614570663881,
    rack="r1",
    jmx_port=9999,
    listener_security_protocol_map={"INTERNAL": "PLAINTEXT", "EXTERNAL": "SSL"},
    version=4,
)


def test_encode_v4_with_rack_and_two_listeners() -> None:
    # host/port come from the first endpoint whose security protocol is PLAINTEXT, whatever its listener name.
    assert BrokerIdZNode.encode(MULTI) == (
        b'{"listener_security_protocol_map":{"INTERNAL":"PLAINTEXT","EXTERNAL":"SSL"},'
        b'"endpoints":["INTERNAL://10.0.0.1:9092","EXTERNAL://broker.example.com:9093"],"rack":"r1",'
        b'"jmx_port":9999,"host":"10.0.0.1","timestamp":"1614570663881","port":9092,"version":4}'
    )


def test_encode_without_plaintext_listener_has_null_host_and_port_minus_one() -> None:
    broker = BrokerRegistration(
        broker_id=1,
        endpoints=(EndPoint("SSL", "h", 9093),),
        timestamp_ms=1,
        listener_security_protocol_map={"SSL": "SSL"},
        version=4,
    )
    assert BrokerIdZNode.encode(broker) == (
        b'{"listener_security_protocol_map":{"SSL":"SSL"},"endpoints":["SSL://h:9093"],'
        b'"jmx_port":-1,"host":null,"timestamp":"1","port":-1,"version":4}'
    )


# §1.2, Scala 2.12 builds (mutable.HashMap order)
V4_ORDER = ["listener_security_protocol_map", "endpoints", "jmx_port", "host", "timestamp", "port", "version"]
V4_RACK_ORDER = [
    "listener_security_protocol_map",
    "endpoints",
    "rack",
    "jmx_port",
    "host",
    "timestamp",
    "port",
    "version",
]
V5_ORDER = [
    "listener_security_protocol_map",
    "endpoints",
    "jmx_port",
    "features",
    "host",
    "timestamp",
    "port",
    "version",
]
# v5 with rack is not in §1.2; computed with §0.2 rule 3 (Scala 2.12 HashTable, seed 4), which reproduces
# every order §1.2 does list.
V5_RACK_ORDER = [
    "listener_security_protocol_map", "endpoints", "rack", "jmx_port", "features", "host", "timestamp", "port",
    "version",
]  # fmt: skip


@pytest.mark.parametrize(
    ("version", "rack", "expected"),
    [(4, None, V4_ORDER), (4, "r1", V4_RACK_ORDER), (5, None, V5_ORDER), (5, "r1", V5_RACK_ORDER)],
)
def test_registration_key_order_is_scala_212s(version: int, rack: str | None, expected: list[str]) -> None:
    broker = BrokerRegistration(
        broker_id=0,
        endpoints=(EndPoint("PLAINTEXT", "h", 9092),),
        timestamp_ms=7,
        rack=rack,
        listener_security_protocol_map={"PLAINTEXT": "PLAINTEXT"},
        version=version,
    )
    assert keys_of(BrokerIdZNode.encode(broker)) == expected


def test_encode_v5_features() -> None:
    broker = BrokerRegistration(
        broker_id=0,
        endpoints=(EndPoint("PLAINTEXT", "h", 9092),),
        timestamp_ms=7,
        listener_security_protocol_map={"PLAINTEXT": "PLAINTEXT"},
        features={"feat": (1, 2)},
        version=5,
    )
    data = BrokerIdZNode.encode(broker)
    assert b'"features":{"feat":{"min_version":1,"max_version":2}}' in data
    assert BrokerIdZNode.decode(0, data) == broker


def test_encode_v5_without_features_writes_empty_object() -> None:
    broker = dataclasses.replace(REAL_V4_BROKER, version=5)
    assert b',"features":{},' in BrokerIdZNode.encode(broker)


def test_ipv6_endpoint_is_bracketed() -> None:
    broker = dataclasses.replace(REAL_V4_BROKER, endpoints=(EndPoint("PLAINTEXT", "::1", 9092),))
    assert b'"endpoints":["PLAINTEXT://[::1]:9092"]' in BrokerIdZNode.encode(broker)


def test_decode_bracketed_ipv6_endpoint() -> None:
    data = b'{"endpoints":["PLAINTEXT://[::1]:9092"],"jmx_port":-1,"timestamp":"1","version":4}'
    assert BrokerIdZNode.decode(0, data).endpoints == (EndPoint("PLAINTEXT", "::1", 9092),)


# --- decoding every JSON example of §1 ----------------------------------------------------------------------


def test_decode_controller() -> None:
    assert ControllerZNode.decode(b'{"version":1,"brokerid":1,"timestamp":"1614570663881"}') == 1


def test_decode_08_controller_bare_integer() -> None:
    assert ControllerZNode.decode(b"3") == 3


def test_decode_controller_epoch() -> None:
    assert ControllerEpochZNode.decode(b"1") == 1
    assert ControllerEpochZNode.decode(b"0") == 0


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        pytest.param(
            b'{"version":1,"partitions":{"0":[1,2],"1":[2,0]}}',
            TopicAssignment({0: ReplicaAssignment((1, 2)), 1: ReplicaAssignment((2, 0))}),
            id="v1",
        ),
        pytest.param(
            b'{"version":2,"partitions":{"0":[1,2]},"adding_replicas":{},"removing_replicas":{}}',
            TopicAssignment({0: ReplicaAssignment((1, 2))}),
            id="v2",
        ),
        pytest.param(
            b'{"version":2,"partitions":{"0":[4,1,2,3],"1":[2,3]},"adding_replicas":{"0":[4]},'
            b'"removing_replicas":{"0":[3]}}',
            TopicAssignment({0: ReplicaAssignment((4, 1, 2, 3), (4,), (3,)), 1: ReplicaAssignment((2, 3))}),
            id="v2-reassigning",
        ),
        pytest.param(
            b'{"partitions":{"0":[1,2]},"topic_id":"b8gXSxSNR6yZfQnOkzyMXA","adding_replicas":{},'
            b'"removing_replicas":{},"version":3}',
            TopicAssignment({0: ReplicaAssignment((1, 2))}, topic_id="b8gXSxSNR6yZfQnOkzyMXA"),
            id="v3-scala-2.13",
        ),
        pytest.param(
            b'{"removing_replicas":{},"partitions":{"0":[1,2]},"topic_id":"b8gXSxSNR6yZfQnOkzyMXA",'
            b'"adding_replicas":{},"version":3}',
            TopicAssignment({0: ReplicaAssignment((1, 2))}, topic_id="b8gXSxSNR6yZfQnOkzyMXA"),
            id="v3-scala-2.12",
        ),
        pytest.param(
            b'{"partitions":{"11":[1],"0":[2],"10":[3]},"adding_replicas":{},"removing_replicas":{},"version":3}',
            TopicAssignment({0: ReplicaAssignment((2,)), 10: ReplicaAssignment((3,)), 11: ReplicaAssignment((1,))}),
            id="v3-hash-ordered-partitions",
        ),
    ],
)
def test_decode_topic(data: bytes, expected: TopicAssignment) -> None:
    decoded = TopicZNode.decode("t", data)
    assert decoded == expected
    assert decoded.replicas == {p: list(a.replicas) for p, a in sorted(expected.partitions.items())}


def test_decode_partition_state_carries_the_znode_version() -> None:
    data = b'{"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,"isr":[1,2]}'
    assert TopicPartitionStateZNode.decode("t", 0, data, zk_version=5) == state(1, 0, (1, 2), 1, zk=5)


def test_decode_reassign_partitions() -> None:
    data = b'{"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":[1,2]}]}'
    assert ReassignPartitionsZNode.decode(data) == {TopicPartition("foo", 0): (1, 2)}


def test_decode_preferred_replica_election_dedups() -> None:
    data = (
        b'{"version":1,"partitions":[{"topic":"foo","partition":0},{"topic":"foo","partition":1},'
        b'{"topic":"foo","partition":0}]}'
    )
    assert PreferredReplicaElectionZNode.decode(data) == {TopicPartition("foo", 0), TopicPartition("foo", 1)}


def test_decode_isr_change() -> None:
    data = b'{"version":1,"partitions":[{"topic":"topic-a","partition":0},{"topic":"topic-b","partition":0}]}'
    assert IsrChangeNotificationSequenceZNode.decode(data) == {
        TopicPartition("topic-a", 0),
        TopicPartition("topic-b", 0),
    }


def test_decode_log_dir_event() -> None:
    assert LogDirEventNotificationSequenceZNode.decode(b'{"version":1,"broker":3,"event":1}') == 3


def test_decode_config() -> None:
    data = b'{"version":1,"config":{"retention.ms":"1000","cleanup.policy":"compact"}}'
    assert ConfigEntityZNode.decode("/config/topics/t", data) == {"retention.ms": "1000", "cleanup.policy": "compact"}


@pytest.mark.parametrize("data", [None, b""])
def test_config_without_data_reads_as_no_overrides(data: bytes | None) -> None:
    # Kafka's ConfigEntityZNode.decode: null data -> empty Properties (parents are created with null data).
    assert ConfigEntityZNode.decode("/config/topics/t", data) == {}


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b'{"version":2,"entity_path":"topics/foo"}', "topics/foo"),
        (b'{"version":2,"entity_path":"brokers/<default>"}', "brokers/<default>"),
        (b'{"version":1,"entity_type":"topics","entity_name":"foo"}', "topics/foo"),  # 0.9.0 - 0.10.0
    ],
)
def test_decode_config_change(data: bytes, expected: str) -> None:
    assert ConfigEntityChangeNotificationSequenceZNode.decode(data) == expected


def test_decode_cluster_id_with_string_version() -> None:
    assert ClusterIdZNode.decode(b'{"version":"1","id":"xEkjI9dTTCOnB4O8AXLd2Q"}') == "xEkjI9dTTCOnB4O8AXLd2Q"


def test_decode_producer_id_block() -> None:
    data = b'{"version":1,"broker":0,"block_start":"0","block_end":"999"}'
    assert ProducerIdBlockZNode.decode(data) == ProducerIdBlock(broker_id=0, block_start=0, block_end=999)


@pytest.mark.parametrize(
    "data",
    [
        b'{"features":{"f":{"min_version_level":1,"max_version_level":2}},"status":1,"version":1}',  # 2.12
        b'{"features":{"f":{"min_version_level":1,"max_version_level":2}},"version":1,"status":1}',  # 2.13
    ],
)
def test_decode_feature(data: bytes) -> None:
    assert FeatureZNode.decode(data) == (1, {"f": (1, 2)})


def test_decode_acls() -> None:
    data = b'{"version":1,"acls":[{"principal":"User:alice","permissionType":"Allow","operation":"Read","host":"*"}]}'
    assert AclZNode.decode("/kafka-acl/Topic/foo", data) == [AclEntry("User:alice", "Allow", "Read", "*")]


def test_decode_acl_changes() -> None:
    assert AclChangeNotificationSequenceZNode.decode(b"Topic:foo") == ("Topic", "foo")
    assert ExtendedAclChangeNotificationSequenceZNode.decode(
        b'{"version":1,"resourceType":"Topic","name":"foo","patternType":"PREFIXED"}'
    ) == ("Topic", "foo", "PREFIXED")


def test_decode_consumer_offset() -> None:
    assert ConsumerOffsetZNode.decode("g", "t", 0, b"42") == 42


# --- decoders ignore unknown keys -----------------------------------------------------------------------------

# (decoder, a valid document); each decoder must give the same answer with extra keys at every level.
Decoder = Callable[[bytes], Any]
VALID_DOCUMENTS: list[tuple[str, Decoder, dict[str, Any]]] = [
    ("controller", ControllerZNode.decode, {"version": 1, "brokerid": 1, "timestamp": "1"}),
    (
        "partition-state",
        lambda d: TopicPartitionStateZNode.decode("t", 0, d, 0),
        {"controller_epoch": 1, "leader": 1, "version": 1, "leader_epoch": 0, "isr": [1, 2]},
    ),
    ("topic", lambda d: TopicZNode.decode("t", d), {"version": 1, "partitions": {"0": [1, 2]}}),
    (
        "reassign",
        ReassignPartitionsZNode.decode,
        {"version": 1, "partitions": [{"topic": "foo", "partition": 0, "replicas": [1, 2]}]},
    ),
    (
        "preferred",
        PreferredReplicaElectionZNode.decode,
        {"version": 1, "partitions": [{"topic": "foo", "partition": 0}]},
    ),
    ("isr-change", IsrChangeNotificationSequenceZNode.decode, {"version": 1, "partitions": [{"topic": "a", "partition": 0}]}),
    ("log-dir-event", LogDirEventNotificationSequenceZNode.decode, {"version": 1, "broker": 3, "event": 1}),
    ("config", lambda d: ConfigEntityZNode.decode("/config/topics/t", d), {"version": 1, "config": {"a": "b"}}),
    ("config-change", ConfigEntityChangeNotificationSequenceZNode.decode, {"version": 2, "entity_path": "topics/foo"}),
    ("cluster-id", ClusterIdZNode.decode, {"version": "1", "id": "abc"}),
    (
        "producer-id-block",
        ProducerIdBlockZNode.decode,
        {"version": 1, "broker": 0, "block_start": "0", "block_end": "999"},
    ),
    (
        "broker",
        lambda d: BrokerIdZNode.decode(0, d),
        {"version": 4, "endpoints": ["PLAINTEXT://h:1"], "jmx_port": -1, "timestamp": "1"},
    ),
    ("feature", FeatureZNode.decode, {"features": {"f": {"min_version_level": 1, "max_version_level": 2}}, "status": 1}),
    (
        "acl",
        lambda d: AclZNode.decode("/kafka-acl/Topic/foo", d),
        {"version": 1, "acls": [{"principal": "User:a", "permissionType": "Allow", "operation": "Read", "host": "*"}]},
    ),
]  # fmt: skip


DATA_MAPS = {"partitions", "adding_replicas", "removing_replicas", "config", "features"}


def with_unknown_keys(value: Any, data_map: bool = False) -> Any:
    """Add an unknown key to every JSON object except the maps keyed by data (partitions, config, features)."""
    if isinstance(value, list):
        return [with_unknown_keys(v) for v in value]
    if isinstance(value, dict):
        extended = {k: with_unknown_keys(v, data_map=not data_map and k in DATA_MAPS) for k, v in value.items()}
        return extended if data_map else {**extended, "zz_unknown": {"x": [1, None]}}
    return value


@pytest.mark.parametrize(
    ("decoder", "document"), [(d, doc) for _, d, doc in VALID_DOCUMENTS], ids=[n for n, _, _ in VALID_DOCUMENTS]
)
def test_decoders_ignore_unknown_keys(decoder: Decoder, document: dict[str, Any]) -> None:
    extended = with_unknown_keys(document)
    assert extended != document
    assert decoder(json.dumps(extended).encode()) == decoder(json.dumps(document).encode())


# --- malformed data ----------------------------------------------------------------------------------------

NOT_AN_OBJECT = [b"", b"not json", b"{", b"[1,2]", b'"foo"', b"null", b"true", b"\xff\xfe{}", b'{"a":1} trailing']


def doc(value: Any) -> bytes:
    return json.dumps(value).encode()


STATE = {"controller_epoch": 1, "leader": 1, "version": 1, "leader_epoch": 0, "isr": [1, 2]}
REASSIGN_ENTRY = {"topic": "foo", "partition": 0, "replicas": [1, 2]}
TP_ENTRY = {"topic": "foo", "partition": 0}


def without(d: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in d.items() if k != key}


MALFORMED: list[tuple[str, Decoder, list[bytes]]] = [
    (
        "controller",
        ControllerZNode.decode,
        [b"", b"not json", b"[1]", b'"1"', doc({"version": 1}), doc({"brokerid": "1"}), doc({"brokerid": True})],
    ),
    ("controller-epoch", ControllerEpochZNode.decode, [b"", b"abc", b"1.5", b"\xff", b'{"epoch":1}']),
    (
        "partition-state",
        lambda d: TopicPartitionStateZNode.decode("t", 0, d, 0),
        NOT_AN_OBJECT
        + [doc(without(STATE, k)) for k in ("controller_epoch", "leader", "leader_epoch", "isr")]
        + [
            doc({**STATE, "leader": "1"}),
            doc({**STATE, "leader": True}),
            doc({**STATE, "leader": 1.0}),
            doc({**STATE, "leader": None}),
            doc({**STATE, "leader_epoch": False}),
            doc({**STATE, "controller_epoch": "1"}),
            doc({**STATE, "isr": "1,2"}),
            doc({**STATE, "isr": [1, True]}),
            doc({**STATE, "isr": [1, "2"]}),
            doc({**STATE, "isr": None}),
        ],
    ),
    (
        "topic",
        lambda d: TopicZNode.decode("t", d),
        NOT_AN_OBJECT
        + [
            doc({"version": 1}),
            doc({"version": 1, "partitions": None}),
            doc({"version": 1, "partitions": [[1, 2]]}),
            doc({"version": 1, "partitions": {"a": [1]}}),
            doc({"version": 1, "partitions": {"1.0": [1]}}),
            doc({"version": 1, "partitions": {"": [1]}}),
            doc({"version": 1, "partitions": {"0": "1,2"}}),
            doc({"version": 1, "partitions": {"0": [True]}}),
            doc({"version": 1, "partitions": {"0": [1]}, "adding_replicas": []}),
            doc({"version": 1, "partitions": {"0": [1]}, "adding_replicas": {"0": ["2"]}}),
            doc({"version": 1, "partitions": {"0": [1]}, "removing_replicas": {"x": [1]}}),
        ],
    ),
    (
        "reassign",
        ReassignPartitionsZNode.decode,
        NOT_AN_OBJECT
        + [
            doc({"version": 1}),
            doc({"version": 1, "partitions": {"foo-0": [1]}}),
            doc({"version": 1, "partitions": [[1]]}),
            *(doc({"version": 1, "partitions": [without(REASSIGN_ENTRY, k)]}) for k in REASSIGN_ENTRY),
            doc({"version": 1, "partitions": [{**REASSIGN_ENTRY, "topic": 1}]}),
            doc({"version": 1, "partitions": [{**REASSIGN_ENTRY, "partition": "0"}]}),
            doc({"version": 1, "partitions": [{**REASSIGN_ENTRY, "partition": False}]}),
            doc({"version": 1, "partitions": [{**REASSIGN_ENTRY, "replicas": [1, None]}]}),
        ],
    ),
    (
        "preferred",
        PreferredReplicaElectionZNode.decode,
        NOT_AN_OBJECT
        + [
            doc({"version": 1}),
            doc({"version": 1, "partitions": ["foo-0"]}),
            *(doc({"version": 1, "partitions": [without(TP_ENTRY, k)]}) for k in TP_ENTRY),
            doc({"version": 1, "partitions": [{**TP_ENTRY, "partition": 0.5}]}),
        ],
    ),
    (
        "isr-change",
        IsrChangeNotificationSequenceZNode.decode,
        NOT_AN_OBJECT
        + [doc({"version": 1}), doc({"version": 1, "partitions": [{**TP_ENTRY, "partition": "0"}]})],
    ),
    (
        "log-dir-event",
        LogDirEventNotificationSequenceZNode.decode,
        NOT_AN_OBJECT + [doc({"version": 1, "event": 1}), doc({"version": 1, "broker": "3", "event": 1})],
    ),
    (
        "config",
        lambda d: ConfigEntityZNode.decode("/config/topics/t", d),
        [
            b"not json",
            b"[1]",
            b'"foo"',
            b"\xff",
            doc({"version": 1, "config": None}),
            doc({"version": 1, "config": []}),
            doc({"version": 1, "config": "a=b"}),
            doc({"version": 1, "config": {"a": 1}}),
            doc({"version": 1, "config": {"a": None}}),
            doc({"version": 1, "config": {"a": True}}),
        ],
    ),
    (
        "config-change",
        ConfigEntityChangeNotificationSequenceZNode.decode,
        NOT_AN_OBJECT
        + [
            b'"foo"',  # 0.8.x wrote the bare topic name as a JSON string; 2.x rejects it too
            doc({"entity_path": "topics/foo"}),
            doc({"version": 3, "entity_path": "topics/foo"}),
            doc({"version": "2", "entity_path": "topics/foo"}),
            doc({"version": 2}),
            doc({"version": 2, "entity_path": 5}),
            doc({"version": 1, "entity_type": "topics"}),
        ],
    ),
    ("cluster-id", ClusterIdZNode.decode, NOT_AN_OBJECT + [doc({"version": "1"}), doc({"version": "1", "id": 5})]),
    (
        "producer-id-block",
        ProducerIdBlockZNode.decode,
        NOT_AN_OBJECT
        + [
            doc({"version": 1, "block_start": "0", "block_end": "999"}),
            doc({"version": 1, "broker": 0, "block_end": "999"}),
            doc({"version": 1, "broker": 0, "block_start": "0"}),
            doc({"version": 1, "broker": 0, "block_start": "abc", "block_end": "999"}),
            doc({"version": 1, "broker": 0, "block_start": "", "block_end": "999"}),
            doc({"version": 1, "broker": 0, "block_start": True, "block_end": "999"}),
            doc({"version": 1, "broker": 0, "block_start": 1.5, "block_end": "999"}),
            doc({"version": 1, "broker": "0", "block_start": "0", "block_end": "999"}),
        ],
    ),
    (
        "broker",
        lambda d: BrokerIdZNode.decode(0, d),
        NOT_AN_OBJECT
        + [
            doc({"endpoints": ["PLAINTEXT://h:1"]}),
            doc({"version": "4", "endpoints": ["PLAINTEXT://h:1"]}),
            doc({"version": 4, "endpoints": "PLAINTEXT://h:1"}),
            doc({"version": 4, "endpoints": [1]}),
            doc({"version": 4, "endpoints": ["h:1"]}),
            doc({"version": 4, "endpoints": ["PLAINTEXT://h"]}),
            doc({"version": 4, "endpoints": ["PLAINTEXT://h:port"]}),
            doc({"version": 4, "endpoints": ["PLAINTEXT://h:1"], "timestamp": "abc"}),
            doc({"version": 4, "endpoints": ["PLAINTEXT://h:1"], "listener_security_protocol_map": ["PLAINTEXT"]}),
            doc({"version": 5, "endpoints": ["PLAINTEXT://h:1"], "features": {"f": 1}}),
            doc({"version": 5, "endpoints": ["PLAINTEXT://h:1"], "features": {"f": {"min_version": 1}}}),
            doc({"version": 1, "host": "h"}),
            doc({"version": 1, "port": 1}),
            doc({"version": 1, "host": "h", "port": "1"}),
        ],
    ),
    (
        "feature",
        FeatureZNode.decode,
        NOT_AN_OBJECT
        + [
            doc({"version": 1, "status": 1}),
            doc({"features": {}, "version": 1}),
            doc({"features": [], "status": 1}),
            doc({"features": {}, "status": "1"}),
            doc({"features": {"f": 1}, "status": 1}),
            doc({"features": {"f": {"max_version_level": 2}}, "status": 1}),
        ],
    ),
    (
        "acl",
        lambda d: AclZNode.decode("/kafka-acl/Topic/foo", d),
        NOT_AN_OBJECT
        + [
            doc({"version": 1}),
            doc({"version": 1, "acls": ["User:a"]}),
            doc({"version": 1, "acls": [{"principal": "User:a", "permissionType": "Allow", "operation": "Read"}]}),
        ],
    ),
    ("acl-change", AclChangeNotificationSequenceZNode.decode, [b"", b"Topic"]),
    (
        "extended-acl-change",
        ExtendedAclChangeNotificationSequenceZNode.decode,
        NOT_AN_OBJECT + [doc({"version": 1, "resourceType": "Topic", "patternType": "LITERAL"})],
    ),
    ("consumer-offset", lambda d: ConsumerOffsetZNode.decode("g", "t", 0, d), [b"", b"abc", b"1.0", b"\xff"]),
]  # fmt: skip

MALFORMED_CASES = [
    pytest.param(decoder, data, id=f"{name}-{i}") for name, decoder, cases in MALFORMED for i, data in enumerate(cases)
]


@pytest.mark.parametrize(("decoder", "data"), MALFORMED_CASES)
def test_malformed_data_raises_malformed_znode_error(decoder: Decoder, data: bytes) -> None:
    with pytest.raises(MalformedZNodeError) as info:
        decoder(data)
    assert info.value.data == data
    assert info.value.path.startswith("/")


@pytest.mark.parametrize(
    "decoder",
    [d for name, d, _ in VALID_DOCUMENTS if name != "config"]
    + [ControllerEpochZNode.decode, lambda d: ConsumerOffsetZNode.decode("g", "t", 0, d)],
)
def test_missing_data_is_malformed_not_empty(decoder: Decoder) -> None:
    # A znode that exists with null data is not "no value" (a missing znode is the caller's None).
    with pytest.raises(MalformedZNodeError):
        decoder(None)  # type: ignore[arg-type]


def test_malformed_error_names_the_path_and_reason() -> None:
    with pytest.raises(MalformedZNodeError) as info:
        TopicPartitionStateZNode.decode("t", 3, b"[]", 0)
    assert info.value.path == "/brokers/topics/t/partitions/3/state"
    assert str(info.value).startswith("Malformed data in znode /brokers/topics/t/partitions/3/state: ")


def test_topic_partition_key_with_unicode_digit_is_malformed() -> None:
    with pytest.raises(MalformedZNodeError):
        TopicZNode.decode("t", doc({"version": 1, "partitions": {"\u00b2": [1]}}))


def test_topic_id_of_wrong_type_is_malformed() -> None:
    with pytest.raises(MalformedZNodeError):
        TopicZNode.decode("t", doc({"version": 3, "partitions": {"0": [1]}, "topic_id": 5}))


@pytest.mark.parametrize(
    "extra",
    [{"features": "x"}, {"features": [1]}, {"jmx_port": "x"}, {"jmx_port": True}, {"rack": 5}],
    ids=["features-str", "features-list", "jmx-str", "jmx-bool", "rack-int"],
)
def test_broker_optional_fields_of_wrong_type_are_malformed(extra: dict[str, Any]) -> None:
    data = doc({"version": 5, "endpoints": ["PLAINTEXT://h:1"], "jmx_port": -1, "timestamp": "1", **extra})
    with pytest.raises(MalformedZNodeError):
        BrokerIdZNode.decode(0, data)


def test_acl_change_that_is_not_utf8_is_malformed() -> None:
    with pytest.raises(MalformedZNodeError):
        AclChangeNotificationSequenceZNode.decode(b"Topic:\xff")


@pytest.mark.parametrize(
    ("decoder", "data"),
    [
        pytest.param(ControllerEpochZNode.decode, b"1_0", id="controller-epoch"),
        pytest.param(lambda d: ConsumerOffsetZNode.decode("g", "t", 0, d), b"1_0", id="consumer-offset"),
        pytest.param(
            ProducerIdBlockZNode.decode,
            doc({"version": 1, "broker": 0, "block_start": "1_000", "block_end": "1999"}),
            id="producer-id-block",
        ),
        pytest.param(
            lambda d: BrokerIdZNode.decode(0, d),
            doc({"version": 4, "endpoints": ["PLAINTEXT://h:1"], "jmx_port": -1, "timestamp": "1_0"}),
            id="broker-timestamp",
        ),
    ],
)
def test_python_only_integer_syntax_is_malformed(decoder: Decoder, data: bytes) -> None:
    with pytest.raises(MalformedZNodeError):
        decoder(data)


@pytest.mark.parametrize(
    ("decoder", "data"),
    [
        pytest.param(
            lambda d: TopicPartitionStateZNode.decode("t", 0, d, 0), doc({**STATE, "leader": 2**31}), id="leader"
        ),
        pytest.param(
            lambda d: TopicPartitionStateZNode.decode("t", 0, d, 0), doc({**STATE, "isr": [1, 2**31]}), id="isr"
        ),
        pytest.param(
            lambda d: TopicZNode.decode("t", d), doc({"version": 1, "partitions": {"0": [2**32]}}), id="replicas"
        ),
        pytest.param(ControllerZNode.decode, doc({"version": 1, "brokerid": -(2**31) - 1}), id="brokerid"),
    ],
)
def test_int_fields_are_32_bit(decoder: Decoder, data: bytes) -> None:
    with pytest.raises(MalformedZNodeError):
        decoder(data)


def test_config_document_without_config_key_is_malformed() -> None:
    with pytest.raises(MalformedZNodeError):
        ConfigEntityZNode.decode("/config/topics/t", doc({"version": 1}))


# --- round trips --------------------------------------------------------------------------------------------------

topics = st.from_regex(r"[a-zA-Z0-9._-]{1,249}", fullmatch=True)
partitions = st.integers(0, 2**31 - 1)
broker_ids = st.integers(0, 2**31 - 1)
epochs = st.integers(0, 2**31 - 1)
replica_lists = st.lists(broker_ids, min_size=1, max_size=6, unique=True).map(tuple)
topic_partitions = st.builds(TopicPartition, topics, partitions)
json_text = st.text(st.characters(codec="utf-8"), max_size=30)


@given(
    topic=topics,
    partition=partitions,
    leader=st.integers(-1, 2**31 - 1),
    leader_epoch=epochs,
    isr=st.lists(broker_ids, max_size=6, unique=True).map(tuple),
    controller_epoch=epochs,
    zk_version=st.integers(0, 2**31 - 1),
)
def test_partition_state_bytes_and_round_trip(
    topic: str,
    partition: int,
    leader: int,
    leader_epoch: int,
    isr: tuple[int, ...],
    controller_epoch: int,
    zk_version: int,
) -> None:
    value = state(leader, leader_epoch, isr, controller_epoch, zk=zk_version)
    data = TopicPartitionStateZNode.encode(value)
    isr_text = ",".join(map(str, isr))
    assert (
        data
        == (
            f'{{"controller_epoch":{controller_epoch},"leader":{leader},"version":1,'
            f'"leader_epoch":{leader_epoch},"isr":[{isr_text}]}}'
        ).encode()
    )
    assert TopicPartitionStateZNode.decode(topic, partition, data, zk_version) == value


@given(st.dictionaries(topic_partitions, replica_lists, max_size=8))
def test_reassign_partitions_bytes_and_round_trip(reassignment: dict[TopicPartition, tuple[int, ...]]) -> None:
    data = ReassignPartitionsZNode.encode(reassignment)
    entries = ",".join(
        f'{{"topic":"{tp.topic}","partition":{tp.partition},"replicas":[{",".join(map(str, r))}]}}'
        for tp, r in reassignment.items()
    )
    assert data == f'{{"version":1,"partitions":[{entries}]}}'.encode()
    assert ReassignPartitionsZNode.decode(data) == reassignment


@st.composite
def replica_assignments(draw: st.DrawFn) -> ReplicaAssignment:
    """Replicas, with disjoint adding and removing subsets (in replica order), as a reassignment leaves them."""
    replicas = draw(replica_lists)
    adding = draw(st.sets(st.sampled_from(replicas)))
    rest = [r for r in replicas if r not in adding]
    removing = draw(st.sets(st.sampled_from(rest))) if rest else set()
    return ReplicaAssignment(
        replicas,
        tuple(r for r in replicas if r in adding),
        tuple(r for r in replicas if r in removing),
    )


topic_ids = st.none() | st.from_regex(r"[A-Za-z0-9_-]{22}", fullmatch=True)


@given(topic=topics, assignment=st.dictionaries(partitions, replica_assignments(), max_size=8), topic_id=topic_ids)
def test_topic_round_trip(topic: str, assignment: dict[int, ReplicaAssignment], topic_id: str | None) -> None:
    data = TopicZNode.encode(assignment, topic_id)
    assert TopicZNode.decode(topic, data) == TopicAssignment(assignment, topic_id)
    assert list(json.loads(data)["partitions"]) == [str(p) for p in sorted(assignment)]


@given(st.lists(topic_partitions, max_size=8))
def test_partition_set_documents_round_trip(tps: list[TopicPartition]) -> None:
    for codec in (PreferredReplicaElectionZNode, IsrChangeNotificationSequenceZNode):
        data = codec.encode(tps)
        assert codec.decode(data) == set(tps)
        assert len(json.loads(data)["partitions"]) == len(set(tps))


@given(st.dictionaries(json_text, json_text, max_size=8))
def test_config_round_trip(config: dict[str, str]) -> None:
    data = ConfigEntityZNode.encode(config)
    assert list(json.loads(data)) == ["version", "config"]
    assert ConfigEntityZNode.decode("/config/topics/t", data) == config


@given(st.sampled_from(["topics", "brokers", "users", "clients", "ips"]), json_text.filter(bool))
def test_config_change_round_trip(entity_type: str, name: str) -> None:
    entity_path = f"{entity_type}/{sanitize_entity_name(name)}"
    assert (
        ConfigEntityChangeNotificationSequenceZNode.decode(
            ConfigEntityChangeNotificationSequenceZNode.encode(entity_path)
        )
        == entity_path
    )


@given(broker_ids, st.integers(0, 2**63 - 1))
def test_controller_round_trip(broker_id: int, timestamp: int) -> None:
    data = ControllerZNode.encode(broker_id, timestamp)
    assert data == f'{{"version":1,"brokerid":{broker_id},"timestamp":"{timestamp}"}}'.encode()
    assert ControllerZNode.decode(data) == broker_id


@given(epochs)
def test_controller_epoch_round_trip(epoch: int) -> None:
    assert ControllerEpochZNode.decode(ControllerEpochZNode.encode(epoch)) == epoch


@given(broker_ids)
def test_log_dir_event_round_trip(broker_id: int) -> None:
    assert (
        LogDirEventNotificationSequenceZNode.decode(LogDirEventNotificationSequenceZNode.encode(broker_id)) == broker_id
    )


@given(st.builds(ProducerIdBlock, broker_ids, st.integers(0, 2**63 - 1), st.integers(0, 2**63 - 1)))
def test_producer_id_block_round_trip(block: ProducerIdBlock) -> None:
    assert ProducerIdBlockZNode.decode(ProducerIdBlockZNode.encode(block)) == block


@given(st.from_regex(r"[A-Za-z0-9_-]{22}", fullmatch=True))
def test_cluster_id_round_trip(cluster_id: str) -> None:
    assert ClusterIdZNode.decode(ClusterIdZNode.encode(cluster_id)) == cluster_id


PROTOCOLS = ["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"]


@st.composite
def registrations(draw: st.DrawFn) -> BrokerRegistration:
    version = draw(st.sampled_from([4, 5]))
    names = draw(st.lists(st.from_regex(r"[A-Z][A-Z_]{0,11}", fullmatch=True), min_size=1, max_size=3, unique=True))
    hosts = st.from_regex(r"[a-z0-9]([a-z0-9.-]{0,20}[a-z0-9])?", fullmatch=True)
    endpoints = tuple(EndPoint(n, draw(hosts), draw(st.integers(0, 65535))) for n in names)
    feature_names = st.from_regex(r"[a-z.]{1,10}", fullmatch=True)
    version_ranges = st.tuples(st.integers(0, 9), st.integers(0, 9))
    features = draw(st.dictionaries(feature_names, version_ranges, max_size=2)) if version == 5 else {}
    return BrokerRegistration(
        broker_id=draw(broker_ids),
        endpoints=endpoints,
        timestamp_ms=draw(st.integers(0, 2**63 - 1)),
        rack=draw(st.none() | json_text),
        jmx_port=draw(st.integers(-1, 65535)),
        listener_security_protocol_map={n: draw(st.sampled_from(PROTOCOLS)) for n in names},
        features=features,
        version=version,
    )


@given(registrations())
def test_broker_registration_round_trip(broker: BrokerRegistration) -> None:
    data = BrokerIdZNode.encode(broker)
    assert BrokerIdZNode.decode(broker.broker_id, data) == broker
    plaintext = broker.plaintext_endpoint
    assert json.loads(data)["port"] == (plaintext.port if plaintext else -1)


# --- value types (§0.3, STYLE rule 6) ------------------------------------------------------------------------


def test_topic_partition_str() -> None:
    assert str(TopicPartition("foo", 0)) == "foo-0"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (LeaderAndIsr(1, 0, (1, 2), 0), "LeaderAndIsr(leader=1, leaderEpoch=0, isr=List(1, 2), zkVersion=0)"),
        (LeaderAndIsr(-1, 4, (), 7), "LeaderAndIsr(leader=-1, leaderEpoch=4, isr=List(), zkVersion=7)"),
        (state(1, 0, (1, 2), 1), "(Leader:1,ISR:1,2,LeaderEpoch:0,ControllerEpoch:1)"),
        (state(-1, 3, (), 2), "(Leader:-1,ISR:,LeaderEpoch:3,ControllerEpoch:2)"),
        (ReplicaAssignment((1, 2, 3)), "ReplicaAssignment(replicas=1,2,3, addingReplicas=, removingReplicas=)"),
        (
            ReplicaAssignment((4, 1, 2, 3), (4,), (3,)),
            "ReplicaAssignment(replicas=4,1,2,3, addingReplicas=4, removingReplicas=3)",
        ),
    ],
)
def test_state_change_log_text(value: object, expected: str) -> None:
    assert str(value) == expected


def test_new_leader_bumps_the_leader_epoch_only() -> None:
    # Kafka 1.1 - 2.8 LeaderAndIsr.newLeader: epoch + 1; ISR and zkVersion unchanged (the write sets zkVersion).
    assert LeaderAndIsr(1, 4, (1, 2), 7).new_leader(2) == LeaderAndIsr(2, 5, (1, 2), 7)


def test_new_leader_and_isr_bumps_the_leader_epoch() -> None:
    assert LeaderAndIsr(1, 4, (1, 2), 7).new_leader_and_isr(2, [2, 3]) == LeaderAndIsr(2, 5, (2, 3), 7)


def test_new_epoch_keeps_the_zk_version() -> None:
    assert LeaderAndIsr(1, 4, (1, 2), 7).new_epoch() == LeaderAndIsr(1, 5, (1, 2), 7)


def test_with_zk_version_and_has_leader() -> None:
    lai = LeaderAndIsr(-1, 0, ())
    assert lai.zk_version == 0
    assert lai.with_zk_version(3) == LeaderAndIsr(-1, 0, (), 3)
    assert not lai.has_leader
    assert not LeaderAndIsr(-2, 0, ()).has_leader
    assert LeaderAndIsr(0, 0, (0,)).has_leader


def test_values_are_immutable() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        LeaderAndIsr(1, 0, (1,)).leader = 2  # type: ignore[misc]


# ControllerContextTest.testPartitionReplicaAssignment / testReassignTo / testReassignToIdempotence


@pytest.mark.parametrize(
    ("current", "target", "expected"),
    [
        (ReplicaAssignment((1, 2, 3, 4)), (4, 2, 5, 3), ReplicaAssignment((4, 2, 5, 3, 1), (5,), (1,))),
        (ReplicaAssignment((1, 2, 3)), (4, 5, 6), ReplicaAssignment((4, 5, 6, 1, 2, 3), (4, 5, 6), (1, 2, 3))),
        (ReplicaAssignment((1, 2, 3)), (3, 1, 2), ReplicaAssignment((3, 1, 2))),
        (
            ReplicaAssignment((4, 5, 6, 1, 2, 3), (4, 5, 6), (1, 2, 3)),
            (7, 8, 9),
            ReplicaAssignment((7, 8, 9, 1, 2, 3), (7, 8, 9), (1, 2, 3)),
        ),
        (ReplicaAssignment((4, 5, 6, 1, 2, 3), (4, 5, 6), (1, 2, 3)), (1, 2, 3), ReplicaAssignment((1, 2, 3))),
    ],
)
def test_reassign_to_kafka_cases(
    current: ReplicaAssignment, target: tuple[int, ...], expected: ReplicaAssignment
) -> None:
    result = current.reassign_to(target)
    assert result == expected
    assert result.target_replicas == target


@pytest.mark.parametrize(
    ("assignment", "target", "origin", "reassigning"),
    [
        (ReplicaAssignment((1, 2, 3, 4, 5, 6), (2, 3, 4), (1, 5, 6)), (2, 3, 4), (1, 5, 6), True),
        (ReplicaAssignment((1, 2, 3, 4), (), (1, 4)), (2, 3), (1, 2, 3, 4), True),
        (ReplicaAssignment((1, 2, 3, 4), (4,), (2,)), (1, 3, 4), (1, 2, 3), True),
        (ReplicaAssignment((1, 2, 3, 4, 5, 6)), (1, 2, 3, 4, 5, 6), (1, 2, 3, 4, 5, 6), False),
    ],
)
def test_target_and_origin_replicas(
    assignment: ReplicaAssignment, target: tuple[int, ...], origin: tuple[int, ...], reassigning: bool
) -> None:
    assert assignment.target_replicas == target
    assert assignment.original_replicas == origin
    assert assignment.is_being_reassigned is reassigning


def scala_diff(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """Scala Seq#diff: multiset difference, keeping a's order."""
    left = list(b)
    out = []
    for x in a:
        if x in left:
            left.remove(x)
        else:
            out.append(x)
    return tuple(out)


@given(current=replica_assignments(), target=replica_lists)
def test_reassign_to_matches_kafka(current: ReplicaAssignment, target: tuple[int, ...]) -> None:
    # ReplicaAssignment.reassignTo: full = (target ++ originReplicas).distinct,
    # adding = full diff originReplicas, removing = full diff target.
    origin = scala_diff(current.replicas, current.adding_replicas)
    full = tuple(dict.fromkeys(target + origin))
    expected = ReplicaAssignment(full, scala_diff(full, origin), scala_diff(full, target))
    result = current.reassign_to(target)
    assert result == expected
    assert result.reassign_to(result.target_replicas) == result  # testReassignToIdempotence


def test_a_state_znode_path_names_its_partition():
    path = TopicPartitionStateZNode.path("a-b.c", 17)
    assert TopicPartitionStateZNode.partition_of(path) == TopicPartition("a-b.c", 17)
    for other in (
        "/brokers/topics/t/partitions/0",
        "/brokers/topics/t/partitions/x/state",
        "/controller",
        "/a/b/c/d/e/f",
    ):
        assert TopicPartitionStateZNode.partition_of(other) is None


ZNODE_VALUES = [
    {"controller_epoch": 3, "leader": 1, "version": 1, "leader_epoch": 7, "isr": [1, 2, 3]},
    {"version": 2, "partitions": {"0": [1, 2], "1": [2, 3]}, "adding_replicas": {}, "removing_replicas": {}},
    {"version": 1, "config": {"cleanup.policy": "compact", "note": "naïve – ünïcödé ☃", "quote": 'a"b\\c\n'}},
    {"features": {}, "listener_security_protocol_map": {"PLAINTEXT": "PLAINTEXT"}, "rack": None, "port": -1},
    {1: "int keys", "big": 2**70, "neg": -(2**63), "empty": [], "nested": [[{}], {"x": [None, True, False]}]},
]


@pytest.mark.parametrize("value", ZNODE_VALUES)
def test_znode_json_is_the_same_with_orjson_and_the_json_module(value: Any) -> None:
    """orjson writes and reads znodes when installed, the json module otherwise (KAFKAOPS_PURE_PYTHON=1):
    both give the same bytes and the same values."""
    pytest.importorskip("orjson")
    expected = znodes._json_dumps(value)
    assert znodes._orjson_dumps(value) == expected
    assert znodes._orjson_loads(expected) == znodes._json_loads(expected)


@pytest.mark.parametrize("data", [b'{"a": NaN}', b'{"a": 1', b"\xff\xfe", b'{"n": 123456789012345678901234567890}'])
def test_what_orjson_refuses_the_json_module_reads_or_refuses_as_before(data: bytes) -> None:
    pytest.importorskip("orjson")
    try:
        expected: Any = znodes._json_loads(data)
    except ValueError as error:
        with pytest.raises(type(error)):
            znodes._orjson_loads(data)
    else:
        assert znodes._orjson_loads(data) == expected


@given(
    st.integers(-(2**31), 2**31 - 1),
    st.integers(-1, 2**31 - 1),
    st.integers(0, 2**31 - 1),
    st.lists(st.integers(0, 2**31 - 1), max_size=6),
)
def test_partition_state_bytes_are_the_json_encoders(controller_epoch: int, leader: int, epoch: int, isr: list[int]):
    encoded = TopicPartitionStateZNode.encode(state(leader, epoch, tuple(isr), controller_epoch))
    expected = {"controller_epoch": controller_epoch, "leader": leader, "version": 1, "leader_epoch": epoch, "isr": isr}
    assert encoded == json.dumps(expected, separators=(",", ":")).encode()
    assert TopicPartitionStateZNode.decode("t", 0, encoded, 0).leader_and_isr.isr == tuple(isr)


_state_number = st.one_of(
    st.integers(-5, 5), st.integers(-(2**40), 2**40), st.sampled_from([2**31 - 1, -(2**31), 2**31])
)


@st.composite
def _state_bytes(draw: st.DrawFn) -> bytes:
    """Partition-state znodes as Kafka writes them, and near misses: other key orders, spaces, numbers
    past 32 bits or with a leading zero, another version, a missing field, a bool."""
    fields = {
        "controller_epoch": draw(_state_number),
        "leader": draw(_state_number),
        "version": draw(st.sampled_from([1, 1, 1, 2])),
        "leader_epoch": draw(_state_number),
        "isr": draw(st.lists(_state_number, max_size=4)),
    }
    if draw(st.booleans()):
        del fields[draw(st.sampled_from(sorted(fields)))]
    if draw(st.integers(0, 9)) == 0:
        fields["leader"] = True
    keys = list(fields)
    if draw(st.integers(0, 4)) == 0:
        keys = draw(st.permutations(keys))
    text = json.dumps({k: fields[k] for k in keys}, separators=(",", ":") if draw(st.booleans()) else None)
    if draw(st.integers(0, 9)) == 0:
        text = text.replace(":", ":0", 1)  # a leading zero: not JSON
    return text.encode()


def _outcome(decode: Callable[[], LeaderIsrAndControllerEpoch]) -> object:
    try:
        return decode()
    except MalformedZNodeError as error:
        return str(error)


def _general_decode(data: bytes) -> LeaderIsrAndControllerEpoch:
    """The decoder without its fast path."""
    original = znodes._decode_state_as_written
    znodes._decode_state_as_written = lambda data, zk_version: None  # type: ignore[assignment]
    try:
        return TopicPartitionStateZNode.decode("t", 0, data, 4)
    finally:
        znodes._decode_state_as_written = original


@given(_state_bytes())
def test_partition_state_decode_reads_and_refuses_what_the_general_decoder_does(data: bytes) -> None:
    expected = _outcome(lambda: _general_decode(data))
    assert _outcome(lambda: TopicPartitionStateZNode.decode("t", 0, data, 4)) == expected


@given(st.integers(-1, 10**9 - 1), st.integers(0, 10**9 - 1), st.lists(st.integers(0, 10**9 - 1), max_size=5))
def test_partition_state_as_written_takes_the_fast_path(leader: int, epoch: int, isr: list[int]) -> None:
    written = state(leader, epoch, tuple(isr), 7, zk=4)
    assert znodes._decode_state_as_written(TopicPartitionStateZNode.encode(written), 4) == written


@pytest.mark.parametrize(
    "data",
    [
        b'{"controller_epoch":2147483647,"leader":1,"version":1,"leader_epoch":0,"isr":[1]}',
        b'{"controller_epoch":1,"leader":1,"version":1,"leader_epoch":2147483648,"isr":[1]}',
        b'{"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,"isr":[1,2147483648]}',
        b'{"controller_epoch":1,"leader":-2147483649,"version":1,"leader_epoch":0,"isr":[]}',
        b'{"controller_epoch":1,"leader":01,"version":1,"leader_epoch":0,"isr":[1]}',
        b'{"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,"isr":[1,]}',
        b'{"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,"isr":[1]} ',
        b'{"controller_epoch": 1, "leader": 1, "version": 1, "leader_epoch": 0, "isr": [1]}',
        b'{"controller_epoch":1,"leader":1,"version":2,"leader_epoch":0,"isr":[1]}',
    ],
)
def test_partition_state_edges_read_as_the_general_decoder_reads_them(data: bytes) -> None:
    assert _outcome(lambda: TopicPartitionStateZNode.decode("t", 0, data, 4)) == _outcome(lambda: _general_decode(data))
