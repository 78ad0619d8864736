"""The thread budget of a run: torch's intra-op threads and the native pools that numpy, scipy and
scikit-learn call into (OpenBLAS, OpenMP), set together (config `threads`)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from threadpoolctl import threadpool_limits


@contextmanager
def thread_budget(threads: int | None) -> Iterator[None]:
    """`threads` threads for torch and for every BLAS/OpenMP pool while the block runs, then the
    counts before it; None or 0: leave them as they are. One thread per pool keeps a run's sums in
    one order whatever the machine's core count, and no pool spins for a core another process
    holds (a BLAS call on two threads beside another busy process costs more CPU than on one)."""
    if not threads:
        yield
        return
    import torch  # here, not with the module: the command line imports it (see runtime.stages.bar)

    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        with threadpool_limits(limits=threads):
            yield
    finally:
        torch.set_num_threads(before)
