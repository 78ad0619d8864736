"""librosa, imported under a machine-wide file lock.

librosa compiles its numba kernels with ``cache=True`` when its modules are imported. Two processes
compiling the same gufuncs at once (DDP ranks or parallel sweep jobs on a fresh install) can write
cache files that disagree with each other, and every process that loads them later dies with a
segmentation fault (github.com/numba/numba/issues/10128). Holding a lock while librosa's kernels
compile or load makes the first compilation one process at a time; later imports only read the
cache.
Every module of this package takes librosa from here
(``from gesturebench.runtime.librosa_lock import librosa``).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from filelock import FileLock

#: The lock file: one per machine (per temporary folder).
LOCK_PATH = Path(tempfile.gettempdir()) / "gesturebench-librosa-numba.lock"

with FileLock(LOCK_PATH):
    import librosa
    import librosa.onset
    import librosa.util.utils  # the cached gufuncs (peak picking, local extrema) compile here

__all__ = ["LOCK_PATH", "librosa"]
