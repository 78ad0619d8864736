"""numba's on-disk kernel cache (`cache=True`), written one process at a time.

Two processes compiling the same cached kernel at once (DDP ranks or parallel sweep jobs on a fresh
install) can write cache files that disagree with each other, and every process that loads them
later dies with a segmentation fault (github.com/numba/numba/issues/10128). Every cached kernel of
this package therefore compiles, or loads from the cache, under one machine-wide file lock:

- `cached_kernel(**options)`: `numba.njit(cache=True, **options)` whose compilation of each new
  signature (called from Python or from another kernel) holds `COMPILE_LOCK`. Only the first call
  of a signature in a process waits; later calls run the compiled code without the lock.
- `COMPILE_LOCK`: the lock itself, for a library whose cached kernels compile when it is imported
  (librosa: `runtime/librosa_lock.py`).

The lock is reentrant within a thread, so a kernel that compiles its callees keeps it throughout.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numba
from filelock import FileLock

#: The lock file: one per machine (per temporary folder).
LOCK_PATH = Path(tempfile.gettempdir()) / "gesturebench-numba-cache.lock"
#: The one lock every cached kernel compiles under (per thread: other threads wait like other
#: processes).
COMPILE_LOCK = FileLock(LOCK_PATH)


def cached_kernel(**options: Any) -> Callable[[Callable[..., Any]], Any]:
    """`numba.njit(cache=True, **options)`, compiling (or loading from the cache) under
    `COMPILE_LOCK`."""

    def decorate(function: Callable[..., Any]) -> Any:
        kernel = numba.njit(cache=True, **options)(function)
        unlocked = kernel.compile

        def compile_locked(signature: Any) -> Any:
            with COMPILE_LOCK:
                return unlocked(signature)

        kernel.compile = compile_locked  # numba compiles every new signature through this method
        return kernel

    return decorate
