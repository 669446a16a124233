"""Inline SVG charts for the report, drawn from run.json numbers: a histogram and a horizontal bar chart.

No chart library and no script: the page must render offline, from one file. Colors come from the
page's CSS classes (`bar`, `bar-oov`, `axis`, `mark`), so charts follow its light and dark themes.
Every bar carries a <title>, which browsers show as a tooltip.
"""

from __future__ import annotations

from html import escape
from typing import Sequence

from skewless.report.run_files import format_number

HISTOGRAM_WIDTH, HISTOGRAM_HEIGHT = 440, 180
_LEFT, _RIGHT, _TOP, _BOTTOM = 52, 10, 10, 34
BAR_ROW = 18
_LABEL_WIDTH, _BAR_WIDTH, _COUNT_WIDTH = 150, 210, 80
_LABEL_CHARS = 22
_POINT_WIDTH = 44  # a single value's pair of bars


def histogram(edges: Sequence[float], counts: Sequence[int], title: str, mean: float | None = None) -> str:
    """A histogram of `counts` over the bins between consecutive `edges`, with the mean marked."""
    if len(edges) != len(counts) + 1 or not counts:
        raise ValueError(f"a histogram needs one more edge than counts, got {len(edges)} and {len(counts)}")
    width, height = HISTOGRAM_WIDTH, HISTOGRAM_HEIGHT
    plot_width, plot_height = width - _LEFT - _RIGHT, height - _TOP - _BOTTOM
    low, high = float(edges[0]), float(edges[-1])
    span = (high - low) or 1.0
    tallest = max(max(counts), 1)
    baseline = _TOP + plot_height

    def x_of(value: float) -> float:
        return _LEFT + (float(value) - low) / span * plot_width

    parts = [_open(width, height, title)]
    for left, right, count in zip(edges[:-1], edges[1:], counts):
        bar_height = count / tallest * plot_height
        x0, x1 = x_of(left), x_of(right)
        tip = f"[{format_number(left)}, {format_number(right)}): {format_number(count)} rows"
        parts.append(
            f'<rect class="bar" x="{x0:.2f}" y="{baseline - bar_height:.2f}" '
            f'width="{max(x1 - x0 - 1, 0.5):.2f}" height="{bar_height:.2f}"><title>{escape(tip)}</title></rect>'
        )
    parts.append(f'<line class="axis" x1="{_LEFT}" y1="{baseline}" x2="{_LEFT + plot_width}" y2="{baseline}"/>')
    parts.append(f'<line class="axis" x1="{_LEFT}" y1="{_TOP}" x2="{_LEFT}" y2="{baseline}"/>')
    parts.append(_text(_LEFT - 4, _TOP + 9, format_number(tallest), "end"))
    parts.append(_text(_LEFT - 4, baseline, "0", "end"))
    for value, anchor in ((low, "start"), ((low + high) / 2, "middle"), (high, "end")):
        parts.append(_text(x_of(value), baseline + 14, format_number(value), anchor))
    if mean is not None and low <= mean <= high:
        x = x_of(mean)
        parts.append(
            f'<line class="mark" x1="{x:.2f}" y1="{_TOP}" x2="{x:.2f}" y2="{baseline}">'
            f"<title>mean {escape(format_number(mean))}</title></line>"
        )
        parts.append(_text(x, baseline + 28, f"mean {format_number(mean)}", "middle", "mark-label"))
    parts.append("</svg>")
    return "".join(parts)


def bar_chart(items: Sequence[tuple[str, int]], title: str, highlighted: set[str] | None = None,
              estimated: bool = False) -> str:
    """Horizontal bars, one per (label, count), longest first as given; labels in `highlighted` are drawn
    in the second color (the report uses it for values outside the vocabulary). `estimated` counts are
    shown as "~N"."""
    if not items:
        raise ValueError("a bar chart needs at least one item")
    width = _LABEL_WIDTH + _BAR_WIDTH + _COUNT_WIDTH
    height = len(items) * BAR_ROW + 6
    tallest = max(max(count for _, count in items), 1)
    parts = [_open(width, height, title)]
    for row, (label, count) in enumerate(items):
        y = 3 + row * BAR_ROW
        length = max(count / tallest * _BAR_WIDTH, 1.0)
        shown = label if len(label) <= _LABEL_CHARS else label[: _LABEL_CHARS - 1] + "…"
        css = "bar-oov" if highlighted and label in highlighted else "bar"
        count_text = ("~" if estimated else "") + format_number(count)
        tip = f"{label}: {count_text} rows"
        parts.append(
            f'<g><title>{escape(tip)}</title>'
            + _text(_LABEL_WIDTH - 6, y + 12.5, shown, "end")
            + f'<rect class="{css}" x="{_LABEL_WIDTH}" y="{y + 2}" width="{length:.2f}" height="{BAR_ROW - 4}"/>'
            + _text(_LABEL_WIDTH + length + 4, y + 12.5, count_text, "start")
            + "</g>"
        )
    parts.append("</svg>")
    return "".join(parts)


