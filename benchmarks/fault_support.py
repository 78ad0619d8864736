"""What the fault scripts share: launching `launch.py` in a work folder, mini-BEAT2 there, a copy of
it to damage, and the two outcomes a hostile input may have (`refused`, `honest`)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

# the checkout's tests/: the fault script and the tests judge an outcome the same way
from tests.support.outcomes import honest as honest  # noqa: E402
from tests.support.outcomes import refusal  # noqa: E402

#: BC added to the fast metrics (the speech-side cases need it)
WITH_BC = ("+metrics.bc._target_=gesturebench.metrics.bc.BeatConsistency", "+metrics.bc.name=bc")


def launch(workdir: Path, *args: str, python: tuple[str, ...] = ()) -> subprocess.Popen:
    """`launch.py ARGS` started in `workdir` (its outputs/, data/, .cache/ and checkpoints/ there),
    quiet and offline, on the small mini-BEAT2 test split with the fast metrics; `python`: the
    interpreter's own arguments instead of the script (e.g. ``("-c", code)``)."""
    given = {a.split("=", 1)[0] for a in args}
    defaults = [
        d
        for d in (
            "logger=none",
            "metrics=fast",
            "task.render_clips=0",
            "dataset.max_sequences=2",
            "trainer.enable_progress_bar=false",
            "threads=1",
        )
        if d.split("=", 1)[0] not in given
    ]
    cmd = [
        sys.executable,
        *(python or (str(REPO / "launch.py"),)),
        *(a for a in args if a.startswith("-")),  # Hydra's flags before the overrides
        *defaults,
        *(a for a in args if not a.startswith("-")),
    ]
    env = {k: v for k, v in os.environ.items() if k != "HYDRA_FULL_ERROR"}
    env["WANDB_MODE"] = "offline"
    return subprocess.Popen(
        cmd, cwd=workdir, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def finished(proc: subprocess.Popen) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=900)
    return proc.returncode, out, err


def mini_data(workdir: Path) -> Path:
    """mini-BEAT2 under `workdir` (generated once), where `paths.root=workdir` finds it."""
    from gesturebench.synthesis.mini.dataset import ensure_mini_beat2

    return ensure_mini_beat2(workdir / "data" / "mini_beat2_default")


def test_ids(root: Path, n: int = 2) -> list[str]:
    """The first `n` test sequences of the BEAT2-layout folder `root` (what a run scores)."""
    rows = [line.split(",") for line in (root / "train_test_split.csv").read_text().splitlines()]
    return [r[0] for r in rows[1:] if r[1].strip() == "test"][:n]


def dataset_copy(workdir: Path, name: str) -> tuple[Path, list[str]]:
    """A copy of mini-BEAT2 named `name` whose test split is its first two test sequences: the
    copy and their ids."""
    root = workdir / name
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(mini_data(workdir), root)
    ids = test_ids(root)
    rows = (root / "train_test_split.csv").read_text().splitlines()
    kept = [r for r in rows[1:] if r.split(",")[1].strip() != "test" or r.split(",")[0] in ids]
    (root / "train_test_split.csv").write_text("\n".join([rows[0], *kept]) + "\n")
    return root, ids


def refused(code: int, err: str, path: Path | str) -> str | None:
    """None when a run was refused (`refusal`) in a line naming `path`."""
    why = refusal(code, err)
    if why is None and str(path) not in err:
        return f"the error does not name {path}: {err.strip()[-300:]}"
    return why


def metrics_of(run: Path) -> dict:
    """results.json's `metrics` of the run folder `run`."""
    return json.loads((run / "results.json").read_text())["metrics"]
