"""DescribeUserScramCredentials and AlterUserScramCredentials over `--bootstrap-server` (Kafka's
`Admin.describeUserScramCredentials` / `alterUserScramCredentials`): a describe goes to any broker, an
alteration to the controller (resent while the answer is NOT_CONTROLLER), as Kafka 2.8's admin client does.
The tool salts the password itself (`user_scram_credentials.scram_alterations`): it never crosses the wire.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kafkaops.admin.kafka_client.admin_calls import broker_error, raise_for, to_broker, to_controller
from kafkaops.admin.kafka_client.client import KafkaClient
from kafkaops.cluster.common.errors import BrokerError
from kafkaops.cluster.common.scram import ScramMechanism
from kafkaops.cluster.protocol.schemas import ApiKey


@dataclass(frozen=True)
class UserScramCredentialsDescription:
    """One user's answer: its mechanisms and iterations, or the broker's error for it."""

    user: str
    credential_infos: tuple[tuple[str, int], ...]
    error: BrokerError | None = None


def describe_user_scram_credentials(
    client: KafkaClient, users: Sequence[str] | None = None
) -> list[UserScramCredentialsDescription]:
    """Every user with credentials for None or [], else the users named. Raises the broker's top-level error."""
    body = {"users": None if users is None else [{"name": user} for user in users]}
    answer = to_broker(client, None, ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS, body)
    raise_for(answer["error_code"], answer.get("error_message"))
    return [_description(result) for result in answer["results"]]


def _description(result: Mapping[str, Any]) -> UserScramCredentialsDescription:
    infos = []
    for info in result["credential_infos"]:
        mechanism = ScramMechanism.from_type(info["mechanism"])
        infos.append((mechanism.mechanism_name if mechanism is not None else "UNKNOWN", info["iterations"]))
    error = broker_error(result["error_code"], result["error_message"]) if result["error_code"] else None
    return UserScramCredentialsDescription(result["user"], tuple(infos), error)


def alter_user_scram_credentials(
    client: KafkaClient, deletions: Sequence[Mapping[str, Any]], upsertions: Sequence[Mapping[str, Any]]
) -> list[tuple[str, BrokerError | None]]:
    """Per user, None or the broker's error for it."""
    answer = to_controller(
        client,
        ApiKey.ALTER_USER_SCRAM_CREDENTIALS,
        {"deletions": list(deletions), "upsertions": list(upsertions)},
    )
    return [
        (r["user"], broker_error(r["error_code"], r["error_message"]) if r["error_code"] else None)
        for r in answer["results"]
    ]
