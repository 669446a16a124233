"""`ThreadedMap` (pipelines/runner/bundle_threads.py): a bundle's elements run at once, results come in element
order, and a failure stops the others and waits for them before the pipeline fails."""

import threading
import time

import apache_beam as beam
import pytest
from apache_beam.testing.util import assert_that, equal_to

from skewless.pipelines.runner.bundle_threads import ThreadedMap

_PARTNERS = threading.Barrier(2, timeout=30)
_FINISHED: list = []


def _meet_then_square(element, stop):
    """Each of two elements waits for the other: one thread after the other would time out (BrokenBarrierError)."""
    _PARTNERS.wait()
    time.sleep(0.05 * (3 - element))  # the first element finishes last
    return element * element


def _fail_or_wait(element, stop):
    if element == 0:
        time.sleep(0.2)
        raise ValueError("unit 0 is bad")
    stop.wait(30)  # returns as soon as the bundle stops it
    _FINISHED.append((element, stop.is_set()))
    return element


def _run(elements, fn):
    with beam.Pipeline("FnApiRunner") as pipeline:
        squares = pipeline | beam.Create(elements) | beam.ParDo(ThreadedMap(fn, threads=2))
        assert_that(squares, equal_to([e * e for e in elements]))


def test_two_elements_run_at_once_and_come_out_in_their_order():
    do_fn = ThreadedMap(_meet_then_square, threads=2)
    do_fn.start_bundle()
    for element in (1, 2):
        assert list(do_fn.process(element)) == []  # nothing until the bundle finishes
    assert [value.value for value in do_fn.finish_bundle()] == [1, 4]
    assert not [t for t in threading.enumerate() if t.name.startswith("skewless-bundle")]


def test_a_failed_element_stops_the_others_before_the_pipeline_fails():
    _FINISHED.clear()
    with pytest.raises(Exception, match="unit 0 is bad"):
        _run([0, 1, 2], _fail_or_wait)
    # element 1 was started beside the failing one and returned once stopped; 2 never started (one thread was
    # busy with 1 and the other failed), or started and was stopped: no element is still running
    assert (1, True) in _FINISHED
    assert all(stopped for _, stopped in _FINISHED)
    assert not [t for t in threading.enumerate() if t.name.startswith("skewless-bundle")]
