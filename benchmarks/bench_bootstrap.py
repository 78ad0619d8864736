"""Seconds the bootstrap intervals add at BEAT2's size (docs/statistics.md, Cost).

    python benchmarks/bench_bootstrap.py --sequences 265 --windows 6200 --resamples 1000 200

The cost is linear in the number of resamples (each is the same work); on a busy machine, time
`--resamples 200 --threads 1` and read the CPU seconds.

FGD, Density and Coverage are filled with random window features of 265 sequences (about 6,200
windows a side, as the BEAT2-standard-sized split of `bench_e2e.py --size standard`: 128-d encoder
features, 333-d raw pose), a per-sequence metric with as many sequences; each metric's `bootstrap`
is timed (wall and CPU seconds) at each number of resamples. The encoder does not run: the cost of
the intervals does not depend on the features' values, only on their number and dimension.
"""

from __future__ import annotations

import argparse
import time
from types import SimpleNamespace

import numpy as np
import torch

from gesturebench.encoders.representation import REP_DIM
from gesturebench.metrics.coverage import Coverage
from gesturebench.metrics.density import Density
from gesturebench.metrics.fgd import FGD
from gesturebench.stats.bootstrap import Resamples, weighted_means


def given_features(cls: type, windows: list[int], latent: int, seed: int):
    """An instance of metric class `cls` whose `pair_features` returns random features for
    sequence `pair.index` with `windows[index]` windows a side."""

    class Given(cls):
        def pair_features(self, pair, side):
            rng = np.random.default_rng((seed, pair.index, side))
            n = windows[pair.index]
            raw = torch.from_numpy(rng.normal(size=(n, 1, REP_DIM)))
            return raw, torch.from_numpy(rng.normal(size=(n, latent)))

    return Given(encoder_config={"latent_dim": latent})


def timed(fn) -> tuple[float, float]:
    """Wall and CPU seconds of `fn()`."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sequences", type=int, default=265)
    parser.add_argument("--windows", type=int, default=6200, help="windows a side, all sequences")
    parser.add_argument("--resamples", type=int, nargs="+", default=[1000, 200])
    parser.add_argument("--latent", type=int, default=128)
    parser.add_argument("--threads", type=int, help="torch threads (default: torch's)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    share = rng.dirichlet(np.full(args.sequences, 4.0))
    windows = np.maximum(2, np.round(share * args.windows)).astype(int).tolist()
    print(
        f"{args.sequences} sequences, {sum(windows)} windows a side, torch threads "
        f"{torch.get_num_threads()}"
    )
    print("| metric | resamples | wall s | CPU s |\n| --- | ---: | ---: | ---: |")
    for cls in (FGD, Density, Coverage):
        metric = given_features(cls, windows, args.latent, 0)
        for i in range(args.sequences):
            metric.update(SimpleNamespace(index=i))
        for b in args.resamples:
            resamples = Resamples.draw(range(args.sequences), b, seed=0)
            wall, cpu = timed(lambda m=metric, r=resamples: m.bootstrap(r))
            print(f"| {cls.__name__} | {b} | {wall:.2f} | {cpu:.2f} |")
    values, weights = rng.normal(size=(args.sequences, 3)), rng.uniform(1, 2, args.sequences)
    for b in args.resamples:
        counts = Resamples.draw(range(args.sequences), b, seed=0).counts
        wall, cpu = timed(lambda c=counts: weighted_means(values, weights, c))
        print(f"| per-sequence metric (3 values) | {b} | {wall:.3f} | {cpu:.3f} |")


if __name__ == "__main__":
    main()
