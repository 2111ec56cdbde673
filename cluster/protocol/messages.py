"""Whole messages: header + body, the header-version rule, and the ApiVersions refusal.

A frame's payload (after the 4-byte size, see framing.py):

    request  = api_key INT16 | api_version INT16 | correlation_id INT32 | client_id NULLABLE_STRING (v1+)
               | TAG_BUFFER (v2) | body
    response = correlation_id INT32 | TAG_BUFFER (v1) | body

    request header v0: api_key, api_version, correlation_id
                   v1: + client_id (INT16 length, null read as "")
                   v2: + TAG_BUFFER; client_id keeps its INT16 length
    response header v0: correlation_id;  v1: + TAG_BUFFER

Header versions (Kafka's ApiMessageTypeGenerator): a flexible API version uses request header v2 and
response header v1, any other request header v1 and response header v0. Exceptions: an ApiVersions
response always uses header v0 (KIP-511, so a client can read the error of a version it sent too
high), and ControlledShutdown v0 uses request header v0. An ApiVersions request above our maximum
is read to its header (to echo its correlation id) and refused without parsing its body
(kafka-protocol.md §3):

    00 00 00 10 | 00 00 00 2a | 00 23 | 00 00 00 01 | 00 12 00 00 00 03
    size 16       correlation   error   1 entry       key 18, min 0, max 3      (ApiVersions v0 body)

Request bodies that fail to parse raise InvalidRequestError (Kafka closes the connection); a version we
do not speak raises UnsupportedVersionError (also a close, except for ApiVersions, see above).
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kafkaops.cluster.common.errors import CorruptMessageError, InvalidRequestError, UnsupportedVersionError

from .records_send import ResponsePart, materialize, response_parts
from .schema import Field, Message
from .schemas import FIRST_FLEXIBLE_VERSION, REQUESTS, RESPONSES, SUPPORTED_VERSIONS, ApiKey
from .types import INT16, INT32, NULLABLE_STRING, TAG_BUFFER, Buffer, unpack

REQUEST_HEADER = Message(
    "RequestHeader",
    "0-2",
    [
        Field("request_api_key", INT16),
        Field("request_api_version", INT16),
        Field("correlation_id", INT32),
        Field("client_id", NULLABLE_STRING, "1+", default=None),
        Field("tagged_fields", TAG_BUFFER, "2+", default={}),
    ],
)
RESPONSE_HEADER = Message(
    "ResponseHeader",
    "0-1",
    [Field("correlation_id", INT32), Field("tagged_fields", TAG_BUFFER, "1+", default={})],
)

_KEY_AND_VERSION = struct.Struct(">hh")


@dataclass(frozen=True, slots=True)
class RequestHeader:
    """A request header; tagged fields (v2 only) are read past and dropped, we use none of them."""

    api_key: ApiKey
    api_version: int
    correlation_id: int
    client_id: str = ""


@dataclass(frozen=True, slots=True)
class Request:
    """A decoded request; `body` is a plain dict shaped by schemas.REQUESTS[header.api_key]."""

    header: RequestHeader
    body: dict[str, Any]


def _api_key(value: int) -> ApiKey:
    try:
        return ApiKey(value)
    except ValueError:
        raise InvalidRequestError(f"unknown API key {value}") from None


def _is_flexible(key: ApiKey, api_version: int) -> bool:
    first = FIRST_FLEXIBLE_VERSION.get(key)
    return first is not None and api_version >= first


def request_header_version(api_key: int, api_version: int) -> int:
    """The request header version for `(api_key, api_version)`, including versions we do not speak."""
    key = _api_key(api_key)
    if key is ApiKey.CONTROLLED_SHUTDOWN and api_version == 0:
        return 0  # Kafka's one exception: ControlledShutdown v0 predates the client id
    return 2 if _is_flexible(key, api_version) else 1


def response_header_version(api_key: int, api_version: int) -> int:
    """The response header version for `(api_key, api_version)`; always 0 for ApiVersions (KIP-511)."""
    key = _api_key(api_key)
    if key is ApiKey.API_VERSIONS:
        return 0
    return 1 if _is_flexible(key, api_version) else 0


def is_unsupported_api_versions(header: RequestHeader) -> bool:
    """An ApiVersions request above our maximum: answer `api_versions_refusal()` at v0, keep the connection."""
    return header.api_key == ApiKey.API_VERSIONS and header.api_version > SUPPORTED_VERSIONS[ApiKey.API_VERSIONS][1]


def api_versions_refusal() -> dict[str, Any]:
    """The v0 ApiVersions body refusing a newer version: UNSUPPORTED_VERSION with only ApiVersions' own
    range listed, from which librdkafka falls back to v0 and kafka-python to our maximum (§3)."""
    low, high = SUPPORTED_VERSIONS[ApiKey.API_VERSIONS]
    return {
        "error_code": UnsupportedVersionError.code,
        "api_keys": [{"api_key": ApiKey.API_VERSIONS, "min_version": low, "max_version": high}],
    }


_EXTRA_TAG_BUFFER_TOLERATED = frozenset({ApiKey.ALTER_USER_SCRAM_CREDENTIALS})
"""librdkafka (2.x) ends its AlterUserScramCredentials v0 with one more empty tagged-field buffer, which
Kafka's parser, reading no further than the schema, never notices: one trailing zero byte is let pass."""


