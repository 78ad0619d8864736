"""Throughput of the per-sequence geometric and kinematic metrics: frames per second of one
`update`.

    python benchmarks/bench_metrics.py --lengths 10 60 300 --device cpu

Bodies come from the project's body model (the procedural default unless `--model-path`) on 10 s of
BEAT2 motion (`--sample`, the shared sample by default) or, without it, on a smooth synthetic
motion; the 10 s are repeated to each length, so every length has the same geometry and the cost per
frame shows whether a metric scales linearly. Chamfer and Hausdorff share one nearest-neighbour pass
and are timed together on `--surface-threads` threads (2 by default), every other row on `--threads`
(1 by default); each row ends with the load average, since a shared machine's wall-clock figures
depend on it (frames per CPU-second much less); `--repeat N` keeps the best of N updates per cell.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import os
import time
from pathlib import Path

import numpy as np
import torch

from gesturebench.body.model import BodyModel
from gesturebench.body.output import BodyOutput
from gesturebench.data.records import FPS, Motion
from gesturebench.metrics.chamfer import Chamfer
from gesturebench.metrics.dice import Dice
from gesturebench.metrics.diversity import Diversity
from gesturebench.metrics.foot_contact import FootContact
from gesturebench.metrics.hausdorff import Hausdorff
from gesturebench.metrics.ldlj_rel import LDLJRel
from gesturebench.metrics.pair import MotionPair

SAMPLE = (
    Path(__file__).resolve().parents[2] / "shared" / "data" / "beat2-sample" / "2_scott_0_1_1.npz"
)
CLIP = 10 * FPS


def metric_groups(nearest: list[str]) -> dict[str, list]:
    """Rows of the table: name → metrics updated together on each pair; one Chamfer + Hausdorff row
    per nearest-neighbour method in `nearest`."""
    groups: dict[str, list] = {
        "diversity": [Diversity()],
        "l1div (EMAGE: 55 joints)": [Diversity(joints="all", weighting="frames")],
    }
    for method in nearest:
        name = "chamfer+hausdorff" + ("" if method == "auto" else f" ({method})")
        groups[name] = [Chamfer(method=method), Hausdorff(method=method)]
    groups |= {
        "dice": [Dice()],
        "foot_contact": [FootContact()],
        "ldlj_rel": [LDLJRel()],
    }
    if importlib.util.find_spec("gesturebench.metrics.mjd"):
        from gesturebench.metrics.mjd import MeanJointDistance
        from gesturebench.metrics.pck import PCK

        groups.update(mjd=[MeanJointDistance()], pck=[PCK()])
    return groups


def clips(sample: Path | None) -> tuple[Motion, Motion]:
    """Reference and generated 10 s motions: two parts of the BEAT2 sample, or two smooth synthetic
    motions."""
    if sample is not None and sample.exists():
        from gesturebench.data.beat2 import read_motion_npz

        motion = read_motion_npz(sample)
        return motion.frames(0, CLIP), motion.frames(CLIP, 2 * CLIP)
    out = []
    for seed in (0, 1):
        rng = np.random.default_rng(seed)
        t = np.arange(CLIP)[:, None] / FPS
        poses = 0.3 * np.sin(2 * np.pi * rng.uniform(0.2, 1.5, 165) * t + rng.uniform(0, 6.3, 165))
        poses[:, :3] = 0
        out.append(
            Motion(poses, np.tile([0.0, 1.0, 0.0], (CLIP, 1)), np.zeros(300), np.zeros((CLIP, 100)))
        )
    return out[0], out[1]


def tiled(body: BodyOutput, frames: int, device: str) -> BodyOutput:
    reps = -(-frames // body.joints.shape[0])
    return BodyOutput(
        body.joints.repeat(reps, 1, 1)[:frames].to(device),
        body.vertices.repeat(reps, 1, 1)[:frames].to(device),
    )


def time_group(
    metrics: list, pair: MotionPair, device: str, repeat: int = 1
) -> tuple[float, float]:
    """Wall and CPU seconds of updating every metric of a group once with `pair` (the best of
    `repeat` updates)."""
    for m in metrics:
        m.to(device)
    best = (float("inf"), float("inf"))
    for _ in range(repeat):
        fresh = dataclasses.replace(pair, _shared={})  # nothing computed by an earlier update
        wall, cpu = time.perf_counter(), time.process_time()
        for m in metrics:
            m.update(fresh)
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        best = min(best[0], time.perf_counter() - wall), min(best[1], time.process_time() - cpu)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--lengths", type=float, nargs="+", default=[10, 60, 300], help="sequence lengths, seconds"
    )
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--threads", type=int, default=1, help="torch threads of most rows")
    parser.add_argument(
        "--surface-threads", type=int, default=2, help="threads of the Chamfer + Hausdorff rows"
    )
    parser.add_argument(
        "--sample", type=Path, default=SAMPLE, help="a BEAT2 motion .npz (synthetic if absent)"
    )
    parser.add_argument(
        "--model-path", default=None, help="SMPL-X model file (default: the procedural model)"
    )
    parser.add_argument(
        "--nearest",
        nargs="+",
        default=["auto"],
        help="Chamfer/Hausdorff nearest-neighbour methods to time, one row each "
        "(auto, bvh, kdtree, cdist, triton)",
    )
    parser.add_argument(
        "--only", nargs="+", default=None, help="time only the rows whose name contains a word"
    )
    parser.add_argument(
        "--repeat", type=int, default=1, help="updates per cell, the best kept (a shared machine)"
    )
    args = parser.parse_args()

    body_model = BodyModel(model_path=args.model_path)
    ref_clip, gen_clip = clips(args.sample)
    ref_body, gen_body = body_model(ref_clip), body_model(gen_clip)
    print(
        f"device={args.device} threads={args.threads} (chamfer+hausdorff: {args.surface_threads})"
        " motion="
        f"{args.sample.name if args.sample and args.sample.exists() else 'synthetic'}"
    )
    header = f"{'metric':<28}" + "".join(f"{f'{s:g} s':>22}" for s in args.lengths)
    print(
        header + "\n" + f"{'':<28}" + "".join(f"{'frames/s (per CPU-s)':>22}" for _ in args.lengths)
    )
    second = ref_clip.frames(0, FPS)
    groups = {
        name: metrics
        for name, metrics in metric_groups(args.nearest).items()
        if args.only is None or any(word in name for word in args.only)
    }
    pairs = {}
    for seconds in args.lengths:
        frames = round(seconds * FPS)
        motion = Motion(
            np.zeros((frames, 165)), np.zeros((frames, 3)), np.zeros(300), np.zeros((frames, 100))
        )
        pairs[seconds] = MotionPair(
            0,
            f"bench{seconds:g}",
            motion,
            motion,
            tiled(gen_body, frames, args.device),
            tiled(ref_body, frames, args.device),
        )
    for name, metrics in groups.items():
        torch.set_num_threads(args.surface_threads if "chamfer" in name else args.threads)
        warm = MotionPair(
            0,
            "warm-up",
            second,
            second,
            tiled(gen_body.frames(0, FPS), FPS, args.device),
            tiled(ref_body.frames(0, FPS), FPS, args.device),
        )
        time_group(metrics, warm, args.device)  # first calls compile kernels and allocate
        cells = []
        for pair in pairs.values():
            wall, cpu = time_group(metrics, pair, args.device, args.repeat)
            cells.append(
                f"{pair.n_frames / wall:>10,.0f} ({pair.n_frames / max(cpu, 1e-9):>8,.0f})"
            )
        load = " ".join(f"{x:.1f}" for x in os.getloadavg())
        print(f"{name:<28}" + "".join(f"{c:>22}" for c in cells) + f"  {load}", flush=True)


if __name__ == "__main__":
    main()
