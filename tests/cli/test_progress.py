"""Progress display: plain lines with the right numbers off a terminal, a live line on one, never failing the job."""

import io
import re
import threading

import pytest

from skewless.progress import ProgressDisplay, Snapshot, show_progress


class FakeClock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_plain_lines_stage_changes_rates_and_interval():
    clock, out = FakeClock(), io.StringIO()
    display = ProgressDisplay(out, interactive=False, log_interval=30, title="job", clock=clock)
    display.start()
    display.update(Snapshot("analyze", 0))
    clock.now += 10
    display.update(Snapshot("analyze", 5_000))  # within log_interval: no line
    clock.now += 25
    display.update(Snapshot("analyze", 14_000))  # 35 s into the stage
    clock.now += 5
    display.update(Snapshot("transform", 1_000, total=20_000))
    clock.now += 40
    display.update(Snapshot("transform", 9_000, total=20_000))
    clock.now += 10
    display.update(Snapshot("transform", 20_000, total=20_000))
    display.finish()
    assert out.getvalue().splitlines() == [
        "job [0:00:00]: analyze: started",
        f"job [0:00:35]: analyze: 14,000 rows, {14_000 / 35:,.0f} rows/s",
        f"job [0:00:40]: analyze finished in 0:00:40: 14,000 rows, {14_000 / 40:,.0f} rows/s",
        "job [0:00:40]: transform: started",
        # a stage is counted from the last sighting of the one before (0:00:35), with no rows
        f"job [0:01:20]: transform: 9,000 / 20,000 rows (45%), {9_000 / 45:,.0f} rows/s",
        f"job [0:01:30]: done; transform: 20,000 / 20,000 rows (100%), {20_000 / 55:,.0f} rows/s",
    ]


def test_a_finished_stage_is_reported_with_its_final_rows_not_the_last_polled():
    """The poll saw analyze at 30,000 rows; it ended at 50,000, which the first transform snapshot knows."""
    clock, out = FakeClock(), io.StringIO()
    display = ProgressDisplay(out, interactive=False, log_interval=30, title="job", clock=clock)
    display.start()
    clock.now += 2
    display.update(Snapshot("analyze", 30_000))
    clock.now += 3
    display.update(Snapshot("transform", 0, total=50_000, finished=(("analyze", 50_000),)))
    display.finish()
    lines = out.getvalue().splitlines()
    assert lines[1] == f"job [0:00:05]: analyze finished in 0:00:05: 50,000 rows, {50_000 / 5:,.0f} rows/s"


def test_a_stage_that_ran_between_two_polls_still_gets_its_line():
    clock, out = FakeClock(), io.StringIO()
    display = ProgressDisplay(out, interactive=False, log_interval=30, title="job", clock=clock)
    display.start()
    clock.now += 4
    display.update(Snapshot("transform", 7, total=9, finished=(("analyze", 9),)))
    display.finish()
    assert out.getvalue().splitlines()[:2] == [
        f"job [0:00:04]: analyze finished in 0:00:04: 9 rows, {9 / 4:,.0f} rows/s",
        "job [0:00:04]: transform: started",
    ]


def test_polls_in_background_and_reports_the_last_numbers():
    out = io.StringIO()
    rows = {"n": 0}
    polled = threading.Event()

    def poll():
        polled.set()
        return Snapshot("transform", rows["n"], total=300)

    with show_progress(poll, stream=out, interval=0.01, log_interval=0.0) as display:
        assert not display.interactive  # a StringIO is not a terminal
        assert polled.wait(10)
        for _ in range(3):
            rows["n"] += 100
            polled.clear()
            assert polled.wait(10)
    lines = out.getvalue().splitlines()
    assert "\x1b" not in out.getvalue()
    assert lines[0].endswith("transform: started")
    assert re.fullmatch(r"skewless \[[0-9:]+\]: done; transform: 300 / 300 rows \(100%\), [0-9,]+ rows/s", lines[-1])
    counts = [int(m.group(1).replace(",", "")) for m in map(re.compile(r"transform: ([0-9,]+) /").search, lines) if m]
    assert counts == sorted(counts) and counts[-1] == 300


def test_live_line_on_a_terminal():
    out = io.StringIO()
    rows = {"n": 0}
    with show_progress(lambda: Snapshot("analyze" if rows["n"] < 50 else "transform", rows["n"], total=100),
                       stream=out, interactive=True, interval=0.01):
        for _ in range(10):
            rows["n"] += 10
            threading.Event().wait(0.02)
    text = out.getvalue()
    assert "\x1b[" in text  # drawn with terminal control codes
    assert "analyze finished in" in text
    assert re.search(r"done; transform: 100 / 100 rows \(100%\)", text)


def test_a_failing_poll_never_fails_the_job():
    out = io.StringIO()

    def poll():
        raise RuntimeError("metrics are not available yet")

    with show_progress(poll, stream=out, interactive=False, interval=0.01):
        threading.Event().wait(0.05)
    assert out.getvalue().splitlines() == [re.match(r"skewless \[\S+\]: done", out.getvalue()).group(0)]


def test_a_failing_job_says_failed_and_raises():
    out = io.StringIO()
    with pytest.raises(ValueError):
        with show_progress(lambda: Snapshot("analyze", 7), stream=out, interactive=False, interval=0.01):
            raise ValueError("boom")
    assert re.search(r"failed; analyze: 7 rows, [\d,]+ rows/s$", out.getvalue().splitlines()[-1])


def test_job_data_is_not_read_as_markup():
    out = io.StringIO()
    display = ProgressDisplay(out, interactive=True)
    display.start()
    display.update(Snapshot("[bold]read[/bold]", 1))
    display.update(Snapshot("write", 2))
    display.finish()
    assert "[bold]read[/bold] finished" in out.getvalue()


@pytest.mark.parametrize("width", [40, 60, 80, 100, 160])
@pytest.mark.parametrize("snapshot", [Snapshot("analyze", 123_456_789), Snapshot("transform", 23_456, total=50_000),
                                      Snapshot("transform", 1_234_567_890, total=2_018_782_000)])
def test_the_live_line_fits_the_terminal_on_one_line(width, snapshot):
    """At most the width less the room a terminal's ^C echo takes (a full line wraps when ^C is typed, and the
    line rich erases is then not its own), and every number whole (issue 42: at 80 columns "rows" wrapped)."""
    from rich.console import Console

    clock = FakeClock()
    display = ProgressDisplay(io.StringIO(), interactive=True, clock=clock)
    display.start()
    clock.now += 3_725
    display.update(snapshot)
    out = io.StringIO()
    Console(file=out, width=width).print(display)
    display.finish()
    [line] = out.getvalue().rstrip("\n").split("\n")
    assert len(line.rstrip()) <= width - 3, line
    counts = f"{snapshot.rows:,}" + (f" / {snapshot.total:,}" if snapshot.total else "") + " rows"
    shown = re.findall(r"[\d][\d,:]*", line)
    whole = re.findall(r"[\d][\d,:]*", f"{counts} 1:02:05") + re.findall(r"[\d][\d,]*(?= rows/s)", line)
    assert set(shown) <= set(whole), line
    if width >= 80:
        assert counts in line and "1:02:05" in line  # room enough for the counts and the clock
