"""Kafka's `NodeApiVersions`: the API versions a broker advertises, as `kafka-broker-api-versions.sh` prints them.

`KAFKA_APIS` is Kafka 2.8's API table (`ApiKeys`): each key's name and whether a ZooKeeper-mode broker
serves it (its message JSON's `listeners` include `zkBroker`), from
`clients/src/main/resources/common/message/*Request.json`. A broker's answer is printed one API per line
in key order: `Name(key): min to max [usable: v]`, where v is the highest version both the broker and this
client speak (`[unusable: node too new]` / `[unusable: node too old]` when there is none), the
`UNSUPPORTED` line for a ZooKeeper-broker API the broker does not list, `UNKNOWN(key)` for a key this
table does not know. An API this table names but this client's codec does not speak prints its range
without a usable version (Kafka's client speaks every API it names).
"""

from __future__ import annotations

from collections.abc import Mapping

VersionRange = tuple[int, int]

KAFKA_APIS: Mapping[int, tuple[str, bool]] = {
    0: ("Produce", True),
    1: ("Fetch", True),
    2: ("ListOffsets", True),
    3: ("Metadata", True),
    4: ("LeaderAndIsr", True),
    5: ("StopReplica", True),
    6: ("UpdateMetadata", True),
    7: ("ControlledShutdown", True),
    8: ("OffsetCommit", True),
    9: ("OffsetFetch", True),
    10: ("FindCoordinator", True),
    11: ("JoinGroup", True),
    12: ("Heartbeat", True),
    13: ("LeaveGroup", True),
    14: ("SyncGroup", True),
    15: ("DescribeGroups", True),
    16: ("ListGroups", True),
    17: ("SaslHandshake", True),
    18: ("ApiVersions", True),
    19: ("CreateTopics", True),
    20: ("DeleteTopics", True),
    21: ("DeleteRecords", True),
    22: ("InitProducerId", True),
    23: ("OffsetForLeaderEpoch", True),
    24: ("AddPartitionsToTxn", True),
    25: ("AddOffsetsToTxn", True),
    26: ("EndTxn", True),
    27: ("WriteTxnMarkers", True),
    28: ("TxnOffsetCommit", True),
    29: ("DescribeAcls", True),
    30: ("CreateAcls", True),
    31: ("DeleteAcls", True),
    32: ("DescribeConfigs", True),
    33: ("AlterConfigs", True),
    34: ("AlterReplicaLogDirs", True),
    35: ("DescribeLogDirs", True),
    36: ("SaslAuthenticate", True),
    37: ("CreatePartitions", True),
    38: ("CreateDelegationToken", True),
    39: ("RenewDelegationToken", True),
    40: ("ExpireDelegationToken", True),
    41: ("DescribeDelegationToken", True),
    42: ("DeleteGroups", True),
    43: ("ElectLeaders", True),
    44: ("IncrementalAlterConfigs", True),
    45: ("AlterPartitionReassignments", True),
    46: ("ListPartitionReassignments", True),
    47: ("OffsetDelete", True),
    48: ("DescribeClientQuotas", True),
    49: ("AlterClientQuotas", True),
    50: ("DescribeUserScramCredentials", True),
    51: ("AlterUserScramCredentials", True),
    52: ("Vote", False),
    53: ("BeginQuorumEpoch", False),
    54: ("EndQuorumEpoch", False),
    55: ("DescribeQuorum", False),
    56: ("AlterIsr", True),
    57: ("UpdateFeatures", True),
    58: ("Envelope", False),
    59: ("FetchSnapshot", False),
    60: ("DescribeCluster", True),
    61: ("DescribeProducers", True),
    62: ("BrokerRegistration", False),
    63: ("BrokerHeartbeat", False),
    64: ("UnregisterBroker", False),
}
"""Kafka 2.8's API keys: (name, served by a ZooKeeper-mode broker)."""


def api_version_text(api_key: int, versions: VersionRange, ours: Mapping[int, VersionRange]) -> str:
    """Kafka's `NodeApiVersions.apiVersionToText` for one API the broker advertises."""
    low, high = versions
    known = KAFKA_APIS.get(api_key)
    text = f"{known[0]}({api_key}): " if known else f"UNKNOWN({api_key}): "
    text += str(low) if low == high else f"{low} to {high}"
    if known is None or api_key not in ours:
        return text
    oldest, latest = ours[api_key]
    if latest < low:
        return text + " [unusable: node too new]"
    if high < oldest:
        return text + " [unusable: node too old]"
    return text + f" [usable: {min(latest, high)}]"


def node_api_versions_text(advertised: Mapping[int, VersionRange], ours: Mapping[int, VersionRange]) -> str:
    """Kafka's `NodeApiVersions.toString(lineBreaks = true)`: `(`, one API per line (tab, comma), `)`."""
    texts = {key: api_version_text(key, versions, ours) for key, versions in advertised.items()}
    for key, (name, zk_broker) in KAFKA_APIS.items():
        if zk_broker and key not in texts:
            texts[key] = f"{name}({key}): UNSUPPORTED"
    return "(\n\t" + ",\n\t".join(texts[key] for key in sorted(texts)) + "\n)"


def node_text(host: str, port: int, node_id: int, rack: str | None) -> str:
    """Kafka's `Node.toString`."""
    return f"{host}:{port} (id: {node_id} rack: {rack if rack is not None else 'null'})"
