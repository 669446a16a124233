"""A job leaves the objects that existed before it out of the collector's walks, and gives them back after."""

import gc

from skewless.pipelines.runner.collector import pre_existing_objects_frozen


def test_the_heap_is_frozen_during_a_job_and_given_back_after():
    # an in-process `skewless run` earlier in this test session froze the heap for good, as the command does
    gc.unfreeze()
    assert gc.get_freeze_count() == 0
    kept = [object() for _ in range(10)]
    with pre_existing_objects_frozen():
        assert gc.get_freeze_count() >= len(kept)
    assert gc.get_freeze_count() == 0
    # a process that froze its own heap (the `skewless` command) keeps it frozen, and nothing more is frozen
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with pre_existing_objects_frozen():
            made = [object() for _ in range(10)]
            assert gc.get_freeze_count() == frozen
        assert gc.get_freeze_count() == frozen and made
    finally:
        gc.unfreeze()
