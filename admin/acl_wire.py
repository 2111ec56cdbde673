"""ACL bindings and filters on the wire (DescribeAcls, CreateAcls, DeleteAcls v0-2; Kafka's
`DescribeAclsRequest`/`Response`, `CreateAclsRequest.aclBinding`, `DeleteAclsResponse.filterResult`):
one conversion for the brokers' handlers and the admin client. Bodies are the decoded dicts of
cluster/protocol's message specs; v0 has no pattern type (the codec's default: LITERAL).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kafkaops.admin.acl_matching import group_by_pattern
from kafkaops.cluster.common.acl import (
    AccessControlEntry,
    AccessControlEntryFilter,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourcePatternFilter,
    ResourceType,
)

Body = Mapping[str, Any]


def filter_from_wire(body: Body) -> AclBindingFilter:
    """A DescribeAcls request, or one filter of a DeleteAcls request."""
    return AclBindingFilter(
        ResourcePatternFilter(
            ResourceType.from_code(body["resource_type_filter"]),
            body["resource_name_filter"],
            PatternType.from_code(body.get("pattern_type_filter", PatternType.LITERAL.code)),
        ),
        AccessControlEntryFilter(
            body["principal_filter"],
            body["host_filter"],
            AclOperation.from_code(body["operation"]),
            AclPermissionType.from_code(body["permission_type"]),
        ),
    )


def filter_to_wire(binding_filter: AclBindingFilter) -> dict[str, Any]:
    pattern, entry = binding_filter.pattern_filter, binding_filter.entry_filter
    return {
        "resource_type_filter": pattern.resource_type.code,
        "resource_name_filter": pattern.name,
        "pattern_type_filter": pattern.pattern_type.code,
        "principal_filter": entry.principal,
        "host_filter": entry.host,
        "operation": entry.operation.code,
        "permission_type": entry.permission_type.code,
    }


def creation_from_wire(creation: Body) -> AclBinding:
    """`CreateAclsRequest.aclBinding`. Raises ValueError with Kafka's text for ANY or MATCH."""
    resource_type = ResourceType.from_code(creation["resource_type"])
    pattern_type = PatternType.from_code(creation.get("resource_pattern_type", PatternType.LITERAL.code))
    if resource_type is ResourceType.ANY:
        raise ValueError("resourceType must not be ANY")
    if pattern_type in (PatternType.ANY, PatternType.MATCH):
        raise ValueError(f"patternType must not be {pattern_type}")
    return AclBinding(
        ResourcePattern(resource_type, creation["resource_name"], pattern_type),
        AccessControlEntry(
            creation["principal"],
            creation["host"],
            AclOperation.from_code(creation["operation"]),
            AclPermissionType.from_code(creation["permission_type"]),
        ),
    )


def creation_to_wire(binding: AclBinding) -> dict[str, Any]:
    return {
        "resource_type": binding.pattern.resource_type.code,
        "resource_name": binding.pattern.name,
        "resource_pattern_type": binding.pattern.pattern_type.code,
        "principal": binding.entry.principal,
        "host": binding.entry.host,
        "operation": binding.entry.operation.code,
        "permission_type": binding.entry.permission_type.code,
    }


def _entry_to_wire(entry: AccessControlEntry) -> dict[str, Any]:
    return {
        "principal": entry.principal,
        "host": entry.host,
        "operation": entry.operation.code,
        "permission_type": entry.permission_type.code,
    }


def _entry_from_wire(acl: Body) -> AccessControlEntry:
    return AccessControlEntry(
        acl["principal"],
        acl["host"],
        AclOperation.from_code(acl["operation"]),
        AclPermissionType.from_code(acl["permission_type"]),
    )


def describe_response(
    bindings: Iterable[AclBinding], error_code: int = 0, error_message: str | None = None
) -> dict[str, Any]:
    """`DescribeAclsResponse.aclsResources`: the bindings grouped by resource pattern."""
    return {
        "throttle_time_ms": 0,
        "error_code": error_code,
        "error_message": error_message,
        "resources": [
            {
                "resource_type": pattern.resource_type.code,
                "resource_name": pattern.name,
                "pattern_type": pattern.pattern_type.code,
                "acls": [_entry_to_wire(entry) for entry in entries],
            }
            for pattern, entries in group_by_pattern(bindings).items()
        ],
    }


def bindings_from_describe_response(body: Body) -> list[AclBinding]:
    return [
        AclBinding(
            ResourcePattern(
                ResourceType.from_code(resource["resource_type"]),
                resource["resource_name"],
                PatternType.from_code(resource.get("pattern_type", PatternType.LITERAL.code)),
            ),
            _entry_from_wire(acl),
        )
        for resource in body["resources"]
        for acl in resource["acls"]
    ]


def matching_acl_to_wire(binding: AclBinding, error_code: int = 0, error_message: str | None = None) -> dict[str, Any]:
    """One deleted binding of a DeleteAcls filter result (`DeleteAclsResponse.matchingAcl`)."""
    return {
        "error_code": error_code,
        "error_message": error_message,
        "resource_type": binding.pattern.resource_type.code,
        "resource_name": binding.pattern.name,
        "pattern_type": binding.pattern.pattern_type.code,
        **_entry_to_wire(binding.entry),
    }


def matching_acl_from_wire(acl: Body) -> AclBinding:
    return AclBinding(
        ResourcePattern(
            ResourceType.from_code(acl["resource_type"]),
            acl["resource_name"],
            PatternType.from_code(acl.get("pattern_type", PatternType.LITERAL.code)),
        ),
        _entry_from_wire(acl),
    )


def delete_response(filter_results: Sequence[dict[str, Any]]) -> dict[str, Any]:
    return {"throttle_time_ms": 0, "filter_results": list(filter_results)}
