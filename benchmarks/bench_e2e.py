"""End-to-end evaluation throughput: seconds per stage, frames/s and peak memory at growing split
sizes.

    python benchmarks/bench_e2e.py --size standard --fractions 0.25 0.5 1 \\
        --models ground_truth perturbed
    python benchmarks/bench_e2e.py --size default --fractions 1 --metrics fast --profile e2e.prof

Each (model, fraction) runs `task=evaluate` in its own process (so peak memory is that run's own:
the process's maximum resident set size) on the first `fraction` of the mini-BEAT2 test split of
`--size` (`standard` = BEAT2-standard-sized, 265 sequences, about 2 h), with the encoders already
trained. The table shows total seconds, seconds per stage (read, model, SMPL-X forward, each
metric), frames/s and peak memory, so linear growth in the number of frames can be read off the
rows. `--profile` writes a cProfile file of the last run (view it with `python -m pstats` or
snakeviz).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[1]


def run_one(args) -> dict:
    """Evaluate one (model, fraction) in this process and return its measurements."""
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    from gesturebench.reporting.results import config_hash
    from gesturebench.run.config import register_configs
    from gesturebench.tasks.common import open_dataset
    from gesturebench.tasks.evaluate import score
    from gesturebench.tasks.job import Job
    from gesturebench.tasks.run import Run

    register_configs()
    overrides = [
        f"model={args.model}",
        f"metrics={args.metrics}",
        f"dataset.size={args.size}",
        "logger=none",
        "task.render_clips=0",
        "trainer.enable_progress_bar=false",
        f"trainer={args.trainer}",
        *args.overrides,
    ]
    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base="1.3"):
        cfg = compose(config_name="config", overrides=overrides)
    full = open_dataset(cfg.dataset)
    n = max(1, round(args.fraction * len(full)))
    cfg.dataset.max_sequences = n
    dataset = open_dataset(cfg.dataset)
    config = OmegaConf.to_container(cfg, resolve=True)
    out = Path(args.out) / f"{args.model}-{args.fraction}"
    profiler = cProfile.Profile() if args.profile else None
    on_gpu = torch.cuda.is_available() and args.trainer == "gpu"
    start = time.perf_counter()
    if profiler:
        profiler.enable()
    results = score(Run.of(cfg, Job()), dataset, out, config, config_hash(config))
    if profiler:
        profiler.disable()
        profiler.dump_stats(args.profile)
    total = time.perf_counter() - start
    frames = sum(row["frames"] for row in results["per_sequence"])
    return {
        "model": args.model,
        "sequences": n,
        "frames": frames,
        "seconds": total,
        "frames_per_s": frames / total,
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "gpu_peak_mb": torch.cuda.max_memory_allocated() / 2**20 if on_gpu else None,
        "timings": results["timings"],
    }


def table(rows: list[dict]) -> str:
    stages = sorted(
        {s for r in rows for s in r["timings"]}, key=lambda s: (s.startswith("metric"), s)
    )
    head = [
        "model",
        "sequences",
        "frames",
        "total s",
        *[f"{s} s" for s in stages],
        "frames/s",
        "peak MB",
        "GPU peak MB",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [
            r["model"],
            r["sequences"],
            r["frames"],
            f"{r['seconds']:.1f}",
            *[f"{r['timings'].get(s, 0.0):.1f}" for s in stages],
            f"{r['frames_per_s']:.0f}",
            f"{r['peak_mb']:.0f}",
            "–" if r.get("gpu_peak_mb") is None else f"{r['gpu_peak_mb']:.0f}",
        ]
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size", default="standard", choices=["default", "standard"])
    parser.add_argument("--fractions", type=float, nargs="+", default=[0.25, 0.5, 1.0])
    parser.add_argument("--models", nargs="+", default=["ground_truth", "perturbed"])
    parser.add_argument("--metrics", default="paper")
    parser.add_argument("--trainer", default="cpu", help="cpu or gpu")
    parser.add_argument(
        "--overrides", nargs="*", default=[], help="extra Hydra overrides, e.g. '~metrics.sc'"
    )
    parser.add_argument("--out", default="/tmp/gesturebench-bench-e2e")
    parser.add_argument(
        "--profile", default=None, help="write a cProfile file of the last run here"
    )
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--model", help=argparse.SUPPRESS)
    parser.add_argument("--fraction", type=float, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_one(args)))
        return
    rows = []
    for fraction in args.fractions:
        for model in args.models:
            last = fraction == args.fractions[-1] and model == args.models[-1]
            cmd = [
                sys.executable,
                __file__,
                "--one",
                f"--model={model}",
                f"--fraction={fraction}",
                f"--size={args.size}",
                f"--metrics={args.metrics}",
                f"--trainer={args.trainer}",
                f"--out={args.out}",
                "--overrides",
                *args.overrides,
            ]
            if args.profile and last:
                cmd.append(f"--profile={args.profile}")
            proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
            if proc.returncode != 0:
                sys.exit(f"{model} at {fraction}: failed\n{proc.stderr[-3000:]}")
            rows.append(json.loads(proc.stdout.strip().splitlines()[-1]))
            print(table(rows[-1:]).splitlines()[-1], flush=True)
    print(table(rows))


if __name__ == "__main__":
    main()
