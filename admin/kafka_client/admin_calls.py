"""How an Admin API call reaches a broker and how its errors come back (Kafka's `KafkaAdminClient.Call`
and its node providers), shared by the admin call modules (`topic_admin`, `config_admin`,
`reassignment_admin`).

    to the controller    CreateTopics, DeleteTopics, CreatePartitions, AlterPartitionReassignments,
                         ListPartitionReassignments, ElectLeaders: retried on NOT_CONTROLLER after
                         refreshing the metadata, as Kafka's `ControllerNodeProvider`
    to any broker        DescribeConfigs / AlterConfigs of topics and of the broker default
    to one broker        DescribeConfigs / AlterConfigs of a broker id, AlterReplicaLogDirs

An error a broker answers becomes the error class of its code with the broker's message, or, when it
sent none, Kafka's default text of the code (`Errors.java`), `named=False`: Kafka's tools print the
exception's message alone (`Error while executing topic command : Topic 't' already exists.`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kafkaops.admin.kafka_client.client import KafkaClient
from kafkaops.admin.kafka_client.connection import NotSent
from kafkaops.cluster.common.errors import BrokerError, NotControllerError, for_code
from kafkaops.cluster.protocol.schemas import ApiKey

NOT_CONTROLLER_RETRIES = 5

DEFAULT_MESSAGES: Mapping[int, str] = {
    -1: "The server experienced an unexpected error when processing the request.",
    3: "This server does not host this topic-partition.",
    7: "The request timed out.",
    8: "The broker is not available.",
    17: "The request attempted to perform an operation on an invalid topic.",
    29: "Topic authorization failed.",
    31: "Cluster authorization failed.",
    35: "The version of API is not supported.",
    36: "Topic with this name already exists.",
    37: "Number of partitions is below 1.",
    38: "Replication factor is below 1 or larger than the number of available brokers.",
    39: "Replica assignment is invalid.",
    40: "Configuration is invalid.",
    41: "This is not the correct controller for this cluster.",
    42: "This most likely occurs because of a request being malformed by the client library or the message "
    "was sent to an incompatible broker. See the broker logs for more details.",
    44: "Request parameters do not satisfy the configured policy.",
    56: "Disk error when trying to access log file on the disk.",
    57: "The user-specified log directory is not found in the broker config.",
    60: "A partition reassignment is in progress.",
    73: "Topic deletion is disabled.",
    85: "No partition reassignment is in progress.",
    89: "The throttling quota has been exceeded.",
}
"""Kafka 2.8 `Errors.java` default messages of the codes the admin calls meet."""


def broker_error(code: int, message: str | None = None) -> BrokerError:
    """The error for a non-zero code a broker answered, printed as Kafka's tools print its exception."""
    return for_code(code)(message or DEFAULT_MESSAGES.get(code, ""), named=False)


def raise_for(code: int, message: str | None = None) -> None:
    if code:
        raise broker_error(code, message)


def to_controller(client: KafkaClient, api_key: ApiKey, body: Mapping[str, Any], timeout_ms: int = 0) -> dict[str, Any]:
    """Send to the controller; resend (with fresh metadata) while the answer says NOT_CONTROLLER at the
    top level or for every item. `timeout_ms` is the request's own wait, added to the socket timeout."""
    answer: dict[str, Any] = {}
    for _ in range(NOT_CONTROLLER_RETRIES):
        try:
            _, answer = client.controller_request(api_key, body, timeout_ms)
        except NotSent as unsent:
            raise unsent.error from None
        if not _says_not_controller(answer):
            return answer
    return answer


def _says_not_controller(answer: Mapping[str, Any]) -> bool:
    if answer.get("error_code") == NotControllerError.code:
        return True
    codes = [item.get("error_code") for items in answer.values() if isinstance(items, list) for item in items]
    return bool(codes) and all(code == NotControllerError.code for code in codes)


def to_broker(
    client: KafkaClient, broker_id: int | None, api_key: ApiKey, body: Mapping[str, Any], timeout_ms: int = 0
) -> dict[str, Any]:
    """Send to `broker_id`, or to any live broker for None (the controller if the metadata names one,
    as good as any: Kafka's `LeastLoadedNodeProvider`). Raises NetworkExceptionError when unreachable."""
    try:
        if broker_id is None:
            cluster = client.metadata([])
            broker_id = cluster.controller_id if cluster.controller_id in cluster.brokers else min(cluster.brokers)
        _, answer = client.broker_request(broker_id, api_key, body, timeout_ms)
    except NotSent as unsent:
        raise unsent.error from None
    return answer
