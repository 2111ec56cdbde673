"""DescribeAcls, CreateAcls and DeleteAcls over `--bootstrap-server` (Kafka's `Admin.describeAcls` /
`createAcls` / `deleteAcls`), sent to any broker: in ZooKeeper mode every broker's authorizer serves them.
A broker's error is raised as the admin client's `.all().get()` would throw it: Kafka's exception text.
"""

from __future__ import annotations

from collections.abc import Sequence

from kafkaops.admin import acl_wire
from kafkaops.admin.kafka_client.client import KafkaClient
from kafkaops.cluster.common.acl import AclBinding, AclBindingFilter
from kafkaops.cluster.common.errors import AdminOperationError
from kafkaops.cluster.common.java_errors import java_exception_text
from kafkaops.cluster.protocol.schemas import ApiKey


def _failed(code: int, message: str | None) -> AdminOperationError:
    return AdminOperationError(java_exception_text(code, message))


def describe_acls(client: KafkaClient, binding_filter: AclBindingFilter) -> list[AclBinding]:
    """Raises AdminOperationError with the broker's error (SECURITY_DISABLED without an authorizer)."""
    _, response = client.controller_request(ApiKey.DESCRIBE_ACLS, acl_wire.filter_to_wire(binding_filter))
    if response["error_code"]:
        raise _failed(response["error_code"], response["error_message"])
    return acl_wire.bindings_from_describe_response(response)


def create_acls(client: KafkaClient, bindings: Sequence[AclBinding]) -> None:
    """Raises AdminOperationError with the first binding's error, as `createAcls(...).all().get()`."""
    body = {"creations": [acl_wire.creation_to_wire(b) for b in bindings]}
    _, response = client.controller_request(ApiKey.CREATE_ACLS, body)
    for result in response["results"]:
        if result["error_code"]:
            raise _failed(result["error_code"], result["error_message"])


def delete_acls(client: KafkaClient, filters: Sequence[AclBindingFilter]) -> list[AclBinding]:
    """The bindings deleted. Raises AdminOperationError with the first error, as `deleteAcls(...).all().get()`."""
    body = {"filters": [acl_wire.filter_to_wire(f) for f in filters]}
    _, response = client.controller_request(ApiKey.DELETE_ACLS, body)
    deleted = []
    for result in response["filter_results"]:
        if result["error_code"]:
            raise _failed(result["error_code"], result["error_message"])
        for acl in result["matching_acls"]:
            if acl["error_code"]:
                raise _failed(acl["error_code"], acl["error_message"])
            deleted.append(acl_wire.matching_acl_from_wire(acl))
    return deleted
