"""The report of an output of `skewless apply`: which run's graph it used, its rows and quarantine, and its
statistics compared with the training run's, by skewless.drift as `skewless validate RUN --against` compares them.

An applied output has no feature statistics of its own in run.json (nothing was analyzed): the comparison reads
both directories' statistics protos.
"""

from __future__ import annotations

import os
from html import escape
from pathlib import Path

from skewless.drift import (
    DRIFT, Comparison, baseline_split, compare, drift_exclusions, unseen_values, validation_thresholds,
)
from skewless.errors import InputError
from skewless.report.page import cards, html_document, quarantine_section
from skewless.report.run_files import QuarantineReasons, format_number, format_percent
from skewless.report.split_section import split_block
from skewless.report.split_views import feature_view
from skewless.run_directory import REPORT_FILE, STATISTICS_DIR, statistics_name
from skewless.run_summary import RunSummary
from skewless.statistics_files import (
    feature_name, read_statistics, statistics_splits,
)

SHOWN_UNSEEN = 10  # new values named per feature, most rows first


def comparisons(output_dir: str, training_run: str) -> list[Comparison]:
    """Each of the applied output's splits against its baseline in the training run; InputError when either
    side's statistics cannot be read."""
    training_splits = statistics_splits(training_run)
    if not training_splits:
        raise InputError(f"{training_run}: no {os.path.join(STATISTICS_DIR, statistics_name('*'))} to compare with")
    thresholds = validation_thresholds(output_dir, training_run)
    exclude = drift_exclusions(output_dir, training_run)
    return [compare(training_run, baseline_split(training_splits, split), output_dir, split, thresholds, DRIFT,
                    exclude) for split in statistics_splits(output_dir)]


def render_applied_page(shown: str, output_dir: str, summary: RunSummary, reasons: QuarantineReasons) -> str:
    applied = summary.applied
    splits = list(summary.rows.written)
    training_report = os.path.join(applied.run, REPORT_FILE)
    link = (f' (<a href="{escape(_file_uri(training_report))}">its report</a>)'
            if os.path.exists(training_report) else "")
    source = summary.input
    inputs = ", ".join(source.paths) if source and source.paths else "the run's own input"
    graph = (
        "<h2>Graph applied</h2><table class=applied>"
        f'<tr><th>training run</th><td><code data-training-run="{escape(applied.run)}">{escape(applied.run)}</code>'
        f"{link}</td></tr>"
        f'<tr><th>graph digest (sha256)</th><td><code data-graph-sha256="{escape(applied.graph_sha256)}">'
        f"{escape(applied.graph_sha256)}</code></td></tr>"
        f"<tr><th>input</th><td>{escape(source.format if source else '')}: <code>{escape(inputs)}</code></td></tr>"
        f"<tr><th>label</th><td>{'left out (rows without labels)' if applied.label_left_out else 'kept'}</td></tr>"
        "</table>"
    )
    body = [
        f"<header><h1>Applied output: {escape(summary.name)}</h1>"
        f'<div class="sub"><code>{escape(shown)}</code></div></header>',
        cards(summary, splits),
        graph,
        _oov(summary),
        _drift(output_dir, applied.run),
        quarantine_section(summary, reasons),
    ]
    return html_document(f"skewless applied output: {summary.name}", body)


def _oov(summary: RunSummary) -> str:
    if not summary.oov_rows:
        return ""
    rows = summary.transformed_rows
    if not rows:
        return ""
    cells = "".join(
        f'<tr data-oov-feature="{escape(name)}" data-oov-rows="{count}"><td>{escape(name)}</td>'
        f"<td class=num>{format_number(count)}</td><td class=num>{count / rows:.2%}</td></tr>"
        for name, count in summary.oov_rows.items()
    )
    return ("<h2>Values outside the training vocabularies</h2><table><tr><th>feature</th><th class=num>rows</th>"
            f"<th class=num>share</th></tr>{cells}</table>")


