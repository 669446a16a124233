"""Booleans, one rule in every format and at serving: true is the int 1, false the int 0 (docs/values.md).

A typed boolean (Parquet, Arrow, JSON, SQL, a Python `bool`) is a whole number already; text holding one
of `WORDS` (any case, whitespace around it ignored: pandas writes ``True``, R ``TRUE``, JSON and SQL
``true``) is read as that number wherever a number is read from text: a CSV field, a string in a numeric
column, a client's request built by `skewless.layers.serialize_raw_examples`. So a CSV column of
``True``/``False`` is an int column, as the same column stored as Parquet booleans is.
"""

from __future__ import annotations

import numpy as np

WORDS = {"true": 1, "false": 0}
# the words as alternatives of a regular expression (row_checks' number grammars, matched ignoring case)
PATTERN = "|".join(WORDS)


def as_int(value):
    """`value` with a bool made 1 or 0; any other value as it is."""
    return int(value) if isinstance(value, (bool, np.bool_)) else value


def as_number(value):
    """`value` with a bool or a boolean word made 1 or 0 (where a number is read from text); any other value as
    it is."""
    if isinstance(value, (bool, np.bool_)):
        return int(value)
    if isinstance(value, (str, bytes)):
        word = (value.decode("utf-8", "replace") if isinstance(value, bytes) else value).strip().lower()
        return WORDS.get(word, value)
    return value
