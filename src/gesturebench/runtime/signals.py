"""SIGTERM and SIGHUP (`timeout`, `kill`, SLURM pre-emption, a closed terminal) raise `Interrupted`
in the process that installed the handlers, so that a run stops through the same path as an error:
error.json naming the signal, temporary files removed, a non-zero exit (128 + the signal's number).

Lightning's own SIGTERM handler (`_SignalConnector`) only sets a flag that its loops read at the
next batch, and ends the run as `SystemExit` without a code, i.e. exit 0; it calls a handler it
finds installed after its own, so `Interrupted` is raised from within the trainer as well."""

from __future__ import annotations

import os
import signal
import threading
from types import FrameType

from gesturebench.runtime.errors import Interrupted

#: the signals that stop a run
STOPPING = (signal.SIGTERM, signal.SIGHUP)

#: the process that installed the handlers and whether a stop is under way. Module state, unlike
#: the run's own (its job, exit status, bars: objects handed down): a signal handler is the
#: process's, installed with `signal.signal` and called by the interpreter with no argument of the
#: run, so what it reads must be the process's too.
_state: dict[str, int | bool] = {"owner": 0, "stopping": False}


def install() -> None:
    """Raise `Interrupted` on a stopping signal in this process (from the main thread; elsewhere it
    does nothing, as Python allows handlers only there)."""
    if threading.current_thread() is not threading.main_thread():
        return
    _state.update(owner=os.getpid(), stopping=False)
    for signum in STOPPING:
        signal.signal(signum, _stop)


def _stop(signum: int, frame: FrameType | None) -> None:
    """The first stopping signal raises `Interrupted`; a second one while the run cleans up, or one
    in a child forked with these handlers (a data loader's worker), ends the process at once as the
    signal's default action does."""
    if _state["stopping"] or os.getpid() != _state["owner"]:
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
        return
    _state["stopping"] = True
    raise Interrupted(signum)
