"""Client quotas on the broker (Kafka's `ClientQuotaManager`, `ClientRequestQuotaManager`, the `Rate`
metric over a `SampledStat`, and `QuotaUtils.throttleTime`).

One manager per quota type: Produce (bytes appended), Fetch (bytes answered to consumers), Request
(percentage of a request handler's time). Each client is measured by a sensor keyed by its quota metric
tags (user, client-id); which tags depends on the levels of quotas configured, so clients that share a
quota share its sensor (`quotaMetricTags`). Its limit comes from the most specific quota configured, in
Kafka's order of precedence:

    /config/users/<user>/clients/<client-id>
    /config/users/<user>/clients/<default>
    /config/users/<user>
    /config/users/<default>/clients/<client-id>
    /config/users/<default>/clients/<default>
    /config/users/<default>
    /config/clients/<client-id>
    /config/clients/<default>

A rate is the sum of `quota.window.num` (11) samples of `quota.window.size.seconds` (1) over the time they
span, counted as at least 10 whole windows (Kafka's `Rate.windowSize`). A value recorded that takes the
rate over the bound is kept, and answered with a throttle time: with O the rate observed, T the bound and
W the window, the delay X that brings O back to T, O·W / (W + X) = T, is X = (O − T) / T · W.

Without authentication every client's principal is ANONYMOUS, so user quotas apply to the user
`ANONYMOUS` (or `<default>`). Time is passed in, in milliseconds; nothing here does I/O.

Threads: the broker's event loop only (the dynamic config manager posts quota changes to it).
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from kafkaops.cluster.common.jvm_text import LONG_MAX, java_int
from kafkaops.cluster.zk.znodes import DEFAULT_ENTITY_NAME, desanitize_entity_name

DEFAULT_NUM_QUOTA_SAMPLES = 11
DEFAULT_QUOTA_WINDOW_SIZE_SECONDS = 1
INACTIVE_SENSOR_EXPIRATION_MS = 3600 * 1000
UNLIMITED = float(LONG_MAX)
"""The bound of a client without a quota (`Quota.upperBound(Long.MaxValue)`)."""
NANOS_TO_PERCENTAGE_PER_SECOND = 100.0 / 1e9


class QuotaType(enum.Enum):
    FETCH = "Fetch"
    PRODUCE = "Produce"
    REQUEST = "Request"


class _QuotaLevels(enum.IntFlag):
    """Kafka's `QuotaTypes`: which levels of quotas were ever configured (until the broker restarts)."""

    NONE = 0
    CLIENT_ID = 1
    USER = 2
    USER_CLIENT_ID = 4


class _Sample:
    __slots__ = ("last_window_ms", "value")

    def __init__(self, now_ms: int) -> None:
        self.last_window_ms = now_ms
        self.value = 0.0

    def reset(self, now_ms: int) -> None:
        self.last_window_ms = now_ms
        self.value = 0.0


class Rate:
    """Kafka's `Rate` over a `WindowedSum`: `samples` windows of `window_ms`, each starting at the first
    value recorded in it; a window older than all of them together is cleared before it is read."""

    def __init__(self, samples: int = DEFAULT_NUM_QUOTA_SAMPLES, window_ms: int = 1000) -> None:
        self.num_samples = samples
        self.window_ms = window_ms
        self._samples: list[_Sample] = []
        self._current = 0

    def record(self, value: float, now_ms: int) -> None:
        sample = self._current_sample(now_ms)
        if now_ms - sample.last_window_ms >= self.window_ms:
            self._current = (self._current + 1) % self.num_samples
            if self._current >= len(self._samples):
                sample = _Sample(now_ms)
                self._samples.append(sample)
            else:
                sample = self._samples[self._current]
                sample.reset(now_ms)
        sample.value += value

    def _current_sample(self, now_ms: int) -> _Sample:
        if not self._samples:
            self._samples.append(_Sample(now_ms))
        return self._samples[self._current]

    def _purge_obsolete_samples(self, now_ms: int) -> None:
        expire_age = self.num_samples * self.window_ms
        for sample in self._samples:
            if now_ms - sample.last_window_ms >= expire_age:
                sample.reset(now_ms)

    def window_size(self, now_ms: int) -> int:
        """The time the rate is computed over: since the oldest window started, but at least
        `samples - 1` whole windows (so one busy first second does not read as a huge rate)."""
        self._purge_obsolete_samples(now_ms)
        oldest = min((s.last_window_ms for s in self._samples), default=None)
        if oldest is None:
            self._samples.append(_Sample(now_ms))
            oldest = now_ms
        elapsed = now_ms - oldest
        full_windows = elapsed // self.window_ms
        if full_windows < self.num_samples - 1:
            elapsed += (self.num_samples - 1 - full_windows) * self.window_ms
        return elapsed

    def measure(self, now_ms: int) -> float:
        """Per second."""
        self._purge_obsolete_samples(now_ms)
        total = sum(sample.value for sample in self._samples)
        return total / (self.window_size(now_ms) / 1000.0)


