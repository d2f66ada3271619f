"""The virtual clock: durations, timestamps, and freezegun keeping datetime.now() in step."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest

from fakeapi.server.clock import (
    Clock,
    format_duration,
    format_micro_time,
    format_time,
    parse_duration,
    parse_time,
)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("500ms", 0.5), ("30s", 30), ("5m", 300), ("1h30m", 5400), ("1m30.5s", 90.5), ("0", 0), ("-5s", -5), (2, 2)],
)
def test_go_durations(text: str | int, seconds: float) -> None:
    assert parse_duration(text) == timedelta(seconds=seconds)


@pytest.mark.parametrize("bad", ["", "5", "5x", "m5", "1h 30m", "1.2.3s"])
def test_bad_durations(bad: str) -> None:
    with pytest.raises(ValueError):
        parse_duration(bad)


def test_durations_render_like_go() -> None:
    assert [format_duration(timedelta(seconds=s)) for s in (0, 0.25, 90, 3725)] == ["0s", "250ms", "1m30s",
                                                                                     "1h2m5s"]


def test_timestamps_are_second_precision_utc() -> None:
    assert format_time(parse_time("2026-01-01T01:02:03.999+01:00")) == "2026-01-01T00:02:03Z"


@pytest.mark.parametrize(("text", "seconds", "micro"), [
    ("2026-03-04T05:06:07.000089Z", "2026-03-04T05:06:07Z", "2026-03-04T05:06:07.000089Z"),
    ("2025-12-31T23:30:00-01:00", "2026-01-01T00:30:00Z", "2026-01-01T00:30:00.000000Z"),
    # Go's RFC 3339 layout writes the year in four digits ("2006"), padded: strftime's %Y does not pad
    ("0999-01-02T03:04:05Z", "0999-01-02T03:04:05Z", "0999-01-02T03:04:05.000000Z"),
    ("0001-01-01T00:00:00Z", "0001-01-01T00:00:00Z", "0001-01-01T00:00:00.000000Z"),
])
def test_times_are_written_like_metav1_time_and_micro_time(text: str, seconds: str, micro: str) -> None:
    assert (format_time(parse_time(text)), format_micro_time(parse_time(text))) == (seconds, micro)


def test_the_clock_only_moves_forward() -> None:
    c = Clock("2026-01-01T00:00:00Z")
    c.advance("1m")
    assert c.timestamp() == "2026-01-01T00:01:00Z"
    assert c.elapsed() == timedelta(minutes=1)
    with pytest.raises(ValueError):
        c.set(datetime(2025, 1, 1, tzinfo=UTC))


def test_frozen_keeps_datetime_now_in_step_with_virtual_time() -> None:
    c = Clock("2030-06-01T12:00:00Z")
    with c.frozen():
        assert datetime.now(UTC) == datetime(2030, 6, 1, 12, tzinfo=UTC)
        c.advance("90s")
        assert datetime.now(UTC) == datetime(2030, 6, 1, 12, 1, 30, tzinfo=UTC)
        assert time.time() == datetime(2030, 6, 1, 12, 1, 30, tzinfo=UTC).timestamp()
    assert datetime.now(UTC) != datetime(2030, 6, 1, 12, 1, 30, tzinfo=UTC)  # released on exit
