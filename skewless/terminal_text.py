"""What the CLI prints of a text that comes from data or a config: control characters escaped, credentials cut.

A category value, a column name or a config's name may hold terminal control sequences: ESC ] 52 (write the
clipboard), ESC [ 2J (clear the screen), a carriage return that overwrites what came before, a bidirectional
override that shows text in another order. Printed raw, they act on the user's terminal. Every line the CLI
prints from such text (errors, progress lines, summaries, the tables of `inspect`, `validate` and `verify`) goes
through `shown`: a control character becomes its escape (``\\x1b``, ``\\n``, ``\\u202e``), so one value stays on
one line and does nothing but show. The report page escapes HTML instead (skewless/report), and `--json` output
is escaped by JSON itself.

A line printed to a terminal (or where COLUMNS says how wide the screen is) is wrapped at its spaces by `fitted`:
the terminal would break it at its last column, through a number or a word.
"""

from __future__ import annotations

import os
import re
import textwrap
from typing import TextIO

from skewless.redaction import without_credentials

# C0 and C1 controls and DEL (Unicode's "Cc"), the line and paragraph separators, and the bidirectional controls
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def printable(text: str) -> str:
    """`text` with each control character as its escape."""
    return _CONTROL.sub(lambda match: _escape(match.group()), text)


def shown(text: str) -> str:
    """`text` as the CLI prints it: without credentials (skewless.redaction), control characters escaped."""
    return printable(without_credentials(text))


def shown_lines(text: str) -> str:
    """`shown` of each line of a text the CLI prints as several lines (its own line breaks kept)."""
    return "\n".join(shown(line) for line in text.split("\n"))


def _escape(character: str) -> str:
    code = ord(character)
    return _NAMED.get(character) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def line_width(stream: TextIO) -> int | None:
    """How many cells a line printed to `stream` may take: COLUMNS when set (as rich reads it), else the width of
    the terminal `stream` is, else None (a file or a pipe: lines are kept whole for the tools that read them)."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    try:
        return os.get_terminal_size(stream.fileno()).columns if stream.isatty() else None
    except (AttributeError, OSError, ValueError):  # a stream of no file (a test's StringIO), or a closed one
        return None


def fitted(text: str, width: int | None) -> str:
    """Each line of `text` wrapped at its spaces to `width` cells, the rest of a line indented two spaces; a word
    longer than a line (a path) is never broken. `width` None: `text` as it is."""
    if not width:
        return text
    return "\n".join(line if len(line) <= width else "\n".join(textwrap.wrap(
        line, width, subsequent_indent="  ", break_long_words=False, break_on_hyphens=False))
        for line in text.split("\n"))
