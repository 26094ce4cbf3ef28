"""The memory page's charts draw what their captions report (issue 37, item 9: "p50 37.1 ms · p95 97.7 ms"
over an empty plot, when fewer messages had been timed than one window held)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from gateway.dashboard.charts import HEIGHT, WIDTH, latency_svg

SVG = "{http://www.w3.org/2000/svg}"


def marks(svg: str) -> tuple[list[list[tuple[float, float]]], list[tuple[float, float]]]:
    """The drawn lines (their points) and dots of a chart."""
    root = ET.fromstring(str(svg).replace("<svg ", '<svg xmlns="http://www.w3.org/2000/svg" ', 1))
    lines = [
        [tuple(float(v) for v in pair.split(",")) for pair in line.get("points", "").split()]
        for line in root.iter(f"{SVG}polyline")
    ]
    dots = [(float(c.get("cx", "nan")), float(c.get("cy", "nan"))) for c in root.iter(f"{SVG}circle")]
    return lines, dots  # type: ignore[return-value]


@pytest.mark.parametrize("count", [1, 2, 3, 19, 20, 41, 500, 10_000])
def test_every_timed_message_count_draws_both_series(count: int) -> None:
    samples = [10.0 + (i % 7) * 5.0 for i in range(count)]
    lines, dots = marks(latency_svg(samples))
    assert len(lines) == 2  # p50 and p95
    points = len(lines[0])
    assert points >= min(count, 2)  # a line needs two points; one message is a dot
    assert len(dots) == 2 * points  # each window's p50 and p95 marked, so one window still shows
    for x, y in [p for line in lines for p in line] + dots:
        assert 0 <= x <= WIDTH and 0 <= y <= HEIGHT


def test_no_timings_is_said_in_words() -> None:
    assert "No timings yet" in latency_svg([])
