"""DescribeAcls, CreateAcls and DeleteAcls (Kafka 2.8's `KafkaApis.handleDescribeAcls` / `handleCreateAcls`
/ `handleDeleteAcls`, later Kafka's `AclApis`): Describe on the cluster to list, Alter to change
(CLUSTER_AUTHORIZATION_FAILED otherwise); SECURITY_DISABLED without an authorizer. Writes go to
ZooKeeper through the broker's authorizer, which leaves the change notifications every broker applies.

Blocking (ZooKeeper): the handlers call these on the loop's executor.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kafkaops.admin import acl_wire
from kafkaops.admin.acl_authorizer import AclApiError, AclAuthorizer
from kafkaops.cluster.common import errors
from kafkaops.cluster.common.acl import CLUSTER_NAME, AclBinding, ResourceType

Body = Mapping[str, Any]
NO_AUTHORIZER = "No Authorizer is configured on the broker"
CLUSTER_AUTHORIZATION_FAILED = "Cluster authorization failed."


def describe_acls(authorizer: AclAuthorizer | None, cluster_authorized: bool, body: Body) -> dict[str, Any]:
    if not cluster_authorized:
        return acl_wire.describe_response((), errors.ClusterAuthorizationFailedError.code, CLUSTER_AUTHORIZATION_FAILED)
    if authorizer is None:
        return acl_wire.describe_response((), errors.SecurityDisabledError.code, NO_AUTHORIZER)
    binding_filter = acl_wire.filter_from_wire(body)
    if binding_filter.is_unknown:
        return acl_wire.describe_response((), errors.InvalidRequestError.code, "The filter contains UNKNOWN elements")
    return acl_wire.describe_response(authorizer.acls(binding_filter))


def _creation_error(binding: AclBinding) -> AclApiError | None:
    """`handleCreateAcls`' own checks, before the authorizer's."""
    pattern = binding.pattern
    if pattern.resource_type is ResourceType.CLUSTER and pattern.name != CLUSTER_NAME:
        return AclApiError(
            errors.InvalidRequestError.code, f"The only valid name for the CLUSTER resource is {CLUSTER_NAME}"
        )
    if not pattern.name:
        return AclApiError(errors.InvalidRequestError.code, "Invalid empty resource name")
    return None


def create_acls(authorizer: AclAuthorizer | None, cluster_authorized: bool, body: Body) -> dict[str, Any]:
    creations = list(body["creations"])
    if not cluster_authorized or authorizer is None:
        error = (
            AclApiError(errors.ClusterAuthorizationFailedError.code, CLUSTER_AUTHORIZATION_FAILED)
            if not cluster_authorized
            else AclApiError(errors.SecurityDisabledError.code, f"{NO_AUTHORIZER}.")
        )
        return _create_response([error] * len(creations))
    results: list[AclApiError | None] = [None] * len(creations)
    valid: list[tuple[int, AclBinding]] = []
    for index, creation in enumerate(creations):
        try:
            binding = acl_wire.creation_from_wire(creation)
        except ValueError as error:
            results[index] = AclApiError(errors.InvalidRequestError.code, str(error))
            continue
        results[index] = _creation_error(binding)
        if results[index] is None:
            valid.append((index, binding))
    created = authorizer.create_acls([binding for _, binding in valid])
    for (index, _), result in zip(valid, created, strict=True):
        results[index] = result
    return _create_response(results)


def _create_response(results: list[AclApiError | None]) -> dict[str, Any]:
    return {
        "throttle_time_ms": 0,
        "results": [
            {"error_code": 0, "error_message": None}
            if result is None
            else {"error_code": result.code, "error_message": result.message}
            for result in results
        ],
    }


def delete_acls(authorizer: AclAuthorizer | None, cluster_authorized: bool, body: Body) -> dict[str, Any]:
    filters = [acl_wire.filter_from_wire(f) for f in body["filters"]]
    if not cluster_authorized or authorizer is None:
        code, message = (
            (errors.ClusterAuthorizationFailedError.code, CLUSTER_AUTHORIZATION_FAILED)
            if not cluster_authorized
            else (errors.SecurityDisabledError.code, f"{NO_AUTHORIZER}.")
        )
        return acl_wire.delete_response(
            [{"error_code": code, "error_message": message, "matching_acls": []} for _ in filters]
        )
    results = authorizer.delete_acls(filters)
    return acl_wire.delete_response(
        [
            {
                "error_code": 0,
                "error_message": None,
                "matching_acls": [
                    acl_wire.matching_acl_to_wire(binding, error.code if error else 0, error.message if error else None)
                    for binding, error in deleted
                ],
            }
            for deleted in results
        ]
    )