def _drift(output_dir: str, training_run: str) -> str:
    try:
        found = comparisons(output_dir, training_run)
    except InputError as error:
        return f'<h2>Compared with the training run</h2><p class="muted">Not compared: {escape(str(error))}</p>'
    sections = []
    for comparison in found:
        # crossed first, then the largest distances: what changed leads
        ordered = sorted(comparison.features, key=lambda f: (f.verdict != "CROSSED", -(f.distance or 0)))
        rows = "".join(
            f'<tr data-feature="{escape(f.feature)}" data-distance="{"" if f.distance is None else repr(f.distance)}" '
            f'data-threshold="{f.threshold!r}" data-verdict="{escape(f.verdict)}">'
            f"<td>{escape(f.feature)}</td><td>{escape(f.measure)}</td>"
            f"<td class=num>{'–' if f.distance is None else f'{f.distance:.4f}'}</td>"
            f"<td class=num>{f.threshold:g}</td><td class=verdict-{_verdict_class(f.verdict)}>{escape(f.verdict)}</td>"
            "</tr>"
            for f in ordered
        )
        crossed = len(comparison.crossed)
        sections.append(
            f'<div class="feature" data-comparison="{escape(comparison.test)}"><h3>{escape(comparison.test)} vs '
            f"{escape(comparison.base)} (baseline): {crossed} threshold(s) crossed</h3><table><tr><th>feature</th>"
            f"<th>measure</th><th class=num>distance</th><th class=num>threshold</th><th>verdict</th></tr>{rows}"
            f"</table>{_unseen(comparison)}</div>{_side_by_side(comparison)}"
        )
    note = ("<p class=\"muted\">The distances and thresholds <code>skewless validate OUTPUT --against RUN</code> prints "
            "(thresholds: the training run's schema, else each measure's default; docs/statistics.md).</p>")
    return f'<h2>Compared with the training run</h2>{note}<div class="features">{"".join(sections)}</div>'


def _verdict_class(verdict: str) -> str:
    return {"CROSSED": "crossed", "ok": "ok"}.get(verdict, "none")


def _statistics(dataset: str) -> dict:
    """A comparison's side, "RUN_DIR:split" -> its features' statistics by name."""
    run_dir, split = dataset.rsplit(":", 1)
    return {feature_name(f): f for f in read_statistics(run_dir, split).features}


def _side_by_side(comparison: Comparison) -> str:
    """Each feature of the applied split beside the baseline's, as the run page draws its splits: numbers on the
    bins the distance is measured on, strings as their top values; crossed first."""
    base, test = _statistics(comparison.base), _statistics(comparison.test)
    labels = (f"{comparison.base.rsplit(':', 1)[1]} (training run)", f"{comparison.test.rsplit(':', 1)[1]} (applied)")
    cards = []
    for distance in sorted(comparison.features, key=lambda f: (f.verdict != "CROSSED", -(f.distance or 0))):
        name = distance.feature
        view = feature_view(name, {labels[0]: base[name], labels[1]: test[name]}, distance)
        if view is not None:
            cards.append(f'<article class="feature" data-view="{escape(name)}"><h3>{escape(name)}</h3>'
                         f"{split_block(view)}</article>")
    return f'<div class="features">{"".join(cards)}</div>'


def _unseen(comparison: Comparison) -> str:
    """The values of the applied split's string features that the baseline split does not hold, with their rows."""
    base = _statistics(comparison.base)
    rows = []
    for name, feature in _statistics(comparison.test).items():
        if feature.WhichOneof("stats") != "string_stats" or name not in base:
            continue
        values, certain = unseen_values(base[name], feature)
        total = feature.string_stats.common_stats.num_non_missing
        for value, count in values[:SHOWN_UNSEEN]:
            rows.append(
                f'<tr data-unseen-feature="{escape(name)}" data-unseen-value="{escape(value)}" data-rows="{count}">'
                f"<td>{escape(name)}</td><td><code>{escape(value)}</code></td><td class=num>{format_number(count)}</td>"
                f"<td class=num>{format_percent(count / total if total else None)}</td>"
                f"<td>{'new' if certain else 'not among the baseline&#39;s 1,000 most frequent values'}</td></tr>"
            )
        if len(values) > SHOWN_UNSEEN:
            rows.append(f'<tr><td>{escape(name)}</td><td colspan=4 class="muted">and '
                        f"{format_number(len(values) - SHOWN_UNSEEN)} more values</td></tr>")
    if not rows:
        return '<p class="muted">Every value of the string features was seen in the baseline.</p>'
    return ("<h4>Values the baseline does not have</h4><table class=unseen><tr><th>feature</th><th>value</th>"
            f"<th class=num>rows</th><th class=num>share</th><th></th></tr>{''.join(rows)}</table>")


def _file_uri(path: str) -> str:
    return Path(os.path.abspath(path)).as_uri()
