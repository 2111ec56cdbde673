"""What the network layer knows of a request beside its decoded header and body (the parts of Kafka's
`RequestChannel.Request` the handlers use): its size on the wire, the connection's principal, and the
throttle the handlers decide, for which the network layer mutes the connection.

Threads: the broker's event loop.
"""

from __future__ import annotations

from dataclasses import dataclass

ANONYMOUS = "ANONYMOUS"
"""`KafkaPrincipal.ANONYMOUS`'s name: the user of every connection without authentication (PLAINTEXT)."""


@dataclass(slots=True)
class RequestContext:
    """One request's context. `sanitized_user` is the principal's name as quota znodes name it
    (`Sanitizer.sanitize`; ANONYMOUS needs no escaping). `throttle_time_ms` is set by the request handler
    when a client quota is violated: the response carries it and the connection reads no further request
    for that long (Kafka's `ThrottledChannel`: the channel is muted, KIP-219)."""

    size_in_bytes: int = 0
    sanitized_user: str = ANONYMOUS
    throttle_time_ms: int = 0
