"""Errors a user can act on: `launch.py` prints them as one line and exits 2, without a
traceback; an out-of-space or unwritable path is one such line too (`os_problem`), and a stopping
signal ends a run as `Interrupted`."""

from __future__ import annotations

import errno
import shutil
import signal
from collections.abc import Iterator
from pathlib import Path


class GestureBenchError(Exception):
    """Base class: the message alone must tell the user what is wrong and where."""


class DataError(GestureBenchError):
    """A data file is missing, unreadable or malformed."""

    def __init__(self, path: str | Path, problem: str):
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}")


class ConfigError(GestureBenchError):
    """A configuration value is invalid or inconsistent."""


class CheckpointError(GestureBenchError):
    """A checkpoint, model file or model output needed by the run is missing or unusable."""


class LengthMismatchError(GestureBenchError):
    """Generated and reference motion differ in length by more than the allowed gap."""


class Interrupted(BaseException):
    """A stopping signal (SIGTERM, SIGHUP) arrived: the run ends through the same path as an error
    (error.json naming the signal, temporary files removed) with exit status 128 + the signal's
    number. A BaseException, so that no `except Exception` on the way swallows it."""

    def __init__(self, signum: int):
        self.signum = signum
        self.exit_code = 128 + signum
        super().__init__(f"stopped by {signal.Signals(signum).name} (exit {self.exit_code})")


#: the OSError codes a user can act on: no space or quota left, a read-only or forbidden path
_FULL = (errno.ENOSPC, errno.EDQUOT)
_UNWRITABLE = (errno.EROFS, errno.EACCES, errno.EPERM)


def os_problem(err: BaseException, folder: str | Path | None = None) -> str | None:
    """One line for an out-of-space, quota, read-only or permission error anywhere in `err`'s chain:
    its path (or `folder` where it names none) and, when out of space, the free space left there;
    None for any other error."""
    for link in exception_chain(err):
        if isinstance(link, OSError) and link.errno in _FULL + _UNWRITABLE:
            where = link.filename or folder
            if link.errno in _UNWRITABLE:
                what = "read-only file system" if link.errno == errno.EROFS else "permission denied"
                return f"{where}: {what}: choose a folder this user can write to"
            writing = f" writing {link.filename}" if link.filename else ""
            free = _free_space(Path(where)) if where else None
            left = f": {free[0]} has {_size(free[1])} free" if free else ""
            return f"no space left on device{writing}{left}"
    return None


def exception_chain(err: BaseException | None) -> Iterator[BaseException]:
    """`err` and the exceptions it was raised from or while handling (its cause or context)."""
    seen: set[int] = set()
    while err is not None and id(err) not in seen:
        seen.add(id(err))
        yield err
        err = err.__cause__ or err.__context__


def _free_space(path: Path) -> tuple[Path, int] | None:
    """The nearest existing folder of `path` and its free bytes (None where none can be read)."""
    for folder in (path, *path.parents):
        if folder.is_dir():
            try:
                return folder, shutil.disk_usage(folder).free
            except OSError:
                return None
    return None


def _size(n: int) -> str:
    """Bytes as B, KiB, MiB, GiB or TiB."""
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024:
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} TiB"
