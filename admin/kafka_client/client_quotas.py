"""DescribeClientQuotas and AlterClientQuotas over `--bootstrap-server` (Kafka's `Admin.describeClientQuotas`
/ `alterClientQuotas`), sent to any broker: in ZooKeeper mode every broker serves them from ZooKeeper.

The bodies are made and read by `kafkaops.admin.client_quotas`, the same functions the broker answers with;
a broker's error comes back as the other Admin API calls' do (`admin_calls.broker_error`: printed as the
message alone, as Kafka's tools print an exception's message).
"""

from __future__ import annotations

from collections.abc import Sequence

from kafkaops.admin import client_quotas
from kafkaops.admin.client_quotas import FilterComponent, QuotaAlteration, QuotaEntity
from kafkaops.admin.kafka_client.admin_calls import broker_error
from kafkaops.admin.kafka_client.client import KafkaClient
from kafkaops.cluster.common.errors import BrokerError, KafkaOpsError
from kafkaops.cluster.protocol.schemas import ApiKey


def describe_client_quotas(
    client: KafkaClient, components: Sequence[FilterComponent], strict: bool = False
) -> list[tuple[QuotaEntity, dict[str, float]]]:
    """The quota entities a filter matches, with their quotas. Raises the broker's error for a bad filter."""
    body = client_quotas.describe_request_to_wire(components, strict)
    _, response = client.controller_request(ApiKey.DESCRIBE_CLIENT_QUOTAS, body)
    try:
        return client_quotas.describe_response_from_wire(response)
    except BrokerError as error:
        raise broker_error(error.code, error.message) from None


def alter_client_quotas(
    client: KafkaClient, alterations: Sequence[QuotaAlteration], validate_only: bool = False
) -> list[tuple[QuotaEntity, KafkaOpsError | None]]:
    """Per entity, None or the broker's error for it."""
    body = client_quotas.alter_request_to_wire(alterations, validate_only)
    _, response = client.controller_request(ApiKey.ALTER_CLIENT_QUOTAS, body)
    return [
        (entity, broker_error(error.code, error.message) if isinstance(error, BrokerError) else error)
        for entity, error in client_quotas.alter_response_from_wire(response)
    ]
