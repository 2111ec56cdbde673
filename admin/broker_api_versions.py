"""Kafka's BrokerApiVersionsCommand (`kafka-broker-api-versions.sh`): every broker's advertised API versions.

As Kafka's tool does: a Metadata request to any bootstrap server names the brokers, then each broker is
asked ApiVersions over its own connection; a broker that cannot be reached or answers an error is
reported as such, the others are still listed. The text is `kafka_client.node_api_versions`'.
"""

from __future__ import annotations

from dataclasses import dataclass

from kafkaops.admin.kafka_client import BrokerNode, KafkaClient, parse_bootstrap_servers
from kafkaops.admin.kafka_client.connection import CLIENT_SOFTWARE, NotSent
from kafkaops.admin.kafka_client.node_api_versions import VersionRange, node_text
from kafkaops.cluster.common.errors import AdminOperationError, KafkaProtocolError, NetworkExceptionError, from_code
from kafkaops.cluster.protocol.schemas import ApiKey


@dataclass(frozen=True, slots=True)
class BrokerVersionInfo:
    """One broker and what it advertised, or why it could not be asked (Kafka's `Try[NodeApiVersions]`)."""

    node: BrokerNode
    versions: dict[int, VersionRange] | None
    error: str | None = None

    @property
    def node_text(self) -> str:
        return node_text(self.node.host, self.node.port, self.node.node_id, self.node.rack)


def list_all_broker_version_info(client: KafkaClient, bootstrap_servers: str) -> list[BrokerVersionInfo]:
    """Each broker the metadata names, in the metadata's order, with its ApiVersions answer.

    Raises AdminOperationError with Kafka's text when no bootstrap server answers the Metadata request."""
    try:
        cluster = client.metadata([])
    except NetworkExceptionError:
        nodes = ", ".join(node_text(host, port, -1, None) for host, port in parse_bootstrap_servers(bootstrap_servers))
        raise AdminOperationError(f"Request METADATA failed on brokers List({nodes})") from None
    return [_broker_versions(client, node) for node in cluster.brokers.values()]


def _broker_versions(client: KafkaClient, node: BrokerNode) -> BrokerVersionInfo:
    try:
        _, answer = client.broker_request(node.node_id, ApiKey.API_VERSIONS, CLIENT_SOFTWARE)  # KIP-511: v3 names it
        if answer["error_code"]:
            raise from_code(answer["error_code"])
    except NotSent as unsent:
        return BrokerVersionInfo(node, None, str(unsent.error))
    except KafkaProtocolError as error:
        return BrokerVersionInfo(node, None, str(error))
    return BrokerVersionInfo(node, {k["api_key"]: (k["min_version"], k["max_version"]) for k in answer["api_keys"]})