def java_round(value: float) -> int:
    """Java's `Math.round(double)`: half up."""
    return math.floor(value + 0.5)


def throttle_time_ms(value: float, bound: float, window_ms: int) -> int:
    """`QuotaUtils.throttleTime`: the delay that brings the observed rate `value` back to `bound` (a Java
    long: a bound of 0 gives Long.MaxValue)."""
    if bound <= 0:
        return LONG_MAX
    return min(java_round((value - bound) / bound * window_ms), LONG_MAX)


@dataclass(frozen=True, slots=True)
class QuotaEntity:
    """Kafka's `KafkaQuotaEntity`: a sanitized user and/or a client id (desanitized), either
    `<default>`; None means the level is not part of the entity."""

    user: str | None
    client_id: str | None


@dataclass(slots=True)
class _Sensor:
    rate: Rate
    last_record_ms: int


MetricTags = tuple[str, str]
"""(user, client-id) quota metric tags; "" for a level that is not measured separately."""


class ClientQuotaManager:
    """The quotas of one type and the rates of the clients they measure (Kafka's `ClientQuotaManager`
    with its `DefaultQuotaCallback`). `max_throttle_time_ms` bounds a throttle (the Request type's
    `boundedThrottleTime`: one window)."""

    def __init__(
        self,
        quota_type: QuotaType,
        clock_ms: Callable[[], int],
        num_samples: int = DEFAULT_NUM_QUOTA_SAMPLES,
        window_size_seconds: int = DEFAULT_QUOTA_WINDOW_SIZE_SECONDS,
        max_throttle_time_ms: int | None = None,
        static_client_id_quota: float = UNLIMITED,
    ) -> None:
        self.quota_type = quota_type
        self.clock_ms = clock_ms
        self.num_samples = num_samples
        self.window_ms = window_size_seconds * 1000
        self.max_throttle_time_ms = max_throttle_time_ms
        self._overridden: dict[QuotaEntity, float] = {}
        # the deprecated `quota.producer.default` / `quota.consumer.default`: a client-id quota for all
        self.static_client_id_quota = static_client_id_quota
        self._levels = _QuotaLevels.CLIENT_ID if static_client_id_quota < UNLIMITED else _QuotaLevels.NONE
        self._sensors: dict[MetricTags, _Sensor] = {}

    @property
    def quotas_enabled(self) -> bool:
        """Whether a quota of this type was ever configured since start-up (Kafka keeps measuring then,
        even once every quota is gone)."""
        return self._levels != _QuotaLevels.NONE

    # --- configuration -----------------------------------------------------------------------------------

    def update_quota(self, sanitized_user: str | None, sanitized_client_id: str | None, quota: float | None) -> None:
        """Set (or, with None, remove) the quota of one entity, as its config znode now says."""
        client_id = (
            sanitized_client_id
            if sanitized_client_id in (None, DEFAULT_ENTITY_NAME)
            else desanitize_entity_name(sanitized_client_id)
        )
        entity = QuotaEntity(sanitized_user, client_id)
        if sanitized_user is not None:
            self._levels |= _QuotaLevels.USER_CLIENT_ID if client_id is not None else _QuotaLevels.USER
        elif client_id is not None:
            self._levels |= _QuotaLevels.CLIENT_ID
        if quota is None:
            self._overridden.pop(entity, None)
        else:
            self._overridden[entity] = quota

    def quota_metric_tags(self, sanitized_user: str, client_id: str) -> MetricTags:
        """`DefaultQuotaCallback.quotaMetricTags`: the sensor a client is measured by. With one level of
        quotas configured that level's tags; with several, those of the most specific quota that exists."""
        levels = self._levels
        if levels in (_QuotaLevels.NONE, _QuotaLevels.CLIENT_ID):
            return ("", client_id)
        if levels == _QuotaLevels.USER:
            return (sanitized_user, "")
        if levels == _QuotaLevels.USER_CLIENT_ID:
            return (sanitized_user, client_id)
        quotas = self._overridden
        for entity, tags in (
            (QuotaEntity(sanitized_user, client_id), (sanitized_user, client_id)),
            (QuotaEntity(sanitized_user, DEFAULT_ENTITY_NAME), (sanitized_user, client_id)),
            (QuotaEntity(sanitized_user, None), (sanitized_user, "")),
            (QuotaEntity(DEFAULT_ENTITY_NAME, client_id), (sanitized_user, client_id)),
            (QuotaEntity(DEFAULT_ENTITY_NAME, DEFAULT_ENTITY_NAME), (sanitized_user, client_id)),
            (QuotaEntity(DEFAULT_ENTITY_NAME, None), (sanitized_user, "")),
        ):
            if entity in quotas:
                return tags
        return ("", client_id)

    def quota_limit(self, tags: MetricTags) -> float:
        """`DefaultQuotaCallback.quotaLimit` for a sensor's tags, in Kafka's order of precedence;
        UNLIMITED when no quota applies."""
        user, client_id = tags
        quotas = self._overridden
        candidates: tuple[QuotaEntity, ...]
        if user and client_id:
            candidates = (
                QuotaEntity(user, client_id),
                QuotaEntity(user, DEFAULT_ENTITY_NAME),
                QuotaEntity(DEFAULT_ENTITY_NAME, client_id),
                QuotaEntity(DEFAULT_ENTITY_NAME, DEFAULT_ENTITY_NAME),
            )
        elif user:
            candidates = (QuotaEntity(user, None), QuotaEntity(DEFAULT_ENTITY_NAME, None))
        elif client_id:
            candidates = (QuotaEntity(None, client_id), QuotaEntity(None, DEFAULT_ENTITY_NAME))
        else:
            candidates = ()
        for entity in candidates:
            quota = quotas.get(entity)
            if quota is not None:
                return quota
        return self.static_client_id_quota if client_id and not user else UNLIMITED

    def quota(self, sanitized_user: str, client_id: str) -> float:
        """The bound that applies to a client now (tests and tools)."""
        return self.quota_limit(self.quota_metric_tags(sanitized_user, client_id))

    # --- measuring ---------------------------------------------------------------------------------------

    def maybe_record_and_get_throttle_time_ms(
        self, sanitized_user: str, client_id: str, value: float, now_ms: int
    ) -> int:
        """Record `value` for the client and return how long to throttle it (0 while within its quota,
        and always 0 while no quota of this type was ever configured)."""
        if not self.quotas_enabled:
            return 0
        tags = self.quota_metric_tags(sanitized_user, client_id)
        sensor = self._sensor(tags, now_ms)
        sensor.rate.record(value, now_ms)
        sensor.last_record_ms = now_ms
        bound = self.quota_limit(tags)
        observed = sensor.rate.measure(now_ms)
        if observed <= bound:
            return 0
        throttle = throttle_time_ms(observed, bound, sensor.rate.window_size(now_ms))
        if self.max_throttle_time_ms is not None:
            throttle = min(throttle, self.max_throttle_time_ms)
        # Kafka's `.toInt` of the long: Long.MaxValue (a quota of 0) wraps to -1, i.e. no throttle
        return max(java_int(throttle), 0)

    def record_no_throttle(self, sanitized_user: str, client_id: str, value: float, now_ms: int) -> None:
        """Count `value` towards the client's rate without checking its quota (`recordNoThrottle`)."""
        if self.quotas_enabled:
            tags = self.quota_metric_tags(sanitized_user, client_id)
            self._sensor(tags, now_ms).rate.record(value, now_ms)

    def unrecord(self, sanitized_user: str, client_id: str, value: float, now_ms: int) -> None:
        """Take back a value recorded for a response that is not sent after all (`unrecordQuotaSensor`: a
        throttled fetch is answered empty)."""
        self.record_no_throttle(sanitized_user, client_id, -value, now_ms)

    def max_value_in_quota_window(self, sanitized_user: str, client_id: str) -> float:
        """`getMaxValueInQuotaWindow`: the most one response may carry without certainly being throttled,
        `quota × (samples − 1) × window`; a fetch's max bytes are capped to it."""
        if not self.quotas_enabled:
            return UNLIMITED
        bound = self.quota(sanitized_user, client_id)
        return bound * (self.num_samples - 1) * (self.window_ms / 1000)

    def _sensor(self, tags: MetricTags, now_ms: int) -> _Sensor:
        sensor = self._sensors.get(tags)
        if sensor is None:
            # Kafka's sensors expire after an hour without a record; a new one is a good time to look
            self._sensors = {
                key: s for key, s in self._sensors.items() if now_ms - s.last_record_ms < INACTIVE_SENSOR_EXPIRATION_MS
            }
            sensor = _Sensor(Rate(self.num_samples, self.window_ms), now_ms)
            self._sensors[tags] = sensor
        return sensor


