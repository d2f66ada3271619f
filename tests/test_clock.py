"""The virtual clock: durations, timestamps, and freezegun keeping datetime.now() in step."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest

from fakeapi.server.clock import Clock, format_duration, format_time, parse_duration, parse_time


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
