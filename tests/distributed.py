"""One pool of real processes joined by a gloo process group (CPU), shared by the DDP tests of a
session: spawning processes and joining a group is the slow part, so it happens once."""

from __future__ import annotations

import multiprocessing
import os
import socket
from datetime import timedelta
from multiprocessing.connection import Connection, wait

import torch
import torch.distributed as dist

WORLD_SIZE = 2
# a rank whose peer failed waits in a collective at most this long, then raises
COLLECTIVE_TIMEOUT = timedelta(seconds=120)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _serve(rank: int, world_size: int, port: int, conn: Connection) -> None:
    """A worker: join the group once, then run each `(fn, args)` received as `fn(rank, world_size,
    *args)` and send back `(error, result)`, until the pipe closes."""
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world_size, timeout=COLLECTIVE_TIMEOUT)
    while True:
        try:
            fn, args = conn.recv()
        except EOFError:
            break
        threads = torch.get_num_threads()  # a test's set_num_threads must not reach the next test
        try:
            conn.send((None, fn(rank, world_size, *args)))
        except Exception as error:
            conn.send((error, None))
        finally:
            torch.set_num_threads(threads)
    dist.destroy_process_group()


class ProcessGroupPool:
    """`world_size` spawned worker processes, one per rank, started on first use; each call runs one
    function on every rank at once."""

    def __init__(self, world_size: int = WORLD_SIZE):
        self.world_size = world_size
        self._workers: list[tuple[multiprocessing.process.BaseProcess, Connection]] = []

    def _start(self) -> None:
        context = multiprocessing.get_context("spawn")
        port = _free_port()
        for rank in range(self.world_size):
            ours, theirs = context.Pipe()
            process = context.Process(
                target=_serve, args=(rank, self.world_size, port, theirs), daemon=True
            )
            process.start()
            theirs.close()
            self._workers.append((process, ours))

    def run(self, fn, *args):
        """Call `fn(rank, world_size, *args)` on every rank; return rank 0's result.

        `fn` must be importable (a module-level function), its arguments and result picklable. A
        failure on any rank closes the pool (the ranks' collectives are out of step), and the next
        call starts a new one."""
        if not self._workers:
            self._start()
        conns = [conn for _, conn in self._workers]
        results = {}
        try:
            for conn in conns:
                conn.send((fn, args))
            while len(results) < len(conns):
                for conn in wait([c for c in conns if id(c) not in results]):
                    error, results[id(conn)] = conn.recv()
                    if error is not None:
                        raise error
        except BaseException:
            self.close()
            raise
        return results[id(conns[0])]

    def close(self) -> None:
        """Stop the workers (at once: a rank may be waiting in a collective for a failed peer)."""
        for process, conn in self._workers:
            conn.close()
            process.terminate()
            process.join()
        self._workers = []


POOL = ProcessGroupPool()


def run_distributed(fn, *args):
    """`POOL.run(fn, *args)`: rank 0's result of `fn(rank, world_size, *args)` on both ranks."""
    return POOL.run(fn, *args)