@dataclass(frozen=True)
class QuotaManagers:
    """Kafka's `QuotaFactory.QuotaManagers` for clients: one manager per client quota type."""

    produce: ClientQuotaManager
    fetch: ClientQuotaManager
    request: ClientQuotaManager

    @classmethod
    def create(
        cls,
        clock_ms: Callable[[], int],
        num_samples: int = DEFAULT_NUM_QUOTA_SAMPLES,
        window_size_seconds: int = DEFAULT_QUOTA_WINDOW_SIZE_SECONDS,
        producer_default: int = LONG_MAX,
        consumer_default: int = LONG_MAX,
    ) -> QuotaManagers:
        def manager(
            quota_type: QuotaType, max_throttle_time_ms: int | None = None, static: int = LONG_MAX
        ) -> ClientQuotaManager:
            return ClientQuotaManager(
                quota_type, clock_ms, num_samples, window_size_seconds, max_throttle_time_ms, float(static)
            )

        return cls(
            manager(QuotaType.PRODUCE, static=producer_default),
            manager(QuotaType.FETCH, static=consumer_default),
            # ClientRequestQuotaManager: a throttle never longer than one window
            manager(QuotaType.REQUEST, window_size_seconds * 1000),
        )

    def update_quotas(self, sanitized_user: str | None, sanitized_client_id: str | None, quotas: QuotaConfig) -> None:
        """Kafka's `QuotaConfigHandler.updateQuotaConfig`: one entity's quotas, as its config znode now reads."""
        self.produce.update_quota(sanitized_user, sanitized_client_id, quotas.producer_byte_rate)
        self.fetch.update_quota(sanitized_user, sanitized_client_id, quotas.consumer_byte_rate)
        self.request.update_quota(sanitized_user, sanitized_client_id, quotas.request_percentage)


@dataclass(frozen=True)
class QuotaConfig:
    """The quotas of one entity's config (None: not set)."""

    producer_byte_rate: float | None = None
    consumer_byte_rate: float | None = None
    request_percentage: float | None = None


def parse_quota_config(config: Mapping[str, str]) -> QuotaConfig:
    """The quotas in a user's or client's config, parsed as Kafka's handler parses them (byte rates as
    longs, the percentage as a double). Raises ValueError for a value that does not parse."""

    def parsed(key: str, as_long: bool) -> float | None:
        text = config.get(key)
        if text is None:
            return None
        return float(int(text.strip())) if as_long else float(text.strip())

    return QuotaConfig(
        parsed("producer_byte_rate", True), parsed("consumer_byte_rate", True), parsed("request_percentage", False)
    )
