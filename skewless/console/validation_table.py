"""`skewless validate`: a `ValidationReport` as a rich table and a one-line summary."""

from __future__ import annotations

from rich.text import Text

from skewless.console.fitted_tables import Column, fitted_tables, output_console
from skewless.schemas.validate import ValidationReport
from skewless.terminal_text import shown_lines

# piped or captured with no COLUMNS set: no width to fit, and wrapping would cut file paths apart
_PIPED_WIDTH = 200
_COLUMNS = [Column("anomaly", wrap=True), Column("feature", key=True), Column("rows", "right"),
            Column("examples", wrap=True)]


def print_report(report: ValidationReport, console=None) -> None:
    """The anomalies as a rich table, then a one-line summary."""
    console = console or output_console(_PIPED_WIDTH)
    if report.anomalies:
        rows = [[anomaly.title, anomaly.feature or "-", str(anomaly.rows),
                 # one example a line; Text: control characters in the data are escaped line by line
                 Text(shown_lines("\n".join(f"{where}  {detail}" for where, detail in anomaly.examples)))]
                for anomaly in report.anomalies]
        for table in fitted_tables("Schema anomalies", _COLUMNS, rows, console.width, show_lines=True):
            console.print(table)
    share = report.bad_rows / report.rows if report.rows else 0.0
    console.print(
        f"{report.rows} rows checked, {report.bad_rows} bad ({share:.2%}), {len(report.anomalies)} kinds of anomaly",
        highlight=False,
        markup=False,
    )
