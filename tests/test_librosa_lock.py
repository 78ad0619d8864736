"""librosa's numba kernels compile under the machine-wide lock, and the package takes librosa only
from `gesturebench.runtime.librosa_lock` (concurrent first compilations crash later processes)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

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
librosa.onset.onset_detect(y=y, sr=16000)
print("after-onsets", count(), flush=True)
"""


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
