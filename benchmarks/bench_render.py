"""Mesh renderer throughput: frames per second of 512×512 shaded SMPL-X frames (the procedural
body, a real BEAT2-like motion: random smooth poses), wall clock and CPU time, per thread count.

    python benchmarks/bench_render.py [--size 512] [--frames 120] [--threads 1 2] [--supersample 1]
                                      [--device cpu|cuda]

On a shared machine the wall clock of 2 threads is unreliable: the CPU-time column (frames per
CPU-second of the process) is what one core delivers; pin to two idle cores for the headline
number (`taskset -c 0,1 python benchmarks/bench_render.py --threads 2`). The body model forward
(vertices) and the mp4 encoding are timed separately.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from gesturebench.body.model import BodyModel
from gesturebench.data.records import Motion
from gesturebench.render.clips import Camera, clip_frames, write_clip


def smooth_motion(n: int, seed: int = 0) -> Motion:
    """Random smooth body poses (cumulative small steps), standing, 30 fps."""
    rng = np.random.default_rng(seed)
    poses = np.cumsum(rng.normal(0, 0.01, (n, 165)), axis=0)
    poses[:, :3] = 0
    return Motion(poses, np.tile([0.0, 1.3, 0.0], (n, 1)), np.zeros(300), np.zeros((n, 100)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=512)
    parser.add_argument("--frames", type=int, default=120)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--supersample", type=int, default=1)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        body = BodyModel(checkpoints_dir=folder, device=args.device)
        motion = smooth_motion(args.frames)
        out = body(motion)
        joints = out.joints.cpu().numpy()
        camera = Camera(size=args.size, style="mesh", supersample=args.supersample)
        print(f"| threads | frames/s (wall) | frames/s (CPU time) | {args.size}² on {args.device}")
        print("| --- | --- | --- |")
        for threads in args.threads:
            torch.set_num_threads(threads)
            clip_frames(joints[:8], camera, lambda: (out.vertices[:8], body.faces))  # warm-up
            wall, cpu = time.perf_counter(), time.process_time()
            frames = clip_frames(joints, camera, lambda: (out.vertices, body.faces))
            if args.device == "cuda":
                torch.cuda.synchronize()
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            print(f"| {threads} | {args.frames / wall:.1f} | {args.frames / cpu:.1f} |")
        start = time.perf_counter()
        body(motion)
        forward = args.frames / (time.perf_counter() - start)
        start = time.perf_counter()
        write_clip(Path(folder) / "clip.mp4", frames, 30)
        encode = args.frames / (time.perf_counter() - start)
        print(f"body model forward: {forward:.0f} frames/s; H.264 encoding: {encode:.0f} frames/s")


if __name__ == "__main__":
    main()
