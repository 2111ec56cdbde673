"""What the network layer knows of a request beside its decoded header and body (the parts of Kafka's
`RequestChannel.Request` the handlers use): its size on the wire, the connection's principal, the
throttle the handlers decide, for which the network layer mutes the connection, and the time the
handler ran (`TimedCoroutine`). `principal`, `client_host`, `listener_name` and `security_protocol` are the
connection's (the authorizer's `RequestContext`).

Threads: the broker's event loop.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Coroutine, Generator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, cast

from kafkaops.cluster.common.kafka_principal import ANONYMOUS as ANONYMOUS_PRINCIPAL
from kafkaops.cluster.common.kafka_principal import KafkaPrincipal

T = TypeVar("T")


ANONYMOUS = ANONYMOUS_PRINCIPAL.name
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
    principal: KafkaPrincipal = ANONYMOUS_PRINCIPAL
    client_host: str = ""
    listener_name: str = "PLAINTEXT"
    security_protocol: str = "PLAINTEXT"


class TimedCoroutine(Generic[T]):
    """Awaits a coroutine and adds up the time it ran (`nanos`): the steps it took on the event loop, not
    the time it waited between them. With one loop serving every request, that is what Kafka's
    `requestThreadTimeNanos` measures: the request handler's own time, not the purgatory's wait. The
    request quota (`request_percentage`) is charged with it."""

    def __init__(self, coroutine: Coroutine[Any, Any, T], clock_ns: Callable[[], int] = time.perf_counter_ns) -> None:
        self.coroutine = coroutine
        self.clock_ns = clock_ns
        self.nanos = 0

    def __await__(self) -> Generator[Any, Any, T]:
        coroutine, clock = self.coroutine, self.clock_ns
        sent: Any = None
        thrown: BaseException | None = None
        while True:
            started = clock()
            try:
                yielded = coroutine.send(sent) if thrown is None else coroutine.throw(thrown)
            except StopIteration as stop:
                self.nanos += clock() - started
                return cast(T, stop.value)
            self.nanos += clock() - started
            try:
                sent, thrown = (yield yielded), None
            except GeneratorExit:
                coroutine.close()
                raise
            except BaseException as error:  # noqa: BLE001 - a cancellation goes on into the coroutine
                sent, thrown = None, error
