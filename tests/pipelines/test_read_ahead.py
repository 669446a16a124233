"""read_ahead: same items in the same order, errors where they happened, bounded, and it stops when told."""

import threading

import pytest

from skewless.pipelines.reading.read_ahead import read_ahead


def test_items_arrive_in_order_from_another_thread():
    producers = []

    def items():
        for i in range(200):
            producers.append(threading.current_thread())
            yield i

    assert list(read_ahead(items(), depth=3)) == list(range(200))
    assert set(producers) and threading.current_thread() not in producers


def test_the_producer_stays_at_most_depth_items_ahead():
    produced, gaps = [], []
    consumed = 0

    def items():
        for i in range(50):
            produced.append(i)
            gaps.append(len(produced) - consumed)
            yield i

    for _ in read_ahead(items(), depth=2):
        consumed += 1
    # waiting in the queue (2) + the one being offered (1) + the one the consumer holds (1)
    assert max(gaps) <= 4


def test_an_error_is_raised_in_the_consumer_after_the_items_before_it():
    def items():
        yield 1
        yield 2
        raise ValueError("bad record 3")

    seen = []
    with pytest.raises(ValueError, match="bad record 3"):
        for item in read_ahead(items()):
            seen.append(item)
    assert seen == [1, 2]


def test_closing_early_stops_the_producer_and_closes_the_source():
    closed = threading.Event()

    def items():
        try:
            i = 0
            while True:
                yield i
                i += 1
        finally:
            closed.set()

    reader = read_ahead(items(), depth=1)
    assert [next(reader) for _ in range(3)] == [0, 1, 2]
    reader.close()
    assert closed.is_set()
    assert not any(t.name == "skewless-read-ahead" for t in threading.enumerate())
