"""A model command run in a shell, with its output kept in a folder and a timeout that kills the
whole process group (a model's workers included)."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

#: Lines of a failed run's output quoted in its error message.
STDERR_LINES = 5


def run_shell(command: str, folder: Path, timeout: float | None) -> str | None:
    """Run `command` in a shell in its own process group, stdout/stderr into `folder`; return None
    on success, else why it failed. On timeout (or interrupt) the whole process group is killed."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "stdout.txt", "wb") as out, open(folder / "stderr.txt", "wb") as err:
        proc = subprocess.Popen(
            command,
            shell=True,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=True,
        )
        try:
            code = proc.wait(timeout=timeout)
        except BaseException as exc:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            if isinstance(exc, subprocess.TimeoutExpired):
                return f"timed out after {timeout:g} s (model.timeout)"
            raise
    return None if code == 0 else f"exited with status {code}"


def stderr_tail(folder: Path) -> str:
    """The last lines of a run's stderr (else stdout) on one line, for error messages."""
    for name in ("stderr.txt", "stdout.txt"):
        path = folder / name
        lines = path.read_text(errors="replace").strip().splitlines() if path.is_file() else []
        if lines:
            return (
                f"{name[:-4]}: " + " ⏎ ".join(line.strip() for line in lines[-STDERR_LINES:])[-800:]
            )
    return "no output on stderr or stdout"
