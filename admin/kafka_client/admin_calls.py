"""How an Admin API call reaches a broker and how its errors come back (Kafka's `KafkaAdminClient.Call`
and its node providers), shared by the admin call modules (`topic_admin`, `config_admin`,
`reassignment_admin`).

    to the controller    CreateTopics, DeleteTopics, CreatePartitions, AlterPartitionReassignments,
                         ListPartitionReassignments, ElectLeaders: retried on NOT_CONTROLLER after
                         refreshing the metadata, as Kafka's `ControllerNodeProvider`
    to any broker        DescribeConfigs / AlterConfigs of topics and of the broker default
    to one broker        DescribeConfigs / AlterConfigs of a broker id, AlterReplicaLogDirs

An error a broker answers becomes the error class of its code with the broker's message, or, when it
sent none, Kafka's default text of the code (`java_errors.default_message`), `named=False`: Kafka's
tools print the exception's message alone (`Error while executing topic command : Topic 't' already exists.`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kafkaops.admin.kafka_client.client import KafkaClient
from kafkaops.admin.kafka_client.connection import NotSent
from kafkaops.cluster.common.errors import BrokerError, NotControllerError, for_code
from kafkaops.cluster.common.java_errors import default_message
from kafkaops.cluster.protocol.schemas import ApiKey

NOT_CONTROLLER_RETRIES = 5


def broker_error(code: int, message: str | None = None) -> BrokerError:
    """The error for a non-zero code a broker answered, printed as Kafka's tools print its exception."""
    return for_code(code)(message or default_message(code), named=False)


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
            _, answer = client.controller_request(api_key, body, timeout_ms)
        else:
            _, answer = client.broker_request(broker_id, api_key, body, timeout_ms)
    except NotSent as unsent:
        raise unsent.error from None
    return answer
