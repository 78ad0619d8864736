"""Ending a launch's process without the interpreter's teardown.

After the last exit handler, CPython tears the interpreter down: it clears every module and frees
every object one by one. With torch, Lightning, torchmetrics and transformers loaded that takes
1–3 CPU-seconds of each `python launch.py`, and nothing of a run depends on it: the run's files are
written and closed by then (atomic writes), logging's handlers are flushed and closed by its exit
handler, W&B's run is finished by `reporting.loggers.logged`. `exit_process` therefore does what
Python's own exit does first — waits for no thread, runs the exit handlers (`atexit`: logging's
shutdown, `weakref.finalize`'s, multiprocessing's), flushes stdout (status 120 where it cannot, as
Python's exit gives) and stderr — and then ends the process with `os._exit`. Where a non-daemon
thread is still alive (a thread Python would wait for), it exits the ordinary way instead."""

from __future__ import annotations

import atexit
import os
import sys
import threading
from contextlib import suppress
from typing import NoReturn

#: the exit status where stdout cannot be flushed at exit (CPython's own, `Py_Exit`)
STDOUT_LOST = 120


def threads_left() -> list[threading.Thread]:
    """The live non-daemon threads besides the main one: those Python's exit would wait for."""
    main = threading.main_thread()
    return [t for t in threading.enumerate() if t is not main and t.is_alive() and not t.daemon]


def exit_process(code: int | str | None) -> NoReturn:
    """End this process with `code` (as `sys.exit` takes it): the exit handlers run and stdout and
    stderr are flushed, the interpreter's teardown is skipped; the ordinary `sys.exit` where a
    non-daemon thread is alive or `code` is not a status (a message). Output that cannot be
    written ends the process with 120, the line on stderr, as Python's own exit does."""
    if threads_left() or not (code is None or isinstance(code, int)):
        sys.exit(code)
    atexit._run_exitfuncs()
    status = code or 0
    if not sys.stdout.closed:
        try:
            sys.stdout.flush()
        except OSError as err:  # a full disk or a closed pipe: what was printed is lost
            status = STDOUT_LOST
            with suppress(OSError):
                print(f"error: the output could not be written: {err}", file=sys.stderr)
    with suppress(OSError, ValueError):  # stderr: nowhere left to say it
        sys.stderr.flush()
    os._exit(status)
