"""A minimal hand-written SVG line chart, so the benchmarks need no plotting library."""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape

PANEL_WIDTH, PANEL_HEIGHT = 380, 300
MARGIN_LEFT, MARGIN_RIGHT, MARGIN_TOP, MARGIN_BOTTOM = 60, 20, 50, 90
TICKS = 4
"""Intervals on every y axis."""


@dataclass
class Series:
    """One line: a legend ``name``, its ``(x, y)`` points (x > 0, plotted on a log scale) and an SVG colour."""

    name: str
    points: list[tuple[float, float]]
    colour: str


def _nice_step(value: float) -> float:
    """The smallest of 1, 2, 2.5, 5 times a power of ten that is at least ``value`` (1 for nothing)."""
    if value <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(value))
    return next(step * power for step in (1, 2, 2.5, 5, 10) if step * power >= value)


def _label(value: float) -> str:
    return f"{value:g}" if value < 10_000 else f"{value:,.0f}"


def _panel(left: float, title: str, series: list[Series], xs: list[float], x_label: str) -> list[str]:
    """The SVG elements of one panel whose plot area starts ``left`` pixels from the image's left edge."""
    width = PANEL_WIDTH - MARGIN_LEFT - MARGIN_RIGHT
    height = PANEL_HEIGHT - MARGIN_TOP - MARGIN_BOTTOM
    step_value = _nice_step(max((y for s in series for _, y in s.points), default=1.0) / TICKS)
    top_value = step_value * TICKS
    low, high = math.log(min(xs)), math.log(max(xs))

    def px(x: float) -> float:
        return left + (width / 2 if high == low else (math.log(x) - low) / (high - low) * width)

    def py(y: float) -> float:
        return MARGIN_TOP + height - y / top_value * height

    out = [f'<text x="{left + width / 2}" y="{MARGIN_TOP - 22}" text-anchor="middle" font-weight="bold">{escape(title)}</text>',
           f'<rect x="{left}" y="{MARGIN_TOP}" width="{width}" height="{height}" fill="none" stroke="#999"/>']  # fmt: skip
    for step in range(TICKS + 1):
        value = step_value * step
        y = py(value)
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + width}" y2="{y:.1f}" stroke="#eee"/>')
        out.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{_label(value)}</text>')
    for x in xs:
        out.append(f'<text x="{px(x):.1f}" y="{MARGIN_TOP + height + 16}" text-anchor="middle">{_label(x)}</text>')
    out.append(f'<text x="{left + width / 2}" y="{MARGIN_TOP + height + 36}" text-anchor="middle">{escape(x_label)}</text>')
    for index, line in enumerate(series):
        if not line.points:
            continue
        path = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in line.points)
        out.append(f'<polyline points="{path}" fill="none" stroke="{line.colour}" stroke-width="2"/>')
        out += [f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3" fill="{line.colour}"/>' for x, y in line.points]
        legend_y = MARGIN_TOP + height + 56 + 16 * index
        out.append(f'<line x1="{left + 8}" y1="{legend_y - 4}" x2="{left + 26}" y2="{legend_y - 4}" stroke="{line.colour}" stroke-width="2"/>')
        out.append(f'<text x="{left + 30}" y="{legend_y}">{escape(line.name)}</text>')
    return out


def line_chart(panels: list[tuple[str, list[Series]]], x_label: str, title: str, footnote: str = "") -> str:
    """An SVG document with one panel per ``(panel title, series)``, side by side, sharing the x values.

    Args:
        panels: each panel's title and its lines; the y axis starts at 0.
        x_label: the caption under every x axis (log scale, ticks at the data's x values).
        title: the caption above the panels.
        footnote: a line of text under the panels (may be empty).
    """
    xs = sorted({x for _, series in panels for line in series for x, _ in line.points}) or [1.0]
    total_width = PANEL_WIDTH * len(panels)
    total_height = PANEL_HEIGHT + (20 if footnote else 0)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{total_width}" height="{total_height}" '
           f'viewBox="0 0 {total_width} {total_height}" font-family="sans-serif" font-size="11">',
           f'<rect width="{total_width}" height="{total_height}" fill="white"/>',
           f'<text x="{total_width / 2}" y="16" text-anchor="middle" font-size="13">{escape(title)}</text>']  # fmt: skip
    for index, (panel_title, series) in enumerate(panels):
        out += _panel(PANEL_WIDTH * index + MARGIN_LEFT, panel_title, series, xs, x_label)
    if footnote:
        out.append(f'<text x="8" y="{total_height - 6}" font-size="10">{escape(footnote)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
