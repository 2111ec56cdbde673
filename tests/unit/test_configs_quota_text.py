"""Kafka 2.8's `--bootstrap-server` describe line for client quotas (ConfigCommand.describeQuotaConfigs)."""

from __future__ import annotations

from kafkaops.cli.configs import quota_configs_text


def test_quota_configs_text() -> None:
    assert quota_configs_text({"user": "u"}, {"producer_byte_rate": 1024.0}) == (
        "Quota configs for user-principal 'u' are producer_byte_rate=1024.0"
    )
    # user before client-id whatever the entity's order; the values in the order of a java.util.HashMap
    # made with their count as its capacity (4 buckets here), as DescribeClientQuotasResponse makes it
    assert quota_configs_text(
        {"client-id": None, "user": "u"},
        {"producer_byte_rate": 1024.0, "consumer_byte_rate": 2048.0, "request_percentage": 50.5},
    ) == (
        "Quota configs for user-principal 'u', the default client-id are "
        "consumer_byte_rate=2048.0, producer_byte_rate=1024.0, request_percentage=50.5"
    )
    assert quota_configs_text({"client-id": "c 1"}, {"request_percentage": 1e-6}) == (
        "Quota configs for client-id 'c 1' are request_percentage=1.0E-6"
    )
