"""Every cached numba kernel compiles under the machine-wide lock (runtime/numba_lock.py;
concurrent first compilations can crash later processes): the package's own through
`cached_kernel`, librosa's on import, librosa taken only from `gesturebench.runtime.librosa_lock`;
two processes compiling the same kernel at once both finish, and a third loads their cache."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import gesturebench

SRC = Path(gesturebench.__file__).parent

#: Run in a fresh process with an empty numba cache: count librosa's cached gufunc files when the
#: lock is released and again after an onset detection.
CHILD = """
import glob, os, filelock
def count():
    pattern = os.path.join(os.environ["NUMBA_CACHE_DIR"], "**", "*.nbi")
    return len(glob.glob(pattern, recursive=True))
class Recording(filelock.FileLock):
    def __exit__(self, *exc):
        print("at-release", count(), flush=True)
        return super().__exit__(*exc)
filelock.FileLock = Recording
from gesturebench.runtime.librosa_lock import librosa
import numpy as np
y = np.random.default_rng(0).standard_normal(16000).astype(np.float32)
librosa().onset.onset_detect(y=y, sr=16000)
print("after-onsets", count(), flush=True)
"""


#: Run in a fresh process on the shared NUMBA_CACHE_DIR: wait for the go file (argv[1]), compute the
#: hierarchy's distances between two seeded clouds, save them (argv[2]); print how many of the
#: hierarchy's cache index files there were each time the lock was released.
NEAREST = """
import glob, os, sys, time, filelock
def count():
    pattern = os.path.join(os.environ["NUMBA_CACHE_DIR"], "**", "nearest_bvh.*.nbi")
    return len(glob.glob(pattern, recursive=True))
class Recording(filelock.FileLock):
    def __exit__(self, *exc):
        print("at-release", count(), flush=True)
        return super().__exit__(*exc)
filelock.FileLock = Recording
import numpy as np
from gesturebench.metrics.functional import nearest_bvh
rng = np.random.default_rng(0)
a, b = rng.normal(size=(3, 200, 3)), rng.normal(size=(3, 150, 3))
d_ab, d_ba = np.empty((3, 200)), np.empty((3, 150))
print("ready", flush=True)
while not os.path.exists(sys.argv[1]):
    time.sleep(0.01)
nearest_bvh.nearest_frames(a, b, d_ab, d_ba)
np.save(sys.argv[2], np.concatenate([d_ab.ravel(), d_ba.ravel()]))
"""


def _cached_kernel_calls(tree: ast.AST) -> list[int]:
    """Lines of calls with a `cache=True` keyword (numba's njit, jit, vectorize, guvectorize)."""
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        for keyword in node.keywords
        if keyword.arg == "cache"
        and isinstance(keyword.value, ast.Constant)
        and keyword.value.value is True
    ]


def test_every_cached_kernel_compiles_under_the_lock():
    """`cache=True` is written in runtime/numba_lock.py only: every other kernel that caches is a
    `cached_kernel`."""
    offenders = {
        str(path.relative_to(SRC)): lines
        for path in sorted(SRC.rglob("*.py"))
        if path.name != "numba_lock.py"
        for lines in [_cached_kernel_calls(ast.parse(path.read_text()))]
        if lines
    }
    assert offenders == {}


@pytest.mark.slow
def test_two_processes_compiling_a_kernel_at_once_both_finish(tmp_path):
    """Both start the hierarchy's first call together on an empty cache: both finish with the same
    distances, the cache is written while the lock is held, and a third process loads it."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba")}
    go = tmp_path / "go"

    def start(name: str) -> subprocess.Popen:
        return subprocess.Popen(
            [sys.executable, "-c", NEAREST, str(go), str(tmp_path / f"{name}.npy")],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    both = [start("first"), start("second")]
    for process in both:
        assert process.stdout is not None and process.stdout.readline() == "ready\n"
    go.touch()
    outputs = [process.communicate(timeout=600) for process in both]
    for process, (_, err) in zip(both, outputs):
        assert process.returncode == 0, err[-2000:]
    for out, _ in outputs:
        assert max(int(line.split()[1]) for line in out.splitlines()) > 0
    again = start("again")
    _, err = again.communicate(timeout=600)
    assert again.returncode == 0, err[-2000:]
    first = np.load(tmp_path / "first.npy")
    for name in ("second", "again"):
        np.testing.assert_array_equal(np.load(tmp_path / f"{name}.npy"), first)


def _imports_librosa(tree: ast.AST) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""]
        else:
            continue
        if any(name.split(".")[0] == "librosa" for name in names):
            return True
    return False


def test_only_the_lock_module_imports_librosa():
    offenders = [
        str(path.relative_to(SRC))
        for path in sorted(SRC.rglob("*.py"))
        if path.name != "librosa_lock.py" and _imports_librosa(ast.parse(path.read_text()))
    ]
    assert offenders == []


@pytest.mark.slow
def test_librosa_kernels_are_cached_while_the_lock_is_held(tmp_path):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba")}
    out = subprocess.run(
        [sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, timeout=600
    )
    assert out.returncode == 0, out.stderr[-2000:]
    counts = dict(line.split() for line in out.stdout.splitlines() if line[:1].isalpha())
    assert int(counts["at-release"]) > 0
    assert counts["after-onsets"] == counts["at-release"]