def _open(width: int, height: int, title: str) -> str:
    return (
        f'<svg class="chart" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'role="img" aria-label="{escape(title)}"><title>{escape(title)}</title>'
    )


def _text(x: float, y: float, text: str, anchor: str, css: str = "tick") -> str:
    return f'<text class="{css}" x="{x:.2f}" y="{y:.2f}" text-anchor="{anchor}">{escape(text)}</text>'


def split_histogram(edges: Sequence[float], points: Sequence[float], shares: dict[str, Sequence[float]],
                    title: str) -> str:
    """Splits overlaid: each split's share of rows per bin, `shares[split]` being the interval bins between
    `edges` then the single values `points`. Single values (0 in a column of mostly zeros) are bars of their own
    at the left, scaled on their own, so a spike of zeros does not flatten the histogram of the other values;
    interval bars are heights of share per unit of width (bins may differ in width)."""
    width, height = HISTOGRAM_WIDTH, HISTOGRAM_HEIGHT
    # no count axis to label (shares are in the tooltips), so the plot starts near the edge
    start = 12
    left = start + _POINT_WIDTH * len(points) + (8 if points else 0)
    plot_width, plot_height = width - left - _RIGHT, height - _TOP - _BOTTOM
    baseline = _TOP + plot_height
    intervals = len(edges) - 1 if len(edges) > 1 else 0
    low, high = (float(edges[0]), float(edges[-1])) if intervals else (0.0, 1.0)
    span = (high - low) or 1.0
    widths = [float(b - a) or 1.0 for a, b in zip(edges[:-1], edges[1:])]
    densest = max([s[i] / widths[i] for s in shares.values() for i in range(intervals)] + [1e-300])
    tallest_point = max([s[intervals + j] for s in shares.values() for j in range(len(points))] + [1e-300])
    parts = [_open(width, height, title)]
    for index, (split, values) in enumerate(shares.items()):
        css = f"split split-{index}"
        for j, point in enumerate(points):
            share = values[intervals + j]
            bar = share / tallest_point * plot_height
            x = start + _POINT_WIDTH * j + 4 + index * 18
            parts.append(
                f'<rect class="{css}" data-split="{escape(split)}" data-point="{point!r}" data-share="{share!r}" '
                f'x="{x:.2f}" y="{baseline - bar:.2f}" width="16" height="{bar:.2f}">'
                f"<title>{escape(split)}: = {escape(format_number(point))}: {share:.2%} of rows</title></rect>"
            )
        for i in range(intervals):
            share = values[i]
            bar = share / widths[i] / densest * plot_height
            x0 = left + (float(edges[i]) - low) / span * plot_width
            x1 = left + (float(edges[i + 1]) - low) / span * plot_width
            tip = f"{split}: [{format_number(edges[i])}, {format_number(edges[i + 1])}): {share:.2%} of rows"
            parts.append(
                f'<rect class="{css}" data-split="{escape(split)}" data-bin="{i}" data-share="{share!r}" '
                f'x="{x0:.2f}" y="{baseline - bar:.2f}" width="{max(x1 - x0, 0.5):.2f}" height="{bar:.2f}">'
                f"<title>{escape(tip)}</title></rect>"
            )
    for j, point in enumerate(points):
        parts.append(_text(start + _POINT_WIDTH * j + 21, baseline + 14, f"= {format_number(point)}", "middle"))
    parts.append(f'<line class="axis" x1="{left}" y1="{baseline}" x2="{left + plot_width}" y2="{baseline}"/>')
    if intervals:
        for value, anchor in ((low, "start"), ((low + high) / 2, "middle"), (high, "end")):
            parts.append(_text(left + (value - low) / span * plot_width, baseline + 14, format_number(value), anchor))
    parts.append("</svg>")
    return "".join(parts)
