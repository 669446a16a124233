"""Live progress of a running job: a refreshing line on a terminal, a few plain log lines elsewhere (CI, files).

The display knows nothing of Beam. It is fed `Snapshot`s (the stage, rows processed in it so far, and
the rows expected when known), pulled from a `poll` callable every `interval` seconds, or pushed with
`ProgressDisplay.update`. Rows per second are the stage's average since its first snapshot (rows
counted from there).

On a terminal (rich), a line per finished stage above a live one:
``⠹ transform ━━━━━━━━╺━━━━━━━  23,456 / 50,000 rows  4,210 rows/s  0:00:12``.
Elsewhere: one line when a stage starts, one every `log_interval` seconds, one at the end, so CI logs
stay short.

Example:

```python
import time
from skewless.progress import Snapshot, show_progress

done = {"rows": 0}
with show_progress(lambda: Snapshot("transform", done["rows"], total=3000), interval=0.1):
    for _ in range(3):
        time.sleep(0.2)
        done["rows"] += 1000
```
"""

from __future__ import annotations

import sys
import threading
import time
from contextlib import contextmanager
from typing import Callable, Iterator, TextIO

from rich.cells import cell_len
from rich.console import Console
from rich.live import Live
from rich.progress_bar import ProgressBar
from rich.spinner import Spinner
from rich.table import Table
from rich.text import Text

from skewless.progress_snapshot import Snapshot  # also imported from here, with the display that draws it
from skewless.terminal_text import fitted, line_width, shown


class ProgressDisplay:
    """Shows `Snapshot`s as they arrive; `start` before the first and `finish` after the last.

    `interactive` defaults to whether `stream` is a terminal. `clock` is injectable for tests.
    """

    def __init__(
        self,
        stream: TextIO | None = None,
        interactive: bool | None = None,
        log_interval: float = 15.0,
        title: str = "skewless",
        clock: Callable[[], float] = time.monotonic,
    ):
        self.stream = stream if stream is not None else sys.stderr
        self.interactive = _is_terminal(self.stream) if interactive is None else interactive
        self.log_interval = log_interval
        self.title = title
        self._clock = clock
        self._lock = threading.Lock()
        self._started = None
        self._snapshot: Snapshot | None = None
        self._stage_started = None
        self._last_seen = None  # when the latest snapshot arrived (the display's start before any)
        self._stage_rows = 0
        self._reported: set[str] = set()  # the stages whose "finished" line was written
        self._last_log = None
        self._live = None
        self._console = None
        self._spinner = None  # one spinner for the display's life, so that its frames turn

    # ------------------------------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        self._started = self._last_seen = self._clock()
        if self.interactive:
            self._console = Console(file=self.stream, force_terminal=True)
            self._spinner = Spinner("dots")
            # transient: the live line is replaced by the final summary line at the end
            self._live = Live(self, console=self._console, refresh_per_second=4, transient=True)
            self._live.start()

    def update(self, snapshot: Snapshot) -> None:
        """Takes the job's latest counters (safe to call from any thread)."""
        lines = []
        with self._lock:
            now = self._clock()
            previous = self._snapshot
            if previous is None or snapshot.stage != previous.stage:
                if previous is None:
                    self._stage_started, self._stage_rows = self._last_seen, 0
                # The final rows of the stages that ended, from the snapshot that knows them: the last one seen
                # of a stage is from before its end, and a stage that ran whole between two polls was never seen.
                ended = dict(snapshot.finished)
                if previous is not None:
                    ended.setdefault(previous.stage, previous.rows)
                for stage, rows in ended.items():
                    if stage not in self._reported:
                        self._reported.add(stage)
                        lines.append(self._stage_done_line(stage, rows, now))
                # A stage began after the last sighting of the one before (or the start): counted from there
                # with no rows, so a stage that ran whole between two polls still gets its real rate.
                self._stage_started = self._last_seen
                self._stage_rows = 0
                self._last_log = now
                if not self.interactive:
                    lines.append(f"{self._prefix(now)}: {snapshot.stage}: started")
            elif not self.interactive and now - self._last_log >= self.log_interval:
                self._last_log = now
                lines.append(f"{self._prefix(now)}: {self._describe(snapshot, now)}")
            self._snapshot = snapshot
            self._last_seen = now
        # Written outside the lock: printing makes rich re-render the live line, which takes the lock.
        for line in lines:
            self._emit(line)

    def finish(self, failed: bool = False, interrupted: bool = False) -> None:
        """Stops the live line and writes the last one: the final stage's numbers, and done or failed. Interrupted,
        it writes none: the command's own "interrupted" is the last line."""
        if self._live is not None:
            self._live.stop()
        if interrupted:
            return
        with self._lock:
            now = self._clock()
            outcome = "failed" if failed else "done"
            last = f"; {self._describe(self._snapshot, now)}" if self._snapshot is not None else ""
            line = f"{self._prefix(now)}: {outcome}{last}"
        self._emit(line)

    # ------------------------------------------------------------------------------------------ text

    def _describe(self, snapshot: Snapshot, now: float) -> str:
        rows = f"{snapshot.rows:,}"
        if snapshot.total:
            rows += f" / {snapshot.total:,} rows ({min(snapshot.rows / snapshot.total, 1.0):.0%})"
        else:
            rows += " rows"
        return f"{snapshot.stage}: {rows}, {self._rate(snapshot.rows, now):,.0f} rows/s"

    def _stage_done_line(self, stage: str, rows: int, now: float) -> str:
        took = _clock_text(now - self._stage_started)
        return f"{self._prefix(now)}: {stage} finished in {took}: {rows:,} rows, {self._rate(rows, now):,.0f} rows/s"

    def _rate(self, rows: int, now: float) -> float:
        seconds = now - self._stage_started
        return (rows - self._stage_rows) / seconds if seconds > 0 else 0.0

    def _prefix(self, now: float) -> str:
        return f"{self.title} [{_clock_text(now - self._started)}]"

    def _emit(self, line: str) -> None:
        if self._console is not None:
            # printed above the live line; Text so that job data is never read as rich markup
            self._console.print(Text(shown(line)))
        else:
            print(fitted(shown(line), line_width(self.stream)), file=self.stream, flush=True)

    def __rich_console__(self, console, options):
        """The live line, rendered afresh at every refresh so the elapsed time moves between snapshots. It fits the
        terminal on one line: the bar shrinks, then goes, then the clock, the rate and the counts; no number is cut."""
        with self._lock:
            now = self._clock()
            snapshot = self._snapshot
            elapsed = _clock_text(now - self._started)
            rate = self._rate(snapshot.rows, now) if snapshot is not None else 0.0
        cells = [Text("starting" if snapshot is None else snapshot.stage, style="bold")]
        total = snapshot.total if snapshot is not None else None
        if snapshot is not None:
            cells.append(Text(f"{snapshot.rows:,} / {total:,} rows" if total else f"{snapshot.rows:,} rows"))
            cells.append(Text(f"{rate:,.0f} rows/s", style="cyan"))
        cells.append(Text(elapsed, style="dim"))
        # a terminal echoes ^C at the cursor, the end of this line: on a full line it wraps, and the line moved
        # down is not the one rich erases on the way out (the spinner's last frame stayed on the screen)
        room = options.max_width - _ECHO_ROOM
        spinner = max(map(cell_len, self._spinner.frames))
        shown_cells = len(cells)
        while len(cells) > 1 and _spaced_width([spinner, *(cell.cell_len for cell in cells)]) > room:
            cells.pop()
        bar_width = min(_BAR_WIDTH, room - _spaced_width([spinner, *(cell.cell_len for cell in cells), 0]))
        line = Table.grid(padding=(0, 1))
        row = [self._spinner, cells[0]]
        if total and bar_width >= _LEAST_BAR_WIDTH and len(cells) == shown_cells:
            row.append(ProgressBar(total=total, completed=min(snapshot.rows, total), width=bar_width))
        line.add_row(*row, *cells[1:])
        yield line


