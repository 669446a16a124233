"""skewless/console/fitted_tables.py at many widths: no line past the console's width, every number whole in some
table, every row named by its key columns (folded when they are too long) in each table a wide one is split into."""

import collections
import io
import re

import numpy as np
import pytest
from rich.console import Console

from skewless.console.fitted_tables import Column, fitted_tables

NUMBER = re.compile(r"(?<![\w.,])-?\d(?:[\d,]*\d)?(?:\.\d+)?(?!\w)")
NAMES = ["age", "capital_gain", "native_country", "x", "a_rather_long_feature_name"]


def _rows(seed: int) -> list[list[str]]:
    rng = np.random.default_rng(seed)
    rows = []
    for name in NAMES:
        numbers = [f"{int(value):,}" for value in rng.lognormal(8, 4, 7)] + [f"{rng.normal(0, 1e3):.2f}"]
        prose = ", ".join(f"value-{i} ({int(count):,})" for i, count in enumerate(rng.integers(1, 10**7, 4)))
        rows.append([name, rng.choice(["train", "eval"]), *numbers, prose])
    return rows


COLUMNS = [Column("feature", key=True), Column("split", key=True),
           *(Column(header, "right") for header in ("count", "missing", "mean", "std", "min", "~ median", "max",
                                                    "delta")),
           Column("most frequent values (rows)", wrap=True)]


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("width", [40, 48, 60, 80, 100, 132, 250])
def test_every_number_whole_within_the_width(width, seed):
    rows = _rows(seed)
    out = io.StringIO()
    console = Console(file=out, width=width)
    tables = fitted_tables("Statistics (a title long enough to wrap at the narrower widths)", COLUMNS, rows, width)
    for table in tables:
        console.print(table)
    shown = out.getvalue()
    assert max(map(len, shown.splitlines())) <= width, shown
    assert "…" not in shown
    expected = collections.Counter(number for row in rows for cell in row for number in NUMBER.findall(cell))
    assert expected - collections.Counter(NUMBER.findall(shown)) == collections.Counter(), shown
    # a name too long for its column folds onto the next line: read down the first column, each name is whole
    first_column = "".join(line.split("│")[1].strip() for line in shown.splitlines() if line.startswith("│"))
    assert all(name in first_column for name in NAMES), first_column
    for table in tables:  # each part names its rows
        assert [column.header for column in table.columns][:2] == ["feature", "split"]
        assert table.row_count == len(rows)
    assert len(tables) == 1 or width < 250  # split only when the columns do not fit side by side
