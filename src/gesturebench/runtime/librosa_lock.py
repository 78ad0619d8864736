"""librosa, imported under a machine-wide file lock, on first use.

librosa compiles its numba kernels with ``cache=True`` when its modules are imported; they compile
or load under librosa's compile lock (`runtime/numba_lock.py`: two processes filling numba's cache
at once can leave files that crash every later process), so the first compilation is one process
at a time and later imports only read the cache. The import waits
for the first call: a run whose speech onsets are all cached, and whose audio needs no resampling,
never imports librosa, nor compiles its kernels into a new environment (about 15 CPU-seconds).
Every module of this package takes librosa from here
(``from gesturebench.runtime.librosa_lock import librosa``, then ``librosa().onset…``).
"""

from __future__ import annotations

import functools
import importlib
from types import ModuleType

from gesturebench.runtime.numba_lock import compile_lock


@functools.cache
def librosa() -> ModuleType:
    """The librosa module, its onset detection and its cached gufuncs (peak picking, local
    extrema) imported, hence compiled or loaded, under librosa's compile lock."""
    with compile_lock("librosa"):
        for name in ("librosa.onset", "librosa.util.utils"):
            importlib.import_module(name)
        return importlib.import_module("librosa")


__all__ = ["librosa"]