def decode_request(payload: Buffer) -> Request:
    """Read a request frame's payload.

    The body of an ApiVersions request above our maximum is left unread and comes back as `{}` (see
    `is_unsupported_api_versions`). Raises InvalidRequestError for an unknown API key or malformed
    bytes, UnsupportedVersionError for a version of a known API that we do not speak.
    """
    try:
        api_key, api_version = unpack(_KEY_AND_VERSION, payload, 0)
        key = _api_key(api_key)
        fields, offset = REQUEST_HEADER.schema(request_header_version(key, api_version)).decode(payload, 0)
        header = RequestHeader(key, api_version, fields["correlation_id"], fields["client_id"] or "")
        if is_unsupported_api_versions(header):
            return Request(header, {})
        low, high = SUPPORTED_VERSIONS[key]
        if not low <= api_version <= high:
            raise UnsupportedVersionError(
                f"{key.name} v{api_version} (correlation id {header.correlation_id}); we speak v{low}-{high}"
            )
        if key in _EXTRA_TAG_BUFFER_TOLERATED:
            body, end = REQUESTS[key].schema(api_version).decode(payload, offset)
            if bytes(payload[end:]) in (b"", b"\x00"):
                return Request(header, body)
        return Request(header, REQUESTS[key].decode(payload, api_version, offset))
    except CorruptMessageError as exc:
        raise InvalidRequestError(f"malformed request: {exc.message}") from exc


def encode_request(header: RequestHeader, body: Mapping[str, Any], encoded_body: bytes | None = None) -> bytes:
    """A request frame's payload; `encoded_body`, if given, is `body` as `encode_request_body` encoded it
    already. Raises EncodeError, or UnsupportedVersionError for a version we lack."""
    out: list[bytes] = []
    header_fields = {
        "request_api_key": header.api_key,
        "request_api_version": header.api_version,
        "correlation_id": header.correlation_id,
        "client_id": header.client_id,
    }
    REQUEST_HEADER.encode_into(header_fields, request_header_version(header.api_key, header.api_version), out)
    if encoded_body is None:
        REQUESTS[_api_key(header.api_key)].encode_into(body, header.api_version, out)
    else:
        out.append(encoded_body)
    return b"".join(out)


def encode_request_body(api_key: int, api_version: int, body: Mapping[str, Any]) -> bytes:
    """A request's body alone (`encode_request` puts a header before it)."""
    out: list[bytes] = []
    REQUESTS[_api_key(api_key)].encode_into(body, api_version, out)
    return b"".join(out)


def _encode_response_into(
    api_key: int, api_version: int, correlation_id: int, body: Mapping[str, Any], out: list[bytes]
) -> None:
    RESPONSE_HEADER.encode_into({"correlation_id": correlation_id}, response_header_version(api_key, api_version), out)
    RESPONSES[_api_key(api_key)].encode_into(body, api_version, out)


def encode_response(api_key: int, api_version: int, correlation_id: int, body: Mapping[str, Any]) -> bytes:
    """A response frame's payload, echoing the request's correlation id. Records held as slices of files
    are read into it (records_send.materialize: CorruptMessageError if a file lost them)."""
    out: list[bytes] = []
    _encode_response_into(api_key, api_version, correlation_id, body, out)
    try:
        return b"".join(out)
    except TypeError:  # a RECORDS field held a slice of a file: the copying path
        return materialize(response_parts(out))


def encode_response_parts(
    api_key: int, api_version: int, correlation_id: int, body: Mapping[str, Any]
) -> list[ResponsePart]:
    """`encode_response` as parts: records held as slices of files stay slices, for the network layer to
    send from their files (records_send)."""
    out: list[bytes] = []
    _encode_response_into(api_key, api_version, correlation_id, body, out)
    return response_parts(out)


def decode_response(api_key: int, api_version: int, payload: Buffer) -> tuple[int, dict[str, Any]]:
    """`(correlation_id, body)` of a response to a request we sent at `api_version` (an ApiVersions answer
    that does not parse at that version is read as v0: a refusal, KIP-511).

    Raises CorruptMessageError for malformed bytes.
    """
    header, offset = RESPONSE_HEADER.schema(response_header_version(api_key, api_version)).decode(payload, 0)
    key = _api_key(api_key)
    try:
        return header["correlation_id"], RESPONSES[key].decode(payload, api_version, offset)
    except CorruptMessageError:
        if key is not ApiKey.API_VERSIONS or api_version == 0:
            raise
        # KIP-511: a broker refuses an ApiVersions version it does not know with a v0 body (Kafka's
        # ApiVersionsResponse.parse falls back to v0 the same way)
        return header["correlation_id"], RESPONSES[key].decode(payload, 0, offset)
