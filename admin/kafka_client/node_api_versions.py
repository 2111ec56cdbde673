"""Kafka's `NodeApiVersions`: the API versions a broker advertises, as `kafka-broker-api-versions.sh` prints them.

The APIs and their names are the codec's (Kafka 2.8's message files); which of them a ZooKeeper-mode
broker serves (the files' `listeners`, which the codec ignores) is `NON_ZK_BROKER_APIS`. A broker's
answer is printed one API per line in key order: `Name(key): min to max [usable: v]`, where v is the
highest version both the broker and this client speak (`[unusable: node too new]` / `[unusable: node
too old]` when there is none), the `UNSUPPORTED` line for a ZooKeeper-broker API the broker does not
list, `UNKNOWN(key)` for a key the codec does not know. An API the codec knows but this client does not
speak (none since the codec took Kafka 2.8's files) prints its range without a usable version.
"""

from __future__ import annotations

from collections.abc import Mapping

from kafkaops.cluster.protocol.schemas import REQUESTS, ApiKey

VersionRange = tuple[int, int]

NON_ZK_BROKER_APIS = frozenset(
    {
        ApiKey.VOTE,
        ApiKey.BEGIN_QUORUM_EPOCH,
        ApiKey.END_QUORUM_EPOCH,
        ApiKey.DESCRIBE_QUORUM,
        ApiKey.ENVELOPE,
        ApiKey.FETCH_SNAPSHOT,
        ApiKey.BROKER_REGISTRATION,
        ApiKey.BROKER_HEARTBEAT,
        ApiKey.UNREGISTER_BROKER,
    }
)
"""Kafka 2.8's APIs a ZooKeeper-mode broker does not serve (their JSON `listeners` lack `zkBroker`): Kafka
prints no UNSUPPORTED line for them."""


def api_name(api_key: int) -> str | None:
    """Kafka's name of an API (`ApiKeys.name`: its request message's name without "Request"), None if unknown."""
    try:
        return REQUESTS[ApiKey(api_key)].name.removesuffix("Request")
    except (ValueError, KeyError):
        return None


def api_version_text(api_key: int, versions: VersionRange, ours: Mapping[int, VersionRange]) -> str:
    """Kafka's `NodeApiVersions.apiVersionToText` for one API the broker advertises."""
    low, high = versions
    name = api_name(api_key)
    text = f"{name}({api_key}): " if name else f"UNKNOWN({api_key}): "
    text += str(low) if low == high else f"{low} to {high}"
    if name is None or api_key not in ours:
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
    for key in ApiKey:
        if key not in texts and key not in NON_ZK_BROKER_APIS:
            texts[key] = f"{api_name(key)}({int(key)}): UNSUPPORTED"
    return "(\n\t" + ",\n\t".join(texts[key] for key in sorted(texts)) + "\n)"


def node_text(host: str, port: int, node_id: int, rack: str | None) -> str:
    """Kafka's `Node.toString`."""
    return f"{host}:{port} (id: {node_id} rack: {rack if rack is not None else 'null'})"
