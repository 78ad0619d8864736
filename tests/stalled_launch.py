"""`launch.py` whose N-th evaluation in this process stalls at its first batch while a marker file
exists: a real run that a test can stop, or whose disk it can fill, at a moment it knows the run is
working. `python tests/stalled_launch.py MARKER N OVERRIDES...`: the run writes MARKER when it
stalls and goes on when the test removes it (or after `STALL_S`)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from gesturebench import cli
from gesturebench.run.evaluator import Evaluator

#: the longest stall: a run that ignores the test's signal goes on after it (and its test fails)
STALL_S = 60


def stall_at(marker: Path, nth: int) -> None:
    """Make the `nth` evaluation's first batch write `marker`, then wait until it is removed."""
    start, step = Evaluator.on_test_epoch_start, Evaluator.test_step
    epochs = [0]

    def counted(self: Evaluator) -> None:
        epochs[0] += 1
        start(self)

    def stalled(self: Evaluator, record, batch_idx: int) -> None:
        if epochs[0] == nth and batch_idx == 0:
            marker.write_text("working")
            end = time.monotonic() + STALL_S
            while marker.exists() and time.monotonic() < end:
                time.sleep(0.1)
        step(self, record, batch_idx)

    Evaluator.on_test_epoch_start = counted  # type: ignore[method-assign]
    Evaluator.test_step = stalled  # type: ignore[method-assign]


if __name__ == "__main__":
    stall_at(Path(sys.argv[1]), int(sys.argv[2]))
    del sys.argv[1:3]
    cli.launch_process(str(Path(__file__).resolve().parents[1] / "conf"))
