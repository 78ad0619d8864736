"""The exit status of one launch (`Status`): `cli.launch` opens one for its run or sweep
(`opened`); every job that fails marks it, and so does the sweep's summary; `launch` exits with it
when Hydra returns.

Hydra builds the sweep's callback itself and swallows what a callback raises, so the summary can
neither be handed the status nor report through an exception: it finds the open launch's with
`current()`. A status lives only as long as its launch (a context variable, reset when the launch
ends), so a second launch in the same process starts from 0 with nothing to put back."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass


@dataclass
class Status:
    """The exit status of a launch: 0 until a job fails."""

    code: int = 0

    def mark_failed(self, code: int = 2) -> None:
        """A job failed: 2 for an error the user can act on, 1 for an unexpected one, 128 + the
        signal's number for a stopping signal (the larger code of all failures wins)."""
        self.code = max(self.code, code)


_open: ContextVar[Status | None] = ContextVar("gesturebench_status", default=None)


@contextmanager
def opened() -> Iterator[Status]:
    """A new status, the `current()` one until the block ends."""
    status = Status()
    token = _open.set(status)
    try:
        yield status
    finally:
        _open.reset(token)


def current() -> Status:
    """The open launch's status; outside one (a job run through the Python API, or in a launcher's
    worker process, whose jobs the summary marks) a status of its own that nothing reads."""
    return _open.get() or Status()
