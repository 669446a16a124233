"""Files of lines (CSV, JSON Lines): the whole lines that start in a byte range, in blocks, numbered on demand.

A byte range owns the lines that *start* inside it: a reader seeks to `start - 1`, drops the rest of that line,
then reads lines until one starts at or after `stop`, so ranges cut anywhere give every line to one range. A
block's first line number is counted only when asked (a bad row needs it), reading the file up to the block.

A line longer than `input.max_line_bytes` (8 MiB unless set) is never held whole: once that many bytes of it are
read, the rest is read past and dropped, and the block holds an empty line in its place (so every later line keeps
its number); `LineBlock.long_lines` names it, and the format's reader quarantines it (`rejected_long_lines`). Every
value of a row is therefore at most that long, whatever the file holds (docs/errors.md, "What a value may cost").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator

import numpy as np

from skewless.pipelines.reading.batches import RejectedRow
from skewless.pipelines.reading.files import open_input
from skewless.schemas.row_checks import RowProblem

# column types are inferred from about this many bytes of whole lines, read at SAMPLE_PIECES places spread evenly
# over the input's bytes: a column numeric in the first MB and text further on is judged on both
SAMPLE_BYTES = 1 << 20
SAMPLE_PIECES = 64
_COUNT_BYTES = 8 << 20  # read at a time to count the lines before a block
_SKIP_BYTES = 1 << 20  # read at a time past the end of a line too long to keep
LONG_LINE_SHOWN = 256  # the first bytes of a line too long to keep, as quarantine shows it


@dataclass(frozen=True)
class LongLine:
    """A line longer than the limit, left out of its block (an empty line holds its place)."""

    index: int  # among the block's lines, 0-based
    length: int  # its bytes, its line end aside
    head: bytes  # its first `LONG_LINE_SHOWN` bytes


@dataclass(frozen=True)
class LineBlock:
    """Whole lines of a file (`data`, each ending in "\\n" but maybe the file's last) and their first line's number."""

    data: bytes
    first_line: Callable[[], int]  # the 1-based number of data's first line; may read the file up to it
    long_lines: tuple[LongLine, ...] = ()  # the lines left out as too long (empty lines in `data`)


def line_blocks(path: str, start: int, stop: int, header: bool, block_bytes: int,
                max_line_bytes: int) -> Iterator[LineBlock]:
    """The lines that start in bytes [`start`, `stop`) of a file (-1: to its end), in blocks of about
    `block_bytes`; with `header`, the file's header line (`skip_header`) is no part of them. A line longer than
    `max_line_bytes` is left out (`LineBlock.long_lines`)."""
    first_of_segment = None
    lines_before_block = 0
    for data, offset, known_first, long_lines in _blocks(path, header, start, stop, block_bytes, max_line_bytes):
        if first_of_segment is None:
            first_of_segment = _Lazy(lambda offset=offset, known=known_first: known or _lines_before(path, offset) + 1)
        yield LineBlock(data, lambda before=lines_before_block: first_of_segment() + before, long_lines)
        lines_before_block += data.count(b"\n")


def rejected_long_lines(block: LineBlock, max_line_bytes: int) -> list[RejectedRow]:
    """The block's lines left out as too long, as rejected rows numbered by their index in the block (0-based),
    each kept in quarantine as its first bytes and its length."""
    return [RejectedRow(line.index, line.head + f"… [{line.length:,} bytes]".encode(), RowProblem(
        "line_too_long", None, f"the line is {line.length:,} bytes, more than input.max_line_bytes "
                               f"({max_line_bytes:,}): no value of it is read"))
            for line in block.long_lines]


def sample_lines(paths: list[str], sizes: list[int], header: bool, max_line_bytes: int,
                 splittable: Callable[[str], bool]) -> bytes:
    """Whole lines (each ending in "\\n") sampled from the files, for inferring column types: every line when
    the files hold at most `SAMPLE_BYTES`, else the lines that start in `SAMPLE_PIECES` byte ranges spread evenly
    over the files' bytes (`sample_ranges`), each realigned at a line start. A file that cannot be entered at
    an offset (`splittable` false: gzip, multiline CSV) gives as many bytes from its start instead, at most
    `SAMPLE_BYTES` (a small gzip file may hold far more)."""
    ranges: dict[int, list[tuple[int, int]]] = {}
    for index, start, stop in sample_ranges(sizes):
        ranges.setdefault(index, []).append((start, stop))
    parts = []
    for index, owned in ranges.items():
        path = paths[index]
        if not splittable(path):
            held = sum(stop - start if stop >= 0 else SAMPLE_BYTES for start, stop in owned)
            owned = [(0, min(held, SAMPLE_BYTES))]
        for start, stop in owned:
            for block in line_blocks(path, start, stop, header, SAMPLE_BYTES, max_line_bytes):
                parts.append(block.data if block.data.endswith(b"\n") else block.data + b"\n")
    return b"".join(parts)


def sample_ranges(sizes: list[int], total: int = SAMPLE_BYTES, pieces: int = SAMPLE_PIECES
                  ) -> list[tuple[int, int, int]]:
    """(file index, start, stop) of the byte ranges `sample_lines` reads: each whole file (stop -1) when the files
    hold at most `total` bytes, else `pieces` ranges of `total / pieces` bytes at evenly spaced offsets of the
    files' bytes taken end to end, the first at the first byte and the last ending at the last."""
    whole = sum(sizes)
    if whole <= total:
        return [(index, 0, -1) for index, size in enumerate(sizes) if size]
    piece = total // pieces
    ends = np.cumsum(sizes)
    found = []
    for offset in np.linspace(0, whole - piece, pieces).astype(np.int64).tolist():
        index = int(np.searchsorted(ends, offset, side="right"))
        start = offset - int(ends[index] - sizes[index])
        found.append((index, start, min(start + piece, sizes[index])))
    return found


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


def _blocks(path: str, header: bool, start: int, stop: int, block_bytes: int,
            max_line: int) -> Iterator[tuple[bytes, int, int | None, tuple[LongLine, ...]]]:
    """(block, offset of its first byte, its first line's number when known without counting, its long lines) for
    the lines that start in [`start`, `stop`), in blocks of whole lines."""
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
        dropped: list[LongLine] = []  # long lines left out of `carry`
        shrunk = 0  # how many bytes fewer `carry` holds than the file did, for them
        block_start = position  # file offset of the first byte of the next block
        while True:
            want = block_bytes if stop is None else min(block_bytes, max(stop - position, 0))
            data = handle.read(want) if want > 0 else b""
            position += len(data)
            at_end = not data or (stop is not None and position >= stop)
            if at_end:
                block = carry + data
                if block and not block.endswith(b"\n"):
                    # the last owned line runs past `stop`: read it to its end (no further than the limit)
                    partial = len(block) - block.rfind(b"\n") - 1
                    block += handle.readline(max(max_line + 2 - partial, 1))
                    if not block.endswith(b"\n") and len(block) - block.rfind(b"\n") - 1 > max_line:
                        block, _, removed = _drop_last_line(handle, block, dropped)
                        shrunk += removed
                carry = b""
            else:
                cut = data.rfind(b"\n")
                if cut < 0:
                    carry += data
                    if len(carry) - carry.rfind(b"\n") - 1 > max_line:
                        carry, read_past, removed = _drop_last_line(handle, carry, dropped)
                        position += read_past
                        shrunk += removed
                    continue
                block, carry = carry + data[: cut + 1], data[cut + 1 :]
            if block:
                block, found, removed = _without_long_lines(block, max_line)
                long_lines = tuple(sorted(dropped + found, key=lambda line: line.index))
                yield block, block_start, first_line, long_lines
                block_start += len(block) + shrunk + removed
                dropped, shrunk = [], 0
            if at_end:
                return


def _drop_last_line(handle, data: bytes, dropped: list[LongLine]) -> tuple[bytes, int, int]:
    """`data` with its last line, unfinished and longer than the limit, emptied once the rest of that line is read
    past (`handle` is left at the next line); the line is added to `dropped`. Returns the new data, how many
    bytes were read past and how many bytes fewer than the file the new data holds."""
    begins = data.rfind(b"\n") + 1
    length, read_past = len(data) - begins, 0
    while True:
        rest = handle.readline(_SKIP_BYTES)
        read_past += len(rest)
        if not rest.endswith(b"\n"):
            length += len(rest)
            if rest:
                continue
            break
        length += len(rest) - 1
        break
    dropped.append(LongLine(data.count(b"\n", 0, begins), length, data[begins : begins + LONG_LINE_SHOWN]))
    # the line's bytes (and its line end, if it had one) became one "\n"
    return data[:begins] + b"\n", read_past, length + rest.endswith(b"\n") - 1


def _without_long_lines(block: bytes, max_line: int) -> tuple[bytes, list[LongLine], int]:
    """`block` with its lines longer than `max_line` emptied (their line ends kept), those lines, and how many
    bytes they held."""
    if len(block) <= max_line:
        return block, [], 0
    data = np.frombuffer(block, dtype=np.uint8)
    ends = np.flatnonzero(data == 10)
    if not block.endswith(b"\n"):
        ends = np.append(ends, len(block))  # the file's last line, without a line end
    starts = np.concatenate([[0], ends[:-1] + 1])
    long_ones = np.flatnonzero(ends - starts > max_line)
    found, parts, kept_from = [], [], 0
    for index in long_ones:
        begins, finish = int(starts[index]), int(ends[index])
        found.append(LongLine(int(index), finish - begins, block[begins : min(finish, begins + LONG_LINE_SHOWN)]))
        parts.append(block[kept_from:begins])
        kept_from = finish
    if not found:
        return block, [], 0
    parts.append(block[kept_from:])
    return b"".join(parts), found, sum(line.length for line in found)


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
