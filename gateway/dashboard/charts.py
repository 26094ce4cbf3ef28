"""The operations page's two small charts, drawn as inline SVG on the server (no script, no library).

Pure functions from numbers to markup; every text that came from the database is escaped here, because
the result is inserted into the page as markup.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup, escape

from memory.browse import GrowthWeek

WIDTH, HEIGHT = 640, 220
PAD_LEFT, PAD_BOTTOM, PAD_TOP = 44, 28, 12
# One colour per category, in the order of memory/retrieval/decay.CATEGORIES; others get grey.
PALETTE = {
    "identity": "#4e79a7",
    "config": "#f28e2b",
    "credential": "#e15759",
    "decision": "#76b7b2",
    "solution": "#59a14f",
    "event": "#edc948",
    "conversation": "#b07aa1",
    "temp": "#ff9da7",
    "debug": "#9c755f",
}
OTHER_COLOUR = "#bab0ac"
# Reply timings are summarised per window of this many messages (fewer while there are few: at least
# LATENCY_POINTS points, so a chart over a handful of messages still draws them).
LATENCY_WINDOW = 20
LATENCY_POINTS = 30


@dataclass(slots=True, frozen=True)
class LatencySummary:
    """p50 and p95 of the reply path's memory time over the samples kept (ms)."""

    samples: int
    p50_ms: float
    p95_ms: float


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile (0..1) of ``values`` by the nearest-rank rule."""
    ordered = sorted(values)
    rank = max(1, round(q * len(ordered) + 0.5 - 1e-9))
    return ordered[min(rank, len(ordered)) - 1]


def latency_summary(samples_ms: Sequence[float]) -> LatencySummary | None:
    """p50/p95 of all samples; None when there are none."""
    if not samples_ms:
        return None
    return LatencySummary(len(samples_ms), percentile(samples_ms, 0.5), percentile(samples_ms, 0.95))


def _frame(label: str, top: float, legend: str, body: str) -> Markup:
    plot_bottom = HEIGHT - PAD_BOTTOM
    axis = (
        f'<line x1="{PAD_LEFT}" y1="{PAD_TOP}" x2="{PAD_LEFT}" y2="{plot_bottom}" stroke="#888"/>'
        f'<line x1="{PAD_LEFT}" y1="{plot_bottom}" x2="{WIDTH}" y2="{plot_bottom}" stroke="#888"/>'
        f'<text x="{PAD_LEFT - 6}" y="{PAD_TOP + 10}" text-anchor="end" font-size="11">{top:g}</text>'
        f'<text x="{PAD_LEFT - 6}" y="{plot_bottom}" text-anchor="end" font-size="11">0</text>'
    )
    return Markup(
        f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT + 24}" role="img" aria-label="{escape(label)}">'
        f"<title>{escape(label)}</title>{axis}{body}{legend}</svg>"
    )


def growth_svg(weeks: Sequence[GrowthWeek]) -> Markup:
    """Stacked bars: new live memories per week, by category."""
    if not weeks or not any(w.by_category for w in weeks):
        return Markup('<p class="muted">No memories were made in these weeks.</p>')
    top = max(sum(w.by_category.values()) for w in weeks) or 1
    plot_h = HEIGHT - PAD_BOTTOM - PAD_TOP
    slot = (WIDTH - PAD_LEFT) / len(weeks)
    bars, seen = [], []
    for i, week in enumerate(weeks):
        x = PAD_LEFT + i * slot + slot * 0.15
        y: float = HEIGHT - PAD_BOTTOM
        for category, count in sorted(week.by_category.items()):
            h = plot_h * count / top
            y -= h
            if category not in seen:
                seen.append(category)
            tip = escape(f"week of {week.start.isoformat()}: {count} {category}")
            bars.append(
                f'<rect x="{x:.1f}" y="{y:.1f}" width="{slot * 0.7:.1f}" height="{h:.1f}" '
                f'fill="{PALETTE.get(category, OTHER_COLOUR)}"><title>{tip}</title></rect>'
            )
        if i % 2 == 0:
            bars.append(
                f'<text x="{x:.1f}" y="{HEIGHT - PAD_BOTTOM + 14}" font-size="10">'
                f"{week.start.strftime('%m-%d')}</text>"
            )
    legend = "".join(
        f'<rect x="{PAD_LEFT + i * 90}" y="{HEIGHT + 8}" width="10" height="10" '
        f'fill="{PALETTE.get(c, OTHER_COLOUR)}"/>'
        f'<text x="{PAD_LEFT + i * 90 + 14}" y="{HEIGHT + 17}" font-size="11">{escape(c)}</text>'
        for i, c in enumerate(seen[:7])
    )
    return _frame("New memories per week by category", top, legend, "".join(bars))


def latency_windows(count: int) -> int:
    """How many messages one point of the reply-time chart sums up: ``LATENCY_WINDOW``, fewer when so few
    messages were timed that the chart would have fewer than ``LATENCY_POINTS`` points (one message a
    point at the start), so whatever the caption reports is drawn."""
    return max(1, min(LATENCY_WINDOW, math.ceil(count / LATENCY_POINTS)))


def latency_svg(samples_ms: Sequence[float]) -> Markup:
    """Two lines: p50 and p95 of the reply path's memory time per window of messages (``latency_windows``),
    each window also marked with a dot, so a single window shows too."""
    if not samples_ms:
        return Markup(
            '<p class="muted">No timings yet: they are kept while the gateway answers messages.</p>'
        )
    size = latency_windows(len(samples_ms))
    windows = [samples_ms[i : i + size] for i in range(0, len(samples_ms), size)]
    p50 = [statistics.median(w) for w in windows]
    p95 = [percentile(w, 0.95) for w in windows]
    top = max(p95) or 1.0
    plot_h = HEIGHT - PAD_BOTTOM - PAD_TOP
    step = (WIDTH - PAD_LEFT - 10) / max(1, len(windows) - 1)

    def at(i: int, value: float) -> tuple[float, float]:
        x = PAD_LEFT + i * step if len(windows) > 1 else PAD_LEFT + (WIDTH - PAD_LEFT) / 2
        return x, HEIGHT - PAD_BOTTOM - plot_h * value / top

    def series(values: list[float], colour: str, name: str) -> str:
        points = [at(i, v) for i, v in enumerate(values)]
        line = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
        dots = "".join(
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{colour}">'
            f"<title>{escape(_window_label(i, size, len(samples_ms)))}: {name} {v:.1f} ms</title></circle>"
            for i, ((x, y), v) in enumerate(zip(points, values, strict=True))
        )
        return (
            f'<polyline points="{line}" fill="none" stroke="{colour}" stroke-width="2">'
            f"<title>{name}</title></polyline>{dots}"
        )

    legend = (
        f'<rect x="{PAD_LEFT}" y="{HEIGHT + 8}" width="10" height="10" fill="#4e79a7"/>'
        f'<text x="{PAD_LEFT + 14}" y="{HEIGHT + 17}" font-size="11">p50 ms</text>'
        f'<rect x="{PAD_LEFT + 90}" y="{HEIGHT + 8}" width="10" height="10" fill="#e15759"/>'
        f'<text x="{PAD_LEFT + 104}" y="{HEIGHT + 17}" font-size="11">p95 ms</text>'
    )
    # p95 first: where a window holds one message the two are equal, and p50 is drawn on top of it.
    body = series(p95, "#e15759", "p95") + series(p50, "#4e79a7", "p50")
    per = "message" if size == 1 else f"{size} messages"
    return _frame(f"Reply-path memory time per {per} (ms)", round(top, 1), legend, body)


def _window_label(index: int, size: int, count: int) -> str:
    first = index * size + 1
    last = min(count, first + size - 1)
    return f"message {first}" if first == last else f"messages {first}–{last}"
