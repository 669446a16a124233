"""Files of lines (CSV, JSON Lines): the whole lines that start in a byte range, in blocks, numbered on demand.

A byte range owns the lines that *start* inside it: a reader seeks to `start - 1`, drops the rest of that line,
then reads lines until one starts at or after `stop`, so ranges cut anywhere give every line to one range. A
block's first line number is counted only when asked (a bad row needs it), reading the file up to the block.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator

from skewless.pipelines.reading.files import open_input

_COUNT_BYTES = 8 << 20  # read at a time to count the lines before a block


@dataclass(frozen=True)
class LineBlock:
    """Whole lines of a file (`data`, each ending in "\\n" but maybe the file's last) and their first line's number."""

    data: bytes
    first_line: Callable[[], int]  # the 1-based number of data's first line; may read the file up to it


def line_blocks(path: str, start: int, stop: int, header: bool, block_bytes: int) -> Iterator[LineBlock]:
    """The lines that start in bytes [`start`, `stop`) of a file (-1: to its end), in blocks of about
    `block_bytes`; with `header`, the file's header line (`skip_header`) is no part of them."""
    first_of_segment = None
    lines_before_block = 0
    for data, offset, known_first in _blocks(path, header, start, stop, block_bytes):
        if first_of_segment is None:
            first_of_segment = _Lazy(lambda offset=offset, known=known_first: known or _lines_before(path, offset) + 1)
        yield LineBlock(data, lambda before=lines_before_block: first_of_segment() + before)
        lines_before_block += data.count(b"\n")


def skip_header(handle) -> tuple[int, int, bytes | None]:
    """Reads up to and with the header, the first line that is not blank: (bytes read, lines read, the header)."""
    position = lines = 0
    while True:
        line = handle.readline()
        if not line:
            return position, lines, None
        position += len(line)
        lines += 1
        if line.strip():
            return position, lines, line


def _blocks(path: str, header: bool, start: int, stop: int, block_bytes: int) -> Iterator[tuple[bytes, int, int | None]]:
    """(block, offset of its first byte, its first line's number when known without counting) for the lines
    that start in [`start`, `stop`), in blocks of whole lines."""
    with open_input(path) as handle:
        position, first_line = start, None
        if start > 0:
            handle.seek(start - 1)
            position = start - 1 + len(handle.readline())
        else:
            position, lines, _ = skip_header(handle) if header else (0, 0, None)
            first_line = lines + 1
        stop = stop if stop >= 0 else None
        carry = b""
        block_start = position  # file offset of the first byte of the next block
        while True:
            want = block_bytes if stop is None else min(block_bytes, max(stop - position, 0))
            data = handle.read(want) if want > 0 else b""
            position += len(data)
            at_end = not data or (stop is not None and position >= stop)
            if at_end:
                block = carry + data
                if block and not block.endswith(b"\n"):
                    # the last owned line runs past `stop`: read it to its end
                    block += handle.readline()
                carry = b""
            else:
                cut = data.rfind(b"\n")
                if cut < 0:
                    carry += data
                    continue
                block, carry = carry + data[: cut + 1], data[cut + 1 :]
            if block:
                yield block, block_start, first_line
                block_start += len(block)
            if at_end:
                return


def _lines_before(path: str, offset: int) -> int:
    count, remaining = 0, offset
    with open_input(path) as handle:
        while remaining > 0:
            data = handle.read(min(remaining, _COUNT_BYTES))
            if not data:
                break
            count += data.count(b"\n")
            remaining -= len(data)
    return count


class _Lazy:
    """A value computed on first use: line numbers are only needed for bad rows."""

    def __init__(self, compute: Callable):
        self._compute = compute
        self._done = False
        self._value = None

    def __call__(self):
        if not self._done:
            self._value, self._done = self._compute(), True
        return self._value
