"""`skewless run` shows its progress: a live line on a terminal, a few plain lines when not a TTY (CI)."""

import os
import pty
import subprocess
import sys

import yaml

from conftest import example_config


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
