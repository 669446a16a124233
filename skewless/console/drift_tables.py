"""`skewless drift` / `skew`: the comparisons (`skewless.drift.compare`) as rich tables and the thresholds crossed."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from skewless.console.fitted_tables import Column, fitted_tables
from skewless.drift import Comparison, FeatureDistance
from skewless.significance import SIGNIFICANCE
from skewless.terminal_text import shown


_COLUMNS = [Column("feature", key=True), Column("measure"), Column("distance", "right"), Column("threshold", "right"),
            Column("test"), Column("p", "right"), Column("values (baseline / tested)", "right", wrap=True),
            Column("verdict", wrap=True)]


def print_comparisons(comparisons: list[Comparison], console=None) -> None:
    console = console or Console()
    for comparison in comparisons:
        title = shown(f"{comparison.base} (baseline) vs {comparison.test}; thresholds: flags, schema "
                      f"{comparison.comparator}, defaults; CROSSED: past the threshold and p < {SIGNIFICANCE:g}")
        rows = [[f.feature, f.measure, "–" if f.distance is None else f"{f.distance:.4f}", f"{f.threshold:g}",
                 f.test or "–", _p_value(f), _sizes(f), _verdict(f)] for f in comparison.features]
        for table in fitted_tables(title, _COLUMNS, rows, console.width):
            console.print(table)
    crossed = [f"{c.test}: {f.feature}" for c in comparisons for f in c.crossed]
    console.print(Text(shown(f"{len(crossed)} threshold(s) crossed" + (": " + ", ".join(crossed) if crossed else ""))))


def _p_value(f: FeatureDistance) -> str:
    return "–" if f.p_value is None else f"{f.p_value:.2g}"


def _sizes(f: FeatureDistance) -> str:
    return "–" if f.base_count is None else f"{f.base_count:,} / {f.test_count:,}"


def _verdict(f: FeatureDistance) -> str:
    """The verdict, saying why a distance past its threshold is no drift: the test finds sampling noise."""
    if f.verdict == "ok" and f.distance is not None and f.distance > f.threshold:
        return "ok (within sampling noise)"
    return f.verdict
