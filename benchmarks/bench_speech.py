"""Speech and semantic metrics on mini-BEAT2: frames per second of BC, SRGR and SC, and BC of
baseline motions.

    python benchmarks/bench_speech.py [--root /tmp/mini_beat2] [--seed 0]

Generates mini-BEAT2 at `--root` if needed, trains the text–motion model there (timed: that is what
the first `launch.py` run on mini does), then scores the test split's ground truth and three
speech-agnostic motions: the train mean pose (static), a random real train clip, and the ground
truth shifted by 5 s. The BC rows show how much BC separates motion that follows the speech from
motion that does not, with the paper's direction and with EMAGE's (`direction=audio_to_motion`).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from gesturebench.body.model import BodyModel
from gesturebench.data.beat2 import Beat2Dataset
from gesturebench.data.records import Motion
from gesturebench.metrics.bc import BeatConsistency
from gesturebench.metrics.context import MetricContext
from gesturebench.metrics.pair import MotionPair
from gesturebench.metrics.sc import SemanticScore
from gesturebench.metrics.srgr import SemanticRelevanceRecall
from gesturebench.models.baselines import MeanPose, RandomClip
from gesturebench.synthesis.mini.dataset import generate_mini_beat2


def shifted(motion: Motion, frames: int) -> Motion:
    """The motion rolled by `frames` (circularly): same movement, out of step with the speech."""
    return Motion(
        np.roll(motion.poses, frames, 0),
        np.roll(motion.trans, frames, 0),
        motion.betas,
        np.roll(motion.expressions, frames, 0),
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--root", type=Path, default=Path(tempfile.gettempdir()) / "gesturebench-bench-mini"
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    root = generate_mini_beat2(args.root / "mini_beat2", seed=args.seed)
    splits = {s: Beat2Dataset(root, s) for s in ("train", "val", "test")}
    body_model = BodyModel()
    ctx = MetricContext(
        "mini_beat2",
        splits.__getitem__,
        args.root / "cache",
        args.root / "checkpoints",
        body_model,
        auto_train=True,
        seed=args.seed,
    )

    metrics = {
        "bc": BeatConsistency(),
        "bc_emage": BeatConsistency(name="bc_emage", direction="audio_to_motion"),
        "srgr": SemanticRelevanceRecall(),
        "sc": SemanticScore(),
    }
    for name, metric in metrics.items():
        started = time.perf_counter()
        metric.prepare(ctx)
        print(f"prepare {name}: {time.perf_counter() - started:.1f} s")

    models = {
        "ground_truth": None,
        "mean_pose": MeanPose(),
        "random_clip": RandomClip(seed=args.seed),
        "gt_shift_5s": "shift",
    }
    for model in models.values():
        if hasattr(model, "prepare"):
            model.prepare(ctx)

    seconds = {name: 0.0 for name in metrics}
    frames = 0
    test = [splits["test"][i] for i in range(len(splits["test"]))]
    ref_bodies = [body_model(r.motion, vertices=False) for r in test]
    for label, model in models.items():
        for metric in metrics.values():
            metric.reset()
        for record, ref_body in zip(test, ref_bodies):
            if model is None:
                gen, gen_body = record.motion, ref_body
            else:
                gen = shifted(record.motion, 150) if model == "shift" else model.generate(record)
                gen_body = body_model(gen, vertices=False)
            pair = MotionPair(
                record.index,
                record.id,
                gen,
                record.motion,
                gen_body,
                ref_body,
                audio=record.audio,
                words=record.words,
                sem=record.sem,
            )
            for name, metric in metrics.items():
                started = time.perf_counter()
                metric.update(pair)
                seconds[name] += time.perf_counter() - started
            frames += record.n_frames
        values = {name: metric.compute() for name, metric in metrics.items()}
        print(
            f"{label:>13}: "
            + "  ".join(
                f"{k} {v:.3f}"
                for d in values.values()
                for k, v in d.items()
                if k.endswith("_ref") is False or label == "ground_truth"
            )
        )
    print("throughput (frames/s of one update, generated + reference scored):")
    for name in metrics:
        print(f"  {name:>9}: {frames / seconds[name]:,.0f}")


if __name__ == "__main__":
    main()
