"""Check that a change of code leaves every number in results.json unchanged (behaviour-preserving
refactors).

Runs `metrics=paper` for a few models on mini-BEAT2 and on a BEAT2 layout built from the real sample
(../shared/data/beat2-sample), once with the code of a reference commit (a temporary git worktree)
and once with the working tree, and compares `metrics`, `per_sequence` and the names in `skipped`
exactly.

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

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO.parent / "shared" / "data" / "beat2-sample"
SEQ = "2_scott_0_1_1"
MODELS = (
    ("model=ground_truth",),
    ("model=perturbed", "model.kind=rotation_noise", "model.level=0.1"),
    ("model=random_clip",),
)
COMMON = (
    "metrics=paper",
    "logger=none",
    "task.render_clips=0",
    "trainer.enable_progress_bar=false",
)


def sample_layout(root: Path) -> Path:
    """The real sample as a test sequence and, under another id, as the train split (statistics,
    encoders)."""
    (root / "smplxflame_30").mkdir(parents=True)
    (root / "wave16k").mkdir()
    rows = ["id,type"]
    for seq, split in ((SEQ, "test"), ("2_scott_0_2_2", "train"), ("2_scott_0_3_3", "train")):
        arrays = dict(np.load(SAMPLE / f"{SEQ}.npz", allow_pickle=False))
        if split == "train":  # a different clip of the same recording, so train and test differ
            start = 300 if seq.endswith("2_2") else 600
            for key in ("poses", "trans", "expressions"):
                arrays[key] = arrays[key][start : start + 900]
        np.savez(root / "smplxflame_30" / f"{seq}.npz", **arrays)
        shutil.copy(SAMPLE / f"{SEQ}.wav", root / "wave16k" / f"{seq}.wav")
        rows.append(f"{seq},{split}")
    (root / "train_test_split.csv").write_text("\n".join(rows) + "\n")
    return root


def run_all(code: Path, work: Path, sample_root: Path) -> dict:
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
    out = {}
    for data_name, data_args in (
        ("mini", ()),
        ("sample", ("dataset=beat2", f"dataset.root={sample_root}")),
    ):
        if data_name == "sample":
            for enc in ("motion_ae", "text_motion"):
                subprocess.run(
                    [
                        sys.executable,
                        str(code / "launch.py"),
                        "task=train_encoder",
                        f"encoder={enc}",
                        *data_args,
                        *paths,
                        "logger=none",
                        "trainer.enable_progress_bar=false",
                    ],
                    cwd=code,
                    env=env,
                    capture_output=True,
                    text=True,
                )
        for model in MODELS:
            run_dir = work / "runs" / data_name / "-".join(model).replace("=", "_")
            cmd = [
                sys.executable,
                str(code / "launch.py"),
                *COMMON,
                *data_args,
                *model,
                *paths,
                f"hydra.run.dir={run_dir}",
            ]
            proc = subprocess.run(cmd, cwd=code, env=env, capture_output=True, text=True)
            if proc.returncode != 0:
                sys.exit(f"{code}: {' '.join(model)} on {data_name} failed:\n{proc.stderr[-3000:]}")
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
        before = run_all(ref_tree, work / "ref", sample_root)
        after = run_all(REPO, work / "new", sample_root)
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
