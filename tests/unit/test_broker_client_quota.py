"""The client quota arithmetic and precedence (Kafka's ClientQuotaManager, Rate, QuotaUtils), on plain values."""

from __future__ import annotations

import asyncio

import pytest

from kafkaops.cluster.broker.client_quota_manager import (
    UNLIMITED,
    ClientQuotaManager,
    QuotaConfig,
    QuotaManagers,
    QuotaType,
    Rate,
    parse_quota_config,
    throttle_time_ms,
)
from kafkaops.cluster.broker.request_channel import TimedCoroutine

D = "<default>"


class Clock:
    def __init__(self) -> None:
        self.ms = 1_000_000

    def __call__(self) -> int:
        return self.ms


def test_rate_counts_at_least_ten_whole_windows() -> None:
    rate = Rate(samples=11, window_ms=1000)
    rate.record(1000, 0)
    # one busy first second reads as 1000 bytes over 10 windows, not over 0 ms
    assert rate.window_size(0) == 10_000
    assert rate.measure(0) == 100.0
    rate.record(1000, 500)
    assert rate.measure(500) == pytest.approx(2000 / 10.5)


def test_rate_spans_its_oldest_window_once_it_has_ten() -> None:
    rate = Rate(samples=11, window_ms=1000)
    for second in range(15):
        rate.record(100, second * 1000)
    # 11 samples kept, the oldest started at 4 s: 1100 bytes over 10 s at 14 s, over 10.5 s at 14.5 s
    assert rate.window_size(14_000) == 10_000
    assert rate.measure(14_000) == pytest.approx(110.0)
    assert rate.measure(14_500) == pytest.approx(1100 / 10.5)


def test_rate_forgets_samples_older_than_the_whole_window() -> None:
    rate = Rate(samples=11, window_ms=1000)
    rate.record(5000, 0)
    assert rate.measure(10_999) == pytest.approx(5000 / 10.999)
    assert rate.measure(11_000) == 0.0


def test_throttle_time_brings_the_rate_back_to_the_quota() -> None:
    # O·W / (W + X) = T  =>  X = (O − T) / T · W
    assert throttle_time_ms(200.0, 100.0, 10_000) == 10_000
    assert throttle_time_ms(150.0, 100.0, 10_000) == 5_000
    assert throttle_time_ms(100.05, 100.0, 10_000) == 5  # Math.round: half up
    observed, bound, window = 300.0, 100.0, 10_000
    delay = throttle_time_ms(observed, bound, window)
    assert observed * window / (window + delay) == bound


def test_producer_over_its_quota_is_throttled_and_then_let_go() -> None:
    clock = Clock()
    manager = ClientQuotaManager(QuotaType.PRODUCE, clock)
    assert manager.maybe_record_and_get_throttle_time_ms("ANONYMOUS", "p1", 10**9, clock.ms) == 0  # no quota yet
    manager.update_quota(None, "p1", 1000.0)
    # 5 KB/s for 2 s: 10,000 bytes, within 1000 B/s while the window counts as 10 s or more
    throttles = []
    for _ in range(20):
        clock.ms += 100
        throttles.append(manager.maybe_record_and_get_throttle_time_ms("ANONYMOUS", "p1", 500, clock.ms))
    assert throttles == [0] * 20
    # 5,000 more at 2.1 s: 15,000 bytes over the 10 s window, 1.5 times the quota
    clock.ms += 100
    throttle = manager.maybe_record_and_get_throttle_time_ms("ANONYMOUS", "p1", 5000, clock.ms)
    assert throttle == throttle_time_ms(15_000 / 10, 1000.0, 10_000) == 5_000
    # another client id has no quota; removing p1's lets it go
    assert manager.maybe_record_and_get_throttle_time_ms("ANONYMOUS", "p2", 10**6, clock.ms) == 0
    manager.update_quota(None, "p1", None)
    assert manager.maybe_record_and_get_throttle_time_ms("ANONYMOUS", "p1", 10**6, clock.ms) == 0


def test_a_throttled_fetch_is_taken_back() -> None:
    clock = Clock()
    manager = ClientQuotaManager(QuotaType.FETCH, clock)
    manager.update_quota(None, D, 100.0)
    assert manager.maybe_record_and_get_throttle_time_ms("ANONYMOUS", "c", 2000, clock.ms) == 10_000
    manager.unrecord("ANONYMOUS", "c", 2000, clock.ms)
    assert manager.maybe_record_and_get_throttle_time_ms("ANONYMOUS", "c", 1000, clock.ms) == 0
    # the most one fetch may carry without certainly being throttled: quota × 10 windows
    assert manager.max_value_in_quota_window("ANONYMOUS", "c") == 1000.0


