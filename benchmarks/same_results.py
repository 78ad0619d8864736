"""Check that a change of code leaves every number in results.json unchanged (behaviour-preserving
refactors).

Runs `metrics=paper` for a few models on two BEAT2 folders — mini-BEAT2 as the reference commit
generates it, and a layout built from the real sample (../shared/data/beat2-sample) — once with the
code of a reference commit (a temporary git worktree) and once with the working tree, each training
its own encoders, and compares `metrics`, `per_sequence` and the names in `skipped` exactly. Both
sides read the same data files, so a change of the mini-BEAT2 generator is not a difference here.

    python benchmarks/same_results.py --ref 47c1c10
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from gesturebench.data.annotations_io import write_sem, write_textgrid_words
from gesturebench.data.records import SemInterval, Word

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO.parent / "shared" / "data" / "beat2-sample"
SEQ = "2_scott_0_1_1"
MODELS = (
    ("model=ground_truth",),
    ("model=perturbed", "model.kind=rotation_noise", "model.level=0.1"),
    ("model=random_clip",),
)
COMMON = ("metrics=paper", "task.render_clips=0")


def sample_layout(root: Path) -> Path:
    """The real sample as the test sequence, and clips of it under other ids as the train and val
    splits (dataset statistics, encoder training)."""
    for folder in ("smplxflame_30", "wave16k", "textgrid", "sem"):
        (root / folder).mkdir(parents=True)
    rows = ["id,type"]
    clips = {"2_scott_0_2_2": (0, 900), "2_scott_0_3_3": (600, 1500), "2_scott_0_4_4": (1000, 1906)}
    for seq, split in (
        (SEQ, "test"),
        *((s, "train") for s in list(clips)[:2]),
        (list(clips)[2], "val"),
    ):
        arrays = dict(np.load(SAMPLE / f"{SEQ}.npz", allow_pickle=False))
        if seq in clips:  # a different clip of the same recording, so the splits differ
            start, stop = clips[seq]
            for key in ("poses", "trans", "expressions"):
                arrays[key] = arrays[key][start:stop]
        np.savez(root / "smplxflame_30" / f"{seq}.npz", **arrays)
        annotate(root, seq, len(arrays["poses"]) / 30.0)
        shutil.copy(SAMPLE / f"{SEQ}.wav", root / "wave16k" / f"{seq}.wav")
        rows.append(f"{seq},{split}")
    (root / "train_test_split.csv").write_text("\n".join(rows) + "\n")
    return root


def annotate(root: Path, seq: str, duration: float) -> None:
    """Made-up words (one every 0.4 s) and semantic intervals (one every 6 s, the four classes in
    turn): the sample has neither, and SC, SRGR and SGP need them to have a value to compare."""
    vocab = ("we", "built", "this", "idea", "around", "a", "box", "there", "future", "never")
    words = [
        Word(vocab[i % len(vocab)], 0.4 * i, 0.4 * i + 0.3) for i in range(int(duration / 0.4))
    ]
    write_textgrid_words(root / "textgrid" / f"{seq}.TextGrid", words, duration)
    classes = ("iconic", "beat", "deictic", "metaphoric")
    sem = [
        SemInterval(
            f"0{k % 4 + 1}_{classes[k % 4]}", 6.0 * k + 1.0, 6.0 * k + 2.2, 0.8, vocab[k % 10]
        )
        for k in range(int((duration - 3.0) / 6.0))
    ]
    write_sem(root / "sem" / f"{seq}.txt", sem)


def run_all(code: Path, work: Path, mini_root: Path, sample_root: Path) -> dict:
    """results.json of every case, run with the package in `code`/src; data, caches and encoders
    under `work`."""
    env = {
        **os.environ,
        "PYTHONPATH": str(code / "src"),
        "WANDB_MODE": "offline",
        "WANDB_SILENT": "true",
    }
    paths = (
        f"paths.data={work}/data",
        f"paths.cache={work}/cache",
        f"paths.checkpoints={work}/checkpoints",
    )

    def launch(*args: str) -> None:
        cmd = [
            sys.executable,
            str(code / "launch.py"),
            *args,
            *paths,
            "logger=none",
            "trainer.enable_progress_bar=false",
        ]
        proc = subprocess.run(cmd, cwd=code, env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            sys.exit(f"{code}: {' '.join(args)} failed:\n{proc.stderr[-3000:]}")

    out = {}
    for data_name, root in (("mini", mini_root), ("sample", sample_root)):
        data_args = ("dataset=beat2", f"dataset.root={root}")
        for enc in ("motion_ae", "text_motion"):  # trained explicitly for a BEAT2 folder
            launch("task=train_encoder", f"encoder={enc}", *data_args)
        for model in MODELS:
            run_dir = work / "runs" / data_name / "-".join(model).replace("=", "_")
            launch(*COMMON, *data_args, *model, f"hydra.run.dir={run_dir}")
            out[(data_name, model)] = json.loads((run_dir / "results.json").read_text())
    return out


def differences(a: dict, b: dict) -> list[str]:
    """Every number of `metrics` and `per_sequence` that differs (bit for bit), and skipped names
    that differ."""
    diffs = []
    for key in sorted(set(a["metrics"]) | set(b["metrics"])):
        x, y = a["metrics"].get(key, "absent"), b["metrics"].get(key, "absent")
        if not same(x, y):
            diffs.append(f"metrics.{key}: {x} -> {y}")
    rows_a = {r["sequence_id"]: r for r in a["per_sequence"]}
    rows_b = {r["sequence_id"]: r for r in b["per_sequence"]}
    for seq in sorted(set(rows_a) | set(rows_b)):
        ra, rb = rows_a.get(seq, {}), rows_b.get(seq, {})
        for key in sorted(set(ra) | set(rb)):
            if not same(ra.get(key, "absent"), rb.get(key, "absent")):
                diffs.append(
                    f"per_sequence[{seq}].{key}: {ra.get(key, 'absent')} -> {rb.get(key, 'absent')}"
                )
    if set(a["skipped"]) != set(b["skipped"]):
        diffs.append(f"skipped: {sorted(a['skipped'])} -> {sorted(b['skipped'])}")
    return diffs


def same(x, y) -> bool:
    if isinstance(x, float) and isinstance(y, float):
        return x == y or (math.isnan(x) and math.isnan(y))
    return x == y


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--ref", required=True, help="the commit whose numbers the working tree must reproduce"
    )
    parser.add_argument("--keep", type=Path, default=None, help="keep the runs in this folder")
    args = parser.parse_args()
    if not (SAMPLE / f"{SEQ}.npz").exists():
        sys.exit(f"the real BEAT2 sample is not at {SAMPLE}")
    work = args.keep or Path(tempfile.mkdtemp(prefix="same_results-"))
    ref_tree = work / "ref_tree"
    if not ref_tree.exists():
        subprocess.run(
            ["git", "worktree", "add", "--detach", str(ref_tree), args.ref],
            cwd=REPO,
            check=True,
            capture_output=True,
        )
    sample_root = (
        sample_layout(work / "sample") if not (work / "sample").exists() else work / "sample"
    )
    try:
        mini_root = work / "mini"
        if not (mini_root / "train_test_split.csv").exists():  # generated once, by the reference
            env = {**os.environ, "PYTHONPATH": str(ref_tree / "src")}
            subprocess.run(
                [
                    sys.executable,
                    str(ref_tree / "launch.py"),
                    "task=make_data",
                    f"dataset.root={mini_root}",
                ],
                cwd=ref_tree,
                env=env,
                check=True,
                capture_output=True,
            )
        before = run_all(ref_tree, work / "ref", mini_root, sample_root)
        shutil.rmtree(work / "new", ignore_errors=True)  # never resume the code under test
        after = run_all(REPO, work / "new", mini_root, sample_root)
    finally:
        subprocess.run(
            ["git", "worktree", "remove", "--force", str(ref_tree)], cwd=REPO, capture_output=True
        )
    failed = False
    for case, results in before.items():
        diffs = differences(results, after[case])
        n = len(results["metrics"]) + sum(len(r) for r in results["per_sequence"])
        label = f"{case[0]} {' '.join(case[1])}"
        verdict = f"{len(diffs)} differences" if diffs else "identical"
        print(f"{label}: {verdict} ({n} values compared)")
        for line in diffs[:20]:
            print(f"  {line}")
        failed |= bool(diffs)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
