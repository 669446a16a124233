"""Ctrl-C typed into an 80-column terminal during `skewless run`: what the screen shows afterwards ends with
`skewless: interrupted`, with no frame of the live line and no "failed" line left above it (issue 42, item 10).

The run gets a pseudo-terminal as its controlling terminal, so ^C goes through the terminal driver as a user's
does: it echoes `^C` at the cursor and sends SIGINT to the process group. A small screen model (the few control
sequences rich writes) replays the output, as a terminal would have drawn it.
"""

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import termios
import time

import yaml

from commands import TESTS, as_a_shell_starts_it
from example_job import example_config

WIDTH = 80
SPINNER = re.compile("[\u2800-\u28ff]")  # rich's "dots" spinner frames are braille cells
CSI = re.compile(r"\x1b\[([?0-9;]*)([A-Za-z])")


def screen_of(output: str, width: int = WIDTH) -> list[str]:
    """The lines a terminal `width` cells wide shows after `output`: printable text with automatic margins (a
    character past the last column starts the next line), CR, LF, cursor up/down and erase in line."""
    lines, row, column, at = [[]], 0, 0, 0
    while at < len(output):
        sequence = CSI.match(output, at)
        if sequence:
            argument, command = sequence.groups()
            count = int(argument) if argument.isdigit() else 1
            if command == "A":
                row = max(row - count, 0)
            elif command == "B":
                row += count
            elif command == "K":
                line = lines[row] if row < len(lines) else []
                lines[row] = [] if argument == "2" else line[:column] if argument in ("", "0") else line
            elif command == "G":
                column = count - 1
            at = sequence.end()
            continue
        character = output[at]
        at += 1
        if character == "\r":
            column = 0
        elif character == "\n":
            row += 1
        elif character >= " ":
            if column >= width:  # the pending wrap of a full line
                row, column = row + 1, 0
            while len(lines) <= row:
                lines.append([])
            line = lines[row] + [" "] * max(column - len(lines[row]), 0)
            lines[row] = line[:column] + [character] + line[column + 1:]
            column += 1
        while len(lines) <= row:
            lines.append([])
    return ["".join(line).rstrip() for line in lines]


def test_ctrl_c_leaves_only_the_interrupted_line(tmp_path):
    config = tmp_path / "job.yaml"
    # rows enough that the transform stage, whose live line has a bar, is still running when ^C comes
    config.write_text(yaml.safe_dump(example_config(tmp_path / "out", input={"format": "synthetic", "rows": 250_000,
                                                                             "seed": 7})))
    controller, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24, WIDTH, 0, 0))
    environment = {key: value for key, value in os.environ.items() if key not in ("SKEWLESS_DEBUG", "COLUMNS")}
    environment.update(PYTHONPATH=str(TESTS), TERM="xterm-256color")
    process = subprocess.Popen(
        as_a_shell_starts_it("-m", "skewless", "run", str(config)), stdin=terminal, stdout=terminal, stderr=terminal,
        env=environment, start_new_session=True,
        # the terminal becomes the run's controlling terminal: ^C typed into it is the driver's SIGINT
        preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0))
    os.close(terminal)
    output, typed, deadline = b"", False, time.time() + 300
    try:
        while time.time() < deadline:
            if select.select([controller], [], [], 0.1)[0]:
                try:
                    chunk = os.read(controller, 65536)
                except OSError:  # the run ended and closed the terminal
                    break
                if not chunk:
                    break
                output += chunk
            # the transform stage's live line (it has a total, so a bar) has been drawn
            if not typed and re.search(rb"[0-9,]+ / [0-9,]+ rows", output.split(b"analyze finished")[-1]):
                os.write(controller, b"\x03")
                typed = True
        assert process.wait(timeout=120) == 130
    finally:
        if process.poll() is None:
            process.kill()
        os.close(controller)
    assert typed, f"the run ended before its transform stage was seen: {output[-2000:]!r}"
    shown = [line for line in screen_of(output.decode("utf-8", "replace")) if line]
    assert shown[-1] == "skewless: interrupted", shown[-5:]
    assert not [line for line in shown if SPINNER.search(line)], shown[-5:]  # the live line is gone
    assert not [line for line in shown if "failed" in line], shown[-5:]
    assert [line for line in shown if "analyze finished in" in line], shown[-5:]  # what the display wrote stays
