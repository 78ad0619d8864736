"""`thread_budget`: torch's threads and the BLAS/OpenMP pools set together, and put back."""

from __future__ import annotations

import torch
from threadpoolctl import threadpool_info

from gesturebench.runtime.threads import thread_budget


def blas_threads() -> set[int]:
    return {pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"}


def test_a_budget_sets_every_pool_and_puts_the_counts_back():
    torch.set_num_threads(2)
    with thread_budget(None):  # unset: left as they are
        assert torch.get_num_threads() == 2
    try:
        before = blas_threads()
        assert before, "no BLAS pool found (numpy's OpenBLAS is always loaded)"
        with thread_budget(2):
            assert torch.get_num_threads() == 2 and blas_threads() == {2}
            with thread_budget(1):
                assert torch.get_num_threads() == 1 and blas_threads() == {1}
            assert torch.get_num_threads() == 2 and blas_threads() == {2}
        assert torch.get_num_threads() == 2 and blas_threads() == before
    finally:
        torch.set_num_threads(1)
