"""librosa, imported under a machine-wide file lock.

librosa compiles its numba kernels with ``cache=True`` when its modules are imported; they compile
or load under the lock of every cached kernel of this package (`runtime/numba_lock.py`: two
processes filling numba's cache at once can leave files that crash every later process), so the
first compilation is one process at a time and later imports only read the cache.
Every module of this package takes librosa from here
(``from gesturebench.runtime.librosa_lock import librosa``).
"""

from __future__ import annotations

from gesturebench.runtime.numba_lock import COMPILE_LOCK

with COMPILE_LOCK:
    import librosa
    import librosa.onset
    import librosa.util.utils  # the cached gufuncs (peak picking, local extrema) compile here

__all__ = ["librosa"]