def test_request_quota_throttle_is_bounded_by_one_window() -> None:
    clock = Clock()
    managers = QuotaManagers.create(clock)
    managers.update_quotas(None, D, QuotaConfig(request_percentage=1.0))
    assert managers.request.maybe_record_and_get_throttle_time_ms("ANONYMOUS", "c", 500.0, clock.ms) == 1000


# The eight levels, most specific first (Kafka's ClientQuotaManager scaladoc)
LEVELS = [
    ("u1", "c1"),
    ("u1", D),
    ("u1", None),
    (D, "c1"),
    (D, D),
    (D, None),
    (None, "c1"),
    (None, D),
]


@pytest.mark.parametrize("most_specific", range(len(LEVELS)))
def test_precedence(most_specific: int) -> None:
    """With every level from `most_specific` down configured, the client (u1, c1) gets that level's quota;
    other users and clients get the quota of the levels that match them."""
    manager = ClientQuotaManager(QuotaType.PRODUCE, Clock())
    for level, (user, client) in enumerate(LEVELS):
        if level >= most_specific:
            manager.update_quota(user, client, float(1000 + level))
    assert manager.quota("u1", "c1") == 1000 + most_specific
    expected_other_user = next((1000 + i for i, (u, c) in enumerate(LEVELS) if i >= most_specific and u != "u1"), None)
    assert manager.quota("u2", "c1") == expected_other_user


def test_single_level_quotas_share_sensors_as_kafka_does() -> None:
    manager = ClientQuotaManager(QuotaType.PRODUCE, Clock())
    assert manager.quota_metric_tags("u1", "c1") == ("", "c1")
    manager.update_quota("u1", None, 10.0)
    assert manager.quota_metric_tags("u1", "c1") == ("u1", "")
    assert manager.quota("u1", "c1") == 10.0
    # users without a quota of their own have none: client-id quotas do not apply to them
    assert manager.quota("u2", "c1") == UNLIMITED


def test_sanitized_client_ids_are_desanitized() -> None:
    manager = ClientQuotaManager(QuotaType.PRODUCE, Clock())
    manager.update_quota(None, "my%20client", 5.0)
    assert manager.quota("ANONYMOUS", "my client") == 5.0


def test_anonymous_user_quota_applies_without_authentication() -> None:
    manager = ClientQuotaManager(QuotaType.PRODUCE, Clock())
    manager.update_quota("ANONYMOUS", None, 7.0)
    assert manager.quota("ANONYMOUS", "anything") == 7.0


def test_parse_quota_config() -> None:
    config = {"producer_byte_rate": "1024", "consumer_byte_rate": "2048", "request_percentage": "12.5"}
    assert parse_quota_config(config) == QuotaConfig(1024.0, 2048.0, 12.5)
    assert parse_quota_config({}) == QuotaConfig()
    with pytest.raises(ValueError):
        parse_quota_config({"producer_byte_rate": "1.5"})


def test_timed_coroutine_counts_the_steps_not_the_waits() -> None:
    """The handler's own time is what the request quota charges: with a clock that the coroutine's two
    steps advance by 5 and 7 ns, and the wait between them by 1000 ns, it ran 12 ns."""
    now = [0]

    async def main() -> tuple[str, int]:
        loop = asyncio.get_running_loop()
        waited = loop.create_future()

        async def handler() -> str:
            now[0] += 5
            await waited
            now[0] += 7
            return "answer"

        def finish() -> None:
            now[0] += 1000
            waited.set_result(None)

        loop.call_soon(finish)
        timed = TimedCoroutine(handler(), clock_ns=lambda: now[0])
        return await timed, timed.nanos

    assert asyncio.run(main()) == ("answer", 12)


def test_timed_coroutine_passes_cancellation_on() -> None:
    cleaned: list[bool] = []

    async def handler() -> None:
        try:
            await asyncio.sleep(60)
        finally:
            cleaned.append(True)

    async def timed() -> None:
        await TimedCoroutine(handler())

    async def main() -> None:
        task = asyncio.create_task(timed())
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert cleaned == [True]


def test_static_client_id_default_quota() -> None:
    """The deprecated `quota.producer.default`: every client id's quota unless a dynamic one applies."""
    clock = Clock()
    managers = QuotaManagers.create(clock, producer_default=500)
    assert managers.produce.quotas_enabled and not managers.fetch.quotas_enabled
    assert managers.produce.quota("ANONYMOUS", "any") == 500.0
    managers.update_quotas(None, D, QuotaConfig(producer_byte_rate=800.0))
    assert managers.produce.quota("ANONYMOUS", "any") == 800.0
    assert managers.produce.maybe_record_and_get_throttle_time_ms("ANONYMOUS", "any", 16_000, clock.ms) == 10_000
