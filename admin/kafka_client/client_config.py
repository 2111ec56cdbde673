"""A `KafkaClient` from a tool's `--bootstrap-server` and `--command-config` (Kafka's client properties file).

Kafka's tools load the file with `Utils.loadProps`, set `bootstrap.servers` and their own `client.id` over
it, and hand it to a consumer or admin client. This client speaks PLAINTEXT only, so a file asking for
TLS or SASL is refused with a clear message instead of failing on the wire; the timing settings it
understands are applied; every other property is ignored, as Kafka's clients ignore (and log) unknown ones.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from kafkaops.admin.configs import load_properties
from kafkaops.admin.kafka_client.client import KafkaClient
from kafkaops.cluster.common.errors import InvalidArgumentError
from kafkaops.cluster.common.jvm_text import java_parse_int


def load_command_config(path: str | None) -> dict[str, str]:
    """The properties of `--command-config` (none without one). Raises InvalidArgumentError."""
    return {} if path is None else load_properties(Path(path))


def client_from_properties(bootstrap_servers: str, properties: Mapping[str, str], client_id: str) -> KafkaClient:
    """A client on `bootstrap_servers` named `client_id` (the tool's, over the file's, as Kafka's tools do).

    Raises InvalidArgumentError for a security protocol other than PLAINTEXT, a timing setting that is not
    a number, or bad bootstrap servers (Kafka's texts)."""
    protocol = properties.get("security.protocol", "PLAINTEXT").strip().upper()
    if protocol != "PLAINTEXT":
        raise InvalidArgumentError(
            f"security.protocol={protocol} in --command-config: kafkaops' Kafka client speaks PLAINTEXT only"
        )

    def setting(name: str, default: int) -> int:
        return java_parse_int(properties[name].strip()) if name in properties else default

    return KafkaClient(
        bootstrap_servers,
        client_id=client_id,
        request_timeout_ms=setting("request.timeout.ms", 30000),
        retry_backoff_ms=setting("retry.backoff.ms", 100),
    )