# the live line's progress bar: at most this wide, and left out when narrower than the least
_BAR_WIDTH = 30
_LEAST_BAR_WIDTH = 8
# cells left free at the end of the live line for the terminal's echo of ^C
_ECHO_ROOM = 3


def _spaced_width(widths: list[int]) -> int:
    """The width of cells side by side, a space between each two."""
    return sum(widths) + len(widths) - 1


@contextmanager
def show_progress(
    poll: Callable[[], Snapshot | None] | None = None,
    stream: TextIO | None = None,
    interactive: bool | None = None,
    interval: float | None = None,
    log_interval: float = 15.0,
    title: str = "skewless",
    interrupted: Callable[[BaseException], bool] = lambda error: isinstance(error, KeyboardInterrupt),
) -> Iterator[ProgressDisplay]:
    """Shows a job's progress while the block runs; yields the `ProgressDisplay`.

    Args:
      poll: returns the job's current `Snapshot` (or None while there is nothing to show); called
        from a background thread every `interval` seconds and once more at the end. Leave it out to
        push snapshots with `display.update` instead.
      stream: where to write (default stderr).
      interactive: a live line (True) or plain log lines (False); default: whether `stream` is a terminal.
      interval: seconds between polls; default 0.5 on a terminal, 1 otherwise (a poll reads a few tiny
        files; polled seldom, a stage's start and end would show late, or all at once at the end).
      log_interval: seconds between plain log lines within one stage.
      interrupted: whether an error that ends the block comes of a Ctrl-C (then no "failed" line is written;
        the command says it was interrupted). Default: a KeyboardInterrupt.
    """
    display = ProgressDisplay(stream, interactive, log_interval, title)
    interval = interval if interval is not None else (0.5 if display.interactive else 1.0)
    stop = threading.Event()
    display.start()
    poller = None
    if poll is not None:
        poller = threading.Thread(target=_poll_until, args=(poll, display, stop, interval), daemon=True,
                                  name="skewless-progress")
        poller.start()
    failed = stopped = False
    try:
        yield display
    except BaseException as error:
        failed, stopped = True, interrupted(error)
        raise
    finally:
        stop.set()
        if poller is not None:
            poller.join()
            _poll_once(poll, display)
        display.finish(failed, interrupted=stopped)


def _poll_until(poll, display: ProgressDisplay, stop: threading.Event, interval: float) -> None:
    while not stop.is_set():
        _poll_once(poll, display)
        stop.wait(interval)


def _poll_once(poll, display: ProgressDisplay) -> None:
    try:
        snapshot = poll()
    except Exception:  # noqa: BLE001 - a failing progress source must never fail the job it watches
        return
    if snapshot is not None:
        display.update(snapshot)


def _clock_text(seconds: float) -> str:
    seconds = int(max(seconds, 0))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def _is_terminal(stream) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())
