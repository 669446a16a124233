"""`skewless drift` / `skew`: the comparisons (`skewless.drift.compare`) as rich tables and the thresholds crossed."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from skewless.drift import Comparison, FeatureDistance
from skewless.significance import SIGNIFICANCE
from skewless.terminal_text import shown


def print_comparisons(comparisons: list[Comparison], console=None) -> None:
    console = console or Console()
    for comparison in comparisons:
        table = Table(title=Text(shown(f"{comparison.base} (baseline) vs {comparison.test}; thresholds: flags, "
                                       f"schema {comparison.comparator}, defaults; CROSSED: past the threshold and "
                                       f"p < {SIGNIFICANCE:g}")), title_justify="left")
        table.add_column("feature", no_wrap=True)  # a name is read whole (the other cells wrap)
        table.add_column("measure")
        table.add_column("distance", justify="right")
        table.add_column("threshold", justify="right")
        table.add_column("test")
        table.add_column("p", justify="right")
        table.add_column("values (baseline / tested)", justify="right")
        table.add_column("verdict")
        for f in comparison.features:
            cells = [f.feature, f.measure, "–" if f.distance is None else f"{f.distance:.4f}",
                     f"{f.threshold:g}", f.test or "–", _p_value(f), _sizes(f), _verdict(f)]
            table.add_row(*(Text(shown(cell)) for cell in cells))
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
