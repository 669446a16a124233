"""`interruptible` (pipelines/reading/interruptible.py) off the main thread: a database call made by a bundle's
element is cancelled once the element is stopped (another element failed, or the job was interrupted), rather
than waited for; outside an element it is a plain call."""

import threading
import time

import apache_beam as beam
import pytest

from skewless.pipelines.reading.interruptible import interruptible
from skewless.pipelines.runner.bundle_threads import ThreadedMap
from skewless.pipelines.runner.element_stop import Stopped, stopped_by


class SlowQuery:
    """A driver call that blocks until cancelled (or 30 s), recording what happened to it (in `folder` too, where
    given: a DoFn's copy of it is not the test's)."""

    def __init__(self, folder=None):
        self.cancelled = threading.Event()
        self.returned = threading.Event()
        self._folder = folder

    def execute(self):
        self._record("started")
        self.cancelled.wait(30)
        self.returned.set()
        self._record("returned")
        return "rows"

    def cancel(self):
        self.cancelled.set()
        self._record("cancelled")

    def _record(self, what):
        if self._folder is not None:
            (self._folder / what).touch()


def _on_a_thread(target):
    outcome = {}

    def run():
        try:
            outcome["value"] = target()
        except BaseException as error:
            outcome["error"] = error

    thread = threading.Thread(target=run)
    thread.start()
    return thread, outcome


def test_a_stopped_element_cancels_its_call_and_waits_for_it_to_return():
    query, stop = SlowQuery(), threading.Event()

    def element():
        with stopped_by(stop):
            return interruptible(query.execute, query.cancel)

    thread, outcome = _on_a_thread(element)
    stop.set()
    thread.join(20)
    assert not thread.is_alive()
    assert isinstance(outcome.get("error"), Stopped)
    assert query.cancelled.is_set() and query.returned.is_set()  # cancelled, and returned before the element ended


def test_an_element_not_stopped_gets_the_value_and_the_error_of_its_call():
    stop = threading.Event()

    def value():
        with stopped_by(stop):
            return interruptible(lambda: threading.current_thread().name)

    def error():
        with stopped_by(stop):
            return interruptible(lambda: 1 / 0)

    for target, check in ((value, lambda o: o["value"] == "skewless-database-call"),
                          (error, lambda o: isinstance(o["error"], ZeroDivisionError))):
        thread, outcome = _on_a_thread(target)
        thread.join(20)
        assert check(outcome), outcome


def test_outside_an_element_a_call_off_the_main_thread_runs_on_that_thread():
    thread, outcome = _on_a_thread(lambda: interruptible(lambda: threading.current_thread().name))
    thread.join(20)
    assert outcome["value"] == thread.name


def _fail_or_query(element, folder, stop):
    if element == 0:
        deadline = time.monotonic() + 20
        while not (folder / "started").exists() and time.monotonic() < deadline:
            time.sleep(0.01)  # element 1's query runs
        raise ValueError("unit 0 is bad")
    query = SlowQuery(folder)
    return interruptible(query.execute, query.cancel)


def test_a_bundle_whose_element_failed_cancels_the_query_another_element_waits_on(tmp_path):
    """The bundle's pool runs element 1's query beside element 0, which fails: the bundle stops element 1, whose
    query is cancelled, and the pipeline fails with element 0's error (before: it waited out the query)."""
    with pytest.raises(Exception, match="unit 0 is bad"):
        with beam.Pipeline("FnApiRunner") as pipeline:
            _ = pipeline | beam.Create([0, 1]) | beam.ParDo(ThreadedMap(_fail_or_query, tmp_path, threads=2))
    assert sorted(path.name for path in tmp_path.iterdir()) == ["cancelled", "returned", "started"]
