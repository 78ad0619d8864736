"""A run killed with SIGKILL half-way through writing its results, the same in the tests and in the
fault script: `python -c killed_at_the_write(launch_py) OVERRIDES...`, then `leftovers` of its
folder once the next run has started."""

from __future__ import annotations

from pathlib import Path

from gesturebench.runtime.commit import PENDING, STAGING

#: a `python -c` program: launch.py (`{launch}`) whose per-sequence values are shifted by 1 (so that
#: its files differ from an earlier run's of the same configuration), killing itself with SIGKILL
#: half-way through writing results.json, after per_sequence.csv, whatever writes them (pathlib
#: patched, not the harness)
_PROGRAM = """
import os, pathlib, runpy, sys
import gesturebench.reporting.results as results
finite = results.finite_or_none
def shifted(value):
    return value + 1 if isinstance(value, float) and finite(value) is not None else finite(value)
results.finite_or_none = shifted
def killing(write):
    def wrapper(self, data, *args, **kwargs):
        if "results.json" in self.name:
            write(self, data[: len(data) // 2], *args, **kwargs)
            os.kill(os.getpid(), 9)
        return write(self, data, *args, **kwargs)
    return wrapper
pathlib.Path.write_text = killing(pathlib.Path.write_text)
pathlib.Path.write_bytes = killing(pathlib.Path.write_bytes)
sys.argv = [{launch!r}, *sys.argv[1:]]
runpy.run_path({launch!r}, run_name="__main__")
"""


def killed_at_the_write(launch_py: Path) -> str:
    """The program (`python -c`) that runs `launch_py` and is killed in its results write."""
    return _PROGRAM.format(launch=str(launch_py))


def leftovers(folder: Path) -> list[str]:
    """Temporary files and folders of a write anywhere below `folder`."""
    return sorted(
        str(p.relative_to(folder))
        for p in folder.rglob("*")
        if p.name.startswith((STAGING, PENDING)) or ".tmp" in p.name
    )
