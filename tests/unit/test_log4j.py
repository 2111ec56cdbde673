"""The floor's log4j timestamp, `yyyy-MM-dd HH:mm:ss,SSS` (known answers from Java's SimpleDateFormat)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from kafkaops.cluster.common import log4j


def test_timestamp_of_a_moment_truncates_to_milliseconds() -> None:
    assert log4j.timestamp(datetime(2024, 5, 1, 13, 0, 0, 123999)) == "2024-05-01 13:00:00,123"
    assert log4j.timestamp(datetime(2024, 5, 1, 13, 0, 0)) == "2024-05-01 13:00:00,000"


def test_timestamp_of_epoch_millis_matches_simple_date_format() -> None:
    assert log4j.timestamp_ms(1700000000007, UTC) == "2023-11-14 22:13:20,007"
    assert log4j.timestamp_ms(-1, UTC) == "1969-12-31 23:59:59,999"
    assert log4j.timestamp_ms(1700000000007, timezone(timedelta(hours=5, minutes=30))) == "2023-11-15 03:43:20,007"


def test_cached_seconds_and_millis_make_the_same_text() -> None:
    moment = datetime(2024, 5, 1, 13, 0, 59, 7000)
    assert log4j.with_millis(log4j.second_text(moment), 7) == log4j.timestamp(moment) == "2024-05-01 13:00:59,007"
