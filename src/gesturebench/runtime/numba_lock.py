"""numba's on-disk kernel cache (`cache=True`), written one process at a time.

Two processes compiling the same cached kernel at once (DDP ranks or parallel sweep jobs on a fresh
install) can write cache files that disagree with each other, and every process that loads them
later dies with a segmentation fault (github.com/numba/numba/issues/10128). Every cached kernel
therefore compiles, or loads from the cache, under a machine-wide file lock of its library
(`compile_lock(name)`): one per library, since their cache files are disjoint, so that a process
loading this package's kernels never waits while another compiles librosa's (about 15 s in a new
environment):

- `cached_kernel(**options)`: `numba.njit(cache=True, **options)` whose compilation of each new
  signature (called from Python or from another kernel) holds `COMPILE_LOCK`, this package's.
  Only the first call of a signature in a process waits; later calls run the compiled code
  without the lock.
- `compile_lock(name)`: the lock of library `name`, for a library whose cached kernels compile
  when it is imported (librosa: `runtime/librosa_lock.py`).

A lock is reentrant within a thread, so a kernel that compiles its callees keeps it throughout.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numba
from filelock import FileLock


def compile_lock(name: str) -> FileLock:
    """The lock the cached kernels of library `name` compile under: one file per machine (per
    temporary folder) and library; per thread, other threads wait like other processes."""
    return FileLock(Path(tempfile.gettempdir()) / f"gesturebench-numba-{name}.lock")


#: The lock this package's cached kernels compile under.
COMPILE_LOCK = compile_lock("gesturebench")


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
