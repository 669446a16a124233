"""The report of an output of `skewless apply`: which run's graph it used, its rows and quarantine, and its
statistics compared with the training run's, by skewless.drift as `skewless validate RUN --against` compares them.

An applied output has no feature statistics of its own in run.json (nothing was analyzed): the comparison reads
both directories' statistics protos.
"""

from __future__ import annotations

import os
from html import escape

from skewless.drift import DRIFT, Comparison, Thresholds, compare
from skewless.errors import InputError
from skewless.report.page import cards, html_document, quarantine_section
from skewless.report.run_files import QuarantineReasons, format_number
from skewless.run_directory import REPORT_FILE
from skewless.run_summary import RunSummary
from skewless.statistics_files import SPLIT_PREFIX, STATISTICS_DIR, STATISTICS_FILE, statistics_splits


def training_baseline(training_splits: list[str], split: str) -> str:
    """The training run's split an applied split is compared with: the one of the same name, else `train`,
    else its first."""
    if split in training_splits:
        return split
    return "train" if "train" in training_splits else training_splits[0]


def comparisons(output_dir: str, training_run: str) -> list[Comparison]:
    """Each of the applied output's splits against its baseline in the training run; InputError when either
    side's statistics cannot be read."""
    training_splits = statistics_splits(training_run)
    if not training_splits:
        raise InputError(f"{training_run}: no {STATISTICS_DIR}/{SPLIT_PREFIX}*/{STATISTICS_FILE} to compare with")
    return [compare(training_run, training_baseline(training_splits, split), output_dir, split, Thresholds(), DRIFT)
            for split in statistics_splits(output_dir)]


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
        rows = "".join(
            f'<tr data-feature="{escape(f.feature)}" data-distance="{"" if f.distance is None else repr(f.distance)}">'
            f"<td>{escape(f.feature)}</td><td>{escape(f.measure)}</td>"
            f"<td class=num>{'–' if f.distance is None else f'{f.distance:.4f}'}</td></tr>"
            for f in sorted(comparison.features, key=lambda f: -(f.distance or 0))
        )
        sections.append(
            f'<div class="feature" data-comparison="{escape(comparison.test)}"><h3>{escape(comparison.test)} vs '
            f"{escape(comparison.base)} (baseline)</h3><table><tr><th>feature</th><th>measure</th>"
            f"<th class=num>distance</th></tr>{rows}</table></div>"
        )
    note = ('<p class="muted">Largest distance first; <code>skewless validate OUTPUT --against RUN --threshold X'
            "</code> judges them.</p>")
    return f'<h2>Compared with the training run</h2>{note}<div class="features">{"".join(sections)}</div>'


def _file_uri(path: str) -> str:
    from pathlib import Path

    return Path(os.path.abspath(path)).as_uri()
