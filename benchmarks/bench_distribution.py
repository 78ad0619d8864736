"""Benchmark of the distribution metrics: feature-extraction throughput and metric compute time.

    python benchmarks/bench_distribution.py [--sizes 1000,10000,100000] [--device cpu|cuda] \\
        [--prdc-max 20000] [--threads N]

Feature extraction: representation + windows + motion_ae features of synthetic 45 s motions
(default, untrained encoder: the speed does not depend on the weights). Compute: synthetic 128-d
features, N reference and N generated windows; FGD = accumulating the sufficient statistics + the
Fréchet distance; Density and Coverage = the chunked k-NN computations (O(N²) work, skipped above
`--prdc-max`).
"""

from __future__ import annotations

import argparse
import functools
import time

import numpy as np
import torch

from gesturebench.data.records import Motion
from gesturebench.encoders.motion_ae import MotionAutoencoder
from gesturebench.encoders.representation import motion_representation, sliding_windows
from gesturebench.metrics.functional.coverage import coverage
from gesturebench.metrics.functional.density import density
from gesturebench.metrics.functional.frechet import frechet_distance, moments


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def timed(fn, device: str) -> tuple[float, object]:
    _sync(device)
    start = time.perf_counter()
    out = fn()
    _sync(device)
    return time.perf_counter() - start, out


def extraction_rate(device: str, n_motions: int = 8, n_frames: int = 1350) -> float:
    """Windows per second through representation → windows → encoder features."""
    rng = np.random.default_rng(0)
    motions = [
        Motion(
            rng.normal(0, 0.3, (n_frames, 165)),
            rng.normal(0, 0.1, (n_frames, 3)),
            np.zeros(10),
            np.zeros((n_frames, 100)),
        )
        for _ in range(n_motions)
    ]
    encoder = MotionAutoencoder().eval().to(device)

    def run() -> int:
        return sum(
            encoder.features(sliding_windows(motion_representation(m, device), 64, 32)).shape[0]
            for m in motions
        )

    run()  # warm-up
    seconds, n_windows = timed(run, device)
    return n_windows / seconds


def fgd_seconds(real: torch.Tensor, fake: torch.Tensor, device: str) -> float:
    def run() -> float:
        stats = [moments(x.sum(0), x.T @ x, x.shape[0]) for x in (real, fake)]
        return float(frechet_distance(*stats[0], *stats[1]))

    return timed(run, device)[0]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument(
        "--prdc-max", type=int, default=20000, help="skip Density/Coverage above this many windows"
    )
    parser.add_argument("--chunk-size", type=int, default=1024)
    parser.add_argument("--dim", type=int, default=128)
    parser.add_argument(
        "--threads", type=int, default=None, help="torch CPU threads (default: torch's)"
    )
    args = parser.parse_args()
    dev = args.device
    if args.threads:
        torch.set_num_threads(args.threads)

    print(f"device={dev} torch threads={torch.get_num_threads()}")
    print(f"feature extraction: {extraction_rate(dev):,.0f} windows/s (64-frame windows, hop 32)\n")
    print(f"{'windows':>9} | {'FGD s':>8} | {'Density s':>9} | {'Coverage s':>10}")
    print("-" * 46)
    gen = torch.Generator().manual_seed(0)
    for n in (int(s) for s in args.sizes.split(",")):
        real = torch.randn(n, args.dim, generator=gen, dtype=torch.float64).to(dev)
        fake = (torch.randn(n, args.dim, generator=gen, dtype=torch.float64) * 1.1 + 0.1).to(dev)
        cells = [f"{fgd_seconds(real, fake, dev):8.3f}"]
        for fn, width in ((density, 9), (coverage, 10)):
            if n > args.prdc_max:
                cells.append(f"{'skipped':>{width}}")
            else:
                run = functools.partial(fn, real, fake, 5, args.chunk_size)
                cells.append(f"{timed(run, dev)[0]:{width}.2f}")
        print(f"{n:>9,} | " + " | ".join(cells))


if __name__ == "__main__":
    main()
