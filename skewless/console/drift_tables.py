"""`skewless drift` / `skew`: the comparisons (`skewless.drift.compare`) as rich tables and the thresholds crossed."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from skewless.drift import Comparison
from skewless.terminal_text import shown


def print_comparisons(comparisons: list[Comparison], console=None) -> None:
    console = console or Console()
    for comparison in comparisons:
        table = Table(title=Text(shown(f"{comparison.base} (baseline) vs {comparison.test}; thresholds: flags, "
                                       f"schema {comparison.comparator}, defaults")), title_justify="left")
        table.add_column("feature")
        table.add_column("measure")
        table.add_column("distance", justify="right")
        table.add_column("threshold", justify="right")
        table.add_column("verdict")
        for f in comparison.features:
            cells = [f.feature, f.measure, "–" if f.distance is None else f"{f.distance:.4f}",
                     f"{f.threshold:g}", f.verdict]
            table.add_row(*(Text(shown(cell)) for cell in cells))
        console.print(table)
    crossed = [f"{c.test}: {f.feature}" for c in comparisons for f in c.crossed]
    console.print(Text(shown(f"{len(crossed)} threshold(s) crossed" + (": " + ", ".join(crossed) if crossed else ""))))
