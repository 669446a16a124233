"""`skewless validate`: a `ValidationReport` as a rich table and a one-line summary."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from skewless.schemas.validate import ValidationReport
from skewless.terminal_text import shown, shown_lines

_PIPED_WIDTH = 200


def print_report(report: ValidationReport, console=None) -> None:
    """The anomalies as a rich table, then a one-line summary."""
    if console is None:
        console = Console()
        if not console.is_terminal:
            # Piped or captured output has no width to fit; wrapping would cut file paths apart.
            console = Console(width=_PIPED_WIDTH)
    if report.anomalies:
        table = Table(title="Schema anomalies", show_lines=True)
        table.add_column("anomaly")
        table.add_column("feature")
        table.add_column("rows", justify="right")
        table.add_column("examples")
        for anomaly in report.anomalies:
            examples = "\n".join(f"{where}  {detail}" for where, detail in anomaly.examples)
            # Text cells: data such as "[x]" is not rich markup; control characters in it are escaped
            table.add_row(Text(shown(anomaly.title)), Text(shown(anomaly.feature or "-")), str(anomaly.rows),
                          Text(shown_lines(examples)))
        console.print(table)
    share = report.bad_rows / report.rows if report.rows else 0.0
    console.print(
        f"{report.rows} rows checked, {report.bad_rows} bad ({share:.2%}), {len(report.anomalies)} kinds of anomaly",
        highlight=False,
        markup=False,
    )
