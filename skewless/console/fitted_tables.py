"""Tables that fit the console's width without cutting a number or a name.

rich shrinks every column of a table wider than the console, the last resort evenly, and cuts what no longer
fits to `185,1…`. Here each column gets a width it chooses: a column of numbers or names as wide as its widest
cell (kept on one line), a column of prose (lists of values, reasons) at least as wide as its longest word,
wrapped at spaces. When even that is wider than the console, the value columns are split over several tables,
each repeating the columns that name a row (feature, split): columns wrap, values never do.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Sequence

from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

from skewless.terminal_text import shown

# a rich Table's padding of (0, 1) and its vertical rules: two cells a column, one rule between and around them
_PADDING = 2
# the narrowest a column of names gets when a table cannot fit otherwise (its names fold onto more lines)
_LEAST_KEY_WIDTH = 8


@dataclass(frozen=True)
class Column:
    header: str
    justify: str = "left"
    # prose (lists of values, reasons, file:line examples): wrapped at spaces; else a cell stays on one line
    wrap: bool = False
    # names the row (feature, split): repeated in every table a wide one is split into
    key: bool = False


def fitted_tables(title: str, columns: Sequence[Column], rows: Sequence[Sequence], width: int,
                  row_styles: Sequence[str | None] | None = None, caption: str | None = None,
                  **table_options) -> list[Table]:
    """The rows as one table of at most `width` cells, or as several (the key columns in each) when the value
    columns do not fit side by side. Cells are data: a str is shown as text (never rich markup, control characters
    escaped); a Text is shown as it is. The caption goes under the last table."""
    cells = [[cell if isinstance(cell, Text) else Text(shown(str(cell))) for cell in row] for row in rows]
    needs = [_Need.of(column, [row[i] for row in cells]) for i, column in enumerate(columns)]
    keys = [i for i, column in enumerate(columns) if column.key]
    parts = _parts(keys, [i for i, column in enumerate(columns) if not column.key], needs, width)
    tables = []
    for number, part in enumerate(parts):
        chosen = keys + part
        table = Table(title=Text(title if number == 0 else f"{title} (continued)"), title_justify="left",
                      caption=Text(caption) if caption and number == len(parts) - 1 else None, caption_justify="left",
                      **table_options)
        widths = _widths([needs[i] for i in chosen], len(keys), width)
        for i, column_width in zip(chosen, widths):
            column = columns[i]
            # a column narrower than its widest cell (names narrowed to fit) folds its cells onto more lines
            table.add_column(column.header, justify=column.justify, width=column_width, overflow="fold",
                             no_wrap=not column.wrap and column_width >= needs[i].most)
        for row, style in zip(cells, row_styles or [None] * len(cells)):
            table.add_row(*(row[i] for i in chosen), style=style)
        tables.append(table)
    return tables


def output_console(piped_width: int | None = None) -> Console:
    """The console a command prints its tables to: the terminal's width (COLUMNS when set). Piped into a file with
    no COLUMNS set, `piped_width` if given: a file has no width to fit, and long paths then stay on one line."""
    console = Console()
    if piped_width and not console.is_terminal and "COLUMNS" not in os.environ:
        console = Console(width=max(console.width, piped_width))
    return console


@dataclass(frozen=True)
class _Need:
    least: int  # the narrowest width that cuts nothing: the widest cell (one line), or the longest word (prose)
    most: int  # the width that shows every cell on one line

    @classmethod
    def of(cls, column: Column, cells: list[Text]) -> _Need:
        lines = [line for cell in cells for line in cell.plain.split("\n")] + [column.header]
        most = max(cell_len(line) for line in lines)
        least = max((cell_len(word) for line in lines for word in line.split()), default=0) if column.wrap else most
        return cls(max(least, 1), max(most, 1))


def _table_width(needs: list[_Need]) -> int:
    return sum(need.least + _PADDING for need in needs) + len(needs) + 1


def _parts(keys: list[int], values: list[int], needs: list[_Need], width: int) -> list[list[int]]:
    """The value columns in groups that fit beside the key columns, in their order."""
    parts: list[list[int]] = [[]]
    for i in values:
        if parts[-1] and _table_width([needs[j] for j in keys + parts[-1] + [i]]) > width:
            parts.append([])
        parts[-1].append(i)
    return parts


def _widths(needs: list[_Need], keys: int, width: int) -> list[int]:
    """Each column's least width, then what is left of `width` shared out to the prose columns, one cell at a time,
    up to the width that puts each of their cells on one line. A table that cannot fit (long names beside a wide
    column) narrows its first `keys` columns, the names, which then fold onto more lines; the values keep their
    width. Should even that not do, rich folds the rest: nothing is cut off."""
    widths = [need.least for need in needs]
    spare = width - _table_width(needs)
    while spare < 0 and max(widths[:keys], default=0) > _LEAST_KEY_WIDTH:
        widest = widths.index(max(widths[:keys]))
        widths[widest] -= 1
        spare += 1
    growing = [i for i, need in enumerate(needs) if need.most > need.least]
    while spare > 0 and growing:
        for i in list(growing):
            if spare == 0:
                break
            widths[i] += 1
            spare -= 1
            if widths[i] >= needs[i].most:
                growing.remove(i)
    return widths
