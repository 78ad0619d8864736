"""Seconds to generate mini-BEAT2, and to find it already there (the second call reads only its
marker), per size.

    python benchmarks/bench_mini_beat2.py --sizes default standard --repeats 2

Each repeat generates into a fresh temporary folder, then calls `ensure_mini_beat2` on it again;
the table shows the wall and CPU seconds of each (minimum over the repeats) and the number of
sequences. The tests check that generation is correct and that a second call writes nothing; how
long either takes is measured here.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from gesturebench.synthesis.mini.dataset import (
    ensure_mini_beat2,
    generate_mini_beat2,
    sequence_specs,
)


def timed(call, *args) -> tuple[float, float]:
    """(wall, CPU) seconds of `call(*args)`."""
    wall, cpu = time.perf_counter(), time.process_time()
    call(*args)
    return time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", nargs="+", default=["default"], choices=["default", "standard"])
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print("size      sequences  generate wall/CPU s  second call wall/CPU ms")
    for size in args.sizes:
        first, again = [], []
        for _ in range(args.repeats):
            with tempfile.TemporaryDirectory() as folder:
                root = Path(folder) / "mini_beat2"
                first.append(timed(generate_mini_beat2, root, args.seed, size))
                again.append(timed(ensure_mini_beat2, root, args.seed, size))
        (gen_wall, gen_cpu), (again_wall, again_cpu) = min(first), min(again)
        n = len(sequence_specs(args.seed, size))
        print(
            f"{size:9} {n:9}  {gen_wall:8.1f} / {gen_cpu:6.1f}"
            f"       {1e3 * again_wall:8.2f} / {1e3 * again_cpu:6.2f}"
        )


if __name__ == "__main__":
    main()
