"""StageThread: the calls run in order on another thread (or on the caller's), bounded, errors raised later."""

import threading

import pytest

from skewless.pipelines.runner.stage_thread import StageThread


def test_calls_run_in_order_on_one_other_thread():
    ran, threads = [], set()

    def call(i):
        threads.add(threading.current_thread())
        ran.append(i)

    stage = StageThread("test", pending=3)
    for i in range(200):
        stage.submit(call, i)
    stage.drain()
    assert ran == list(range(200))
    assert len(threads) == 1 and threading.current_thread() not in threads


def test_not_threaded_runs_each_call_inside_submit():
    ran = []
    stage = StageThread("test", pending=3, threaded=False)
    stage.submit(lambda: ran.append(threading.current_thread()))
    assert ran == [threading.current_thread()]
    stage.drain()


def test_at_most_pending_calls_are_unfinished():
    release = threading.Event()
    started = []

    def call(i):
        started.append(i)
        release.wait()

    stage = StageThread("test", pending=2)
    stage.submit(call, 0)
    stage.submit(call, 1)
    third = threading.Thread(target=stage.submit, args=(call, 2))
    third.start()
    third.join(timeout=0.5)
    assert third.is_alive() and started == [0]  # the third submit waits for the first call to finish
    release.set()
    third.join()
    stage.drain()
    assert started == [0, 1, 2]


def test_an_error_is_raised_by_the_next_submit_or_by_drain():
    def fail():
        raise ValueError("bad chunk")

    stage = StageThread("test", pending=1)
    stage.submit(fail)
    with pytest.raises(ValueError, match="bad chunk"):
        stage.submit(lambda: None)  # waits for the failed call before it queues another
    stage.abort()

    stage = StageThread("test", pending=4)
    stage.submit(fail)
    with pytest.raises(ValueError, match="bad chunk"):
        stage.drain()


def test_abort_drops_the_calls_not_started():
    running, release = threading.Event(), threading.Event()
    ran = []

    def call(i):
        running.set()
        release.wait()
        ran.append(i)

    stage = StageThread("test", pending=5)
    for i in range(4):
        stage.submit(call, i)
    running.wait()
    threading.Timer(0.2, release.set).start()
    stage.abort()  # returns once the running call is done; the other three never run
    assert ran == [0]
