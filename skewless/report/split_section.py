"""The parts of a feature's report card that look past the run's totals: train vs eval side by side with their
distance, % zeros, the warnings of skewless.report.data_warnings, and the encoding advice.

Numbers the tests read back ride in data- attributes, unrounded.
"""

from __future__ import annotations

from html import escape

from skewless.drift import EXCLUDED
from skewless.report import svg
from skewless.report.data_warnings import (
    bucket_boundaries,
    cardinality_warnings,
    constant_warning,
    empty_buckets,
    encoding_advice,
    sentinel_extreme,
    sentinel_values,
)
from skewless.report.run_files import format_number, format_percent
from skewless.report.split_views import SplitView
from skewless.transforms import TRANSFORMS

SHOWN_VALUES = 10


def split_block(view: SplitView | None) -> str:
    """Train vs eval for one feature: overlaid shares or top values side by side, and their distance."""
    if view is None:
        return '<p class="muted">No per-split statistics (statistics/Split-*/FeatureStats.pb) for this feature.</p>'
    legend = "".join(f'<span class="swatch split-{i}"></span>{escape(split)}' for i, split in enumerate(view.splits))
    distance = ""
    if view.distance is not None and view.distance.distance is not None:
        d = view.distance
        # measured between the first two splits (`skewless validate` compares the first with each other one)
        between = f" ({escape(view.splits[0])} to {escape(view.splits[1])})" if len(view.splits) > 2 else ""
        # the significance test beside it: a distance from few rows may be sampling noise
        test = "" if d.p_value is None else f", {escape(d.test)} p {d.p_value:.2g}"
        distance = (f'<span class="distance" data-distance="{d.distance!r}" data-measure="{escape(d.measure)}" '
                    f'data-p-value="{d.p_value!r}">{escape(d.measure)} {d.distance:.4f}{test}{between}</span>')
    elif view.distance is not None and view.distance.unmeasured == EXCLUDED:
        distance = f'<span class="distance muted">{escape(EXCLUDED)}</span>'
    body = _top_values(view) if view.counts is not None else _shares(view)
    title = " vs ".join(escape(split) for split in view.splits)
    return (f'<div class="splits"><h4>{title} {distance}</h4>{body}'
            f'<div class="legend">{legend}</div></div>')


def _shares(view: SplitView) -> str:
    numeric = view.numeric
    if numeric is None:
        reason = view.distance.verdict if view.distance is not None else "no values"
        return f'<p class="muted">No histogram by split: {escape(reason)}.</p>'
    zeros = []
    for split, (count, values) in numeric.zeros.items():
        zeros.append(f'<span data-zeros-split="{escape(split)}" data-zeros="{count}" data-values="{values}">'
                     f"{escape(split)} {format_percent(count / values if values else None)}</span>")
    zero_count = sum(count for count, _ in numeric.zeros.values())
    values = sum(v for _, v in numeric.zeros.values())
    overall = (f'<span data-zeros-split="all" data-zeros="{zero_count}" data-values="{values}">'
               f"all {format_percent(zero_count / values if values else None)}</span>")
    chart = svg.split_histogram(numeric.edges, numeric.points, numeric.shares,
                                f"{view.feature}: share of rows by split")
    note = (" Single values (0, or one value holding a tenth of the rows) are bars of their own at the left, on their"
            " own scale; the histogram beside them is of the other values.") if numeric.points else ""
    return (f'<p class="zeros">zeros: {", ".join(zeros)}; {overall}</p><figure class="split-histogram">{chart}'
            f'<figcaption class="legend">share of each split\'s rows per bin: the bins the distance is measured on, '
            f'about a tenth of the first split\'s rows each (docs/statistics.md).{note}</figcaption></figure>')


def _top_values(view: SplitView) -> str:
    by_split = {split: dict(counts) for split, counts in view.counts.items()}
    values = []
    for counts in view.counts.values():
        values += [value for value, _ in counts if value not in values]
    header = "".join(f"<th class=num>{escape(split)}</th>" for split in view.splits)
    rows = []
    for value in values[:SHOWN_VALUES]:
        cells = []
        for split in view.splits:
            count = by_split[split].get(value)
            share = count / view.values[split] if count is not None and view.values[split] else None
            index = view.splits.index(split)
            # the bar in a track of its own fixed width, beside the percentage: the cell is as wide as both, so
            # the bar cannot run into the next split's percentage (a share of the cell's width once did)
            bar = (f'<span class="share-track"><span class="share split-{index}" '
                   f'style="width:{(share or 0) * 100:.1f}%"></span></span>')
            cells.append(f'<td class=num data-split="{escape(split)}" data-count="{"" if count is None else count}">'
                         f'{format_percent(share)} {bar}</td>')
        rows.append(f'<tr data-value="{escape(value)}"><td>{escape(value)}</td>{"".join(cells)}</tr>')
    more = f'<p class="muted">and {len(values) - SHOWN_VALUES} more values</p>' if len(values) > SHOWN_VALUES else ""
    return (f'<table class="split-values"><tr><th>value</th>{header}</tr>{"".join(rows)}</table>{more}'
            '<p class="legend">share of each split\'s rows with a value</p>')


def feature_warnings(feature: dict, options: dict, oov_share: float | None) -> list[tuple[str, str]]:
    """(kind, sentence) for each thing worth checking about the feature."""
    warnings = []
    constant = constant_warning(feature)
    if constant:
        warnings.append(("constant", constant))
    for value, count in sentinel_values(feature):
        warnings.append(("sentinel", f"{value!r} looks like a placeholder for unknown but is counted as a value "
                                     f"({format_number(count)} rows): declare it missing, or keep it knowingly"))
    extreme = sentinel_extreme(feature)
    if extreme:
        end, value = extreme
        warnings.append(("sentinel", f"its {end} is {format_number(value)}, a common placeholder (or cap): check "
                                     "what it means before scaling by it"))
    kind = TRANSFORMS.get(feature.get("transform"))
    buckets = options.get(kind.quantile_buckets) if kind is not None and kind.quantile_buckets else None
    if buckets and feature.get("quantiles"):
        boundaries = bucket_boundaries(feature["quantiles"], int(buckets))
        empty = empty_buckets(boundaries, feature.get("type") == "int")
        if empty:
            shown = ", ".join(format_number(b) for b in boundaries)
            warnings.append(("empty-buckets", f"buckets {', '.join(map(str, empty))} of {buckets} "
                                              f"are likely empty: boundaries estimated from the quantiles ({shown}) "
                                              "repeat or hold no integer between them; use fewer buckets"))
    for sentence in cardinality_warnings(feature, options, oov_share):
        warnings.append(("cardinality", sentence))
    return warnings


def warnings_list(warnings: list[tuple[str, str]]) -> str:
    if not warnings:
        return ""
    items = "".join(f'<li data-warning="{kind}">{escape(sentence)}</li>' for kind, sentence in warnings)
    return f'<ul class="warnings">{items}</ul>'


def advice_line(feature: dict, options: dict) -> str:
    advice = encoding_advice(feature, options)
    if advice is None:
        return ""
    text = advice.describe()
    return (f'<p class="advice" data-advice-ids="{advice.ids}" data-advice="{escape(advice.encoding)}" '
            f'data-advice-width="{advice.width}">model input: {escape(text)}</p>')
