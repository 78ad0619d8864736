"""Run a function in N real processes joined by a gloo process group (CPU), and collect what rank 0
returns."""

from __future__ import annotations

import os
import socket
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _worker(rank: int, world_size: int, port: int, out: str, fn, args) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    try:
        result = fn(rank, world_size, *args)
        if rank == 0:
            torch.save(result, out)
    finally:
        dist.destroy_process_group()


def run_distributed(fn, *args, world_size: int = 2):
    """Call `fn(rank, world_size, *args)` in `world_size` spawned processes; return rank 0's result.

    `fn` must be importable (a module-level function) and its result picklable by `torch.save`.
    """
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "result.pt")
        mp.spawn(
            _worker, args=(world_size, _free_port(), out, fn, args), nprocs=world_size, join=True
        )
        return torch.load(out, weights_only=False)
