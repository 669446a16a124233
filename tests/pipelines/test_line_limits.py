"""`lines.line_blocks` with lines longer than the limit (issue 41 items 8, 12): every line of a file, cut into byte
ranges anywhere and read in blocks of any size, comes out once, with its number, whole or (too long) left out as
an empty line with its length, as splitting the file's bytes in Python says."""

import gzip
import random

import pytest

from skewless.pipelines.reading.lines import LONG_LINE_SHOWN, line_blocks


def _file(seed: int) -> bytes:
    """Lines of 0-300 bytes (a few of them 'long'), the last one maybe without a line end."""
    chooser = random.Random(seed)
    lines = [bytes(chooser.choice(b"abc,;") for _ in range(chooser.choice([0, 3, 40, 99, 100, 101, 180, 300])))
             for _ in range(chooser.randint(1, 60))]
    return b"\n".join(lines) + (b"\n" if chooser.random() < 0.5 else b"")


def _lines(data: bytes) -> list[bytes]:
    lines = data.split(b"\n")
    return lines[:-1] if data.endswith(b"\n") or not data else lines


def _expected(data: bytes, limit: int) -> list[tuple[int, bytes | int]]:
    """(line number, the line or, when longer than `limit`, its length) for every line of `data`."""
    return [(number, line if len(line) <= limit else len(line)) for number, line in enumerate(_lines(data), 1)]


def _read(path, cuts: list[int], limit: int, block_bytes: int) -> list[tuple[int, bytes | int]]:
    """What `line_blocks` gives over the ranges between `cuts`; a long line's start is checked against the file."""
    originals = _lines(path.read_bytes())
    found = []
    for start, stop in zip(cuts, cuts[1:] + [-1]):
        for block in line_blocks(str(path), start, stop, False, block_bytes, limit):
            lines = block.data.split(b"\n")[: block.data.count(b"\n") + (not block.data.endswith(b"\n"))]
            long_lines = {line.index: line for line in block.long_lines}
            if long_lines and max(long_lines) >= len(lines):  # the file's last line, left out without a line end
                lines += [b""] * (max(long_lines) + 1 - len(lines))
            for index, line in enumerate(lines):
                if index in long_lines:
                    number, head = block.first_line() + index, long_lines[index].head
                    assert line == b"" and originals[number - 1].startswith(head)
                    assert len(head) >= min(limit + 1, LONG_LINE_SHOWN)
                    found.append((block.first_line() + index, long_lines[index].length))
                else:
                    found.append((block.first_line() + index, line))
    return found


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("block_bytes", [7, 64, 1000])
def test_long_lines_are_left_out_numbered_wherever_ranges_and_blocks_cut(seed, block_bytes, tmp_path):
    data = _file(seed)
    path = tmp_path / "x.txt"
    path.write_bytes(data)
    chooser = random.Random(seed + 1000)
    cuts = [0] + sorted(chooser.sample(range(1, max(len(data), 2)), min(3, max(len(data) - 1, 0))))
    assert _read(path, cuts, 100, block_bytes) == _expected(data, 100)


def test_a_long_line_keeps_its_start_and_the_next_line_its_number(tmp_path):
    data = b"a\n" + b"x" * 5000 + b"\nb\n"
    path = tmp_path / "x.csv.gz"
    path.write_bytes(gzip.compress(data))
    blocks = list(line_blocks(str(path), 0, -1, False, 64, 1024))
    assert b"".join(block.data for block in blocks) == b"a\n\nb\n"
    (long_line,) = [line for block in blocks for line in block.long_lines]
    assert long_line.length == 5000 and long_line.head == b"x" * LONG_LINE_SHOWN
