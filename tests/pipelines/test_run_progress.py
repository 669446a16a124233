"""`skewless run` shows its progress: a live line on a terminal, a few plain lines when not a TTY (CI)."""

import json
import os
import pty
import re
import subprocess
import sys
import time

import yaml

from example_job import example_config


def write_config(tmp_path, rows=20_000):
    path = tmp_path / "job.yaml"
    config = example_config(tmp_path / "out", input={"format": "synthetic", "rows": rows, "seed": 1},
                            output={"shards": 2})
    path.write_text(yaml.safe_dump(config))
    return path


def test_plain_lines_when_not_a_terminal(tmp_path):
    done = subprocess.run([sys.executable, "-m", "skewless", "run", str(write_config(tmp_path))],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("skewless run example")]
    assert lines, done.stderr
    assert len(lines) <= 12  # quiet: stage starts and ends, one line every 15 s, the end
    assert any("transform" in line for line in lines)
    assert "20,000" in lines[-1] or "20000" in lines[-1]  # the last line counts every row
    assert "\x1b[" not in done.stderr  # no terminal escapes in a log
    # the command renders the report once the run is published: the page names the run's final folder
    assert f"<code>{tmp_path / 'out'}</code>" in (tmp_path / "out" / "report.html").read_text()


def test_live_line_on_a_terminal(tmp_path):
    main, child = pty.openpty()
    process = subprocess.Popen([sys.executable, "-m", "skewless", "run", str(write_config(tmp_path))],
                               stdin=child, stdout=child, stderr=child, env={**os.environ, "COLUMNS": "120"})
    os.close(child)
    output = b""
    while True:
        try:
            data = os.read(main, 65536)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        output += data
    assert process.wait(timeout=600) == 0, output.decode(errors="replace")
    text = output.decode(errors="replace")
    assert "rows/s" in text and "transform" in text
    assert "\x1b[" in text  # rich redraws the line in place


# What TensorFlow's C++ side logs at start-up on a CPU-only machine (absl's format: severity, MMDD, time),
# and the notice absl prints before them.
TF_NATIVE_LOG = re.compile(r"^[IWEF]\d{4} \d\d:\d\d:\d\d|WARNING: All log messages before absl::InitializeLog")


def test_plain_lines_arrive_during_the_run_with_the_counts_of_run_json(tmp_path):
    """Off a terminal: each pass's lines come while it runs, a finished pass reports the rows it read (not
    the last count polled), stderr holds none of TensorFlow's C++ log lines nor tf.Transform's retracing
    warnings, and run.json's seconds count from the process's start."""
    started = time.time()
    process = subprocess.Popen([sys.executable, "-m", "skewless", "run", str(write_config(tmp_path, rows=300_000))],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    arrived = [(time.time(), line.rstrip("\n")) for line in process.stderr]
    assert process.wait(timeout=600) == 0, "\n".join(line for _, line in arrived)
    wall = time.time() - started
    summary = json.loads((tmp_path / "out" / "run.json").read_text())
    read = summary["rows"]["read"]
    lines = [line for _, line in arrived]
    assert not [line for line in lines if TF_NATIVE_LOG.search(line)]
    assert not [line for line in lines if "cache key varies" in line]
    progress = [(when, line) for when, line in arrived if line.startswith("skewless run example")]
    assert len(progress) == len(lines), lines  # nothing else on stderr
    [analyzed] = [line for _, line in progress if "analyze finished" in line]
    assert f": {read:,} rows," in analyzed
    assert f"done; transform: {read:,} / {read:,} rows (100%)" in progress[-1][1]
    # spread over the run: the first line (analyze started, polled every second) long before the last
    assert progress[-1][0] - progress[0][0] >= 2, progress
    seconds = summary["seconds"]
    assert 0 < seconds["startup"] and seconds["startup"] + seconds["pipeline"] <= seconds["total"] <= wall
