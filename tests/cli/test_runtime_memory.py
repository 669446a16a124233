"""The CLI's process settings for memory (skewless.runtime.keep_freed_memory), each in a fresh interpreter: they
must run before pyarrow is imported, and a setting the user made wins."""

import os
import subprocess
import sys

import pytest

POOL_AFTER_SETUP = (
    "from skewless import runtime; runtime.keep_freed_memory(); import pyarrow; "
    "print(pyarrow.default_memory_pool().backend_name)"
)


@pytest.mark.parametrize("users_pool, expected", [(None, "system"), ("mimalloc", "mimalloc")])
def test_arrow_allocates_from_malloc_unless_the_user_chose_a_pool(users_pool, expected):
    env = {key: value for key, value in os.environ.items() if key != "ARROW_DEFAULT_MEMORY_POOL"}
    if users_pool is not None:
        env["ARROW_DEFAULT_MEMORY_POOL"] = users_pool
    done = subprocess.run([sys.executable, "-c", POOL_AFTER_SETUP], env=env, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == expected
