"""What a stage freed goes back to the system between stages (pipelines/runner/freed_memory.py), under the
command's malloc settings (`runtime.keep_freed_memory`: freed memory is kept for reuse), in a fresh interpreter."""

import subprocess
import sys

import pytest

# 200 MiB allocated and written in 1 MiB blocks, all freed but every tenth (which keeps the freed memory inside
# the heap, where only a trim reaches it); prints the resident MiB after the frees and after return_freed_memory
FREED_THEN_RETURNED = """
import ctypes
from skewless import runtime
runtime.keep_freed_memory()
from skewless.pipelines.runner.freed_memory import return_freed_memory

def resident():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) // 1024 for line in status if line.startswith("VmRSS:"))

libc = ctypes.CDLL("libc.so.6")
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
blocks = [libc.malloc(1 << 20) for _ in range(200)]
for block in blocks:
    ctypes.memset(block, 1, 1 << 20)
for index, block in enumerate(blocks):
    if index % 10:
        libc.free(block)
kept = resident()
return_freed_memory()
print(kept, resident())
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc")
def test_memory_freed_inside_the_heap_is_returned():
    done = subprocess.run([sys.executable, "-c", FREED_THEN_RETURNED], capture_output=True, text=True, check=True)
    kept, returned = map(int, done.stdout.split())
    assert kept - returned >= 150, (kept, returned)  # 180 MiB were freed
