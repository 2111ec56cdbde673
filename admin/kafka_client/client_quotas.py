"""DescribeClientQuotas and AlterClientQuotas over `--bootstrap-server` (Kafka's `Admin.describeClientQuotas`
/ `alterClientQuotas`), sent to any broker: in ZooKeeper mode every broker serves them from ZooKeeper.

The bodies are made and read by `kafkaops.admin.client_quotas`, the same functions the broker answers with.
"""

from __future__ import annotations

from collections.abc import Sequence

from kafkaops.admin import client_quotas
from kafkaops.admin.client_quotas import FilterComponent, QuotaAlteration, QuotaEntity
from kafkaops.admin.kafka_client.client import KafkaClient
from kafkaops.cluster.common.errors import KafkaOpsError
from kafkaops.cluster.protocol.schemas import ApiKey


def describe_client_quotas(
    client: KafkaClient, components: Sequence[FilterComponent], strict: bool = False
) -> list[tuple[QuotaEntity, dict[str, float]]]:
    """The quota entities a filter matches, with their quotas. Raises the broker's error for a bad filter."""
    body = client_quotas.describe_request_to_wire(components, strict)
    _, response = client.controller_request(ApiKey.DESCRIBE_CLIENT_QUOTAS, body)
    return client_quotas.describe_response_from_wire(response)


def alter_client_quotas(
    client: KafkaClient, alterations: Sequence[QuotaAlteration], validate_only: bool = False
) -> list[tuple[QuotaEntity, KafkaOpsError | None]]:
    """Per entity, None or the broker's error for it."""
    body = client_quotas.alter_request_to_wire(alterations, validate_only)
    _, response = client.controller_request(ApiKey.ALTER_CLIENT_QUOTAS, body)
    return client_quotas.alter_response_from_wire(response)
