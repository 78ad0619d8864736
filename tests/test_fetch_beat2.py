"""From a fresh clone: `task=fetch` against the local fake Hub and GitHub
(tests/support/fake_hub.py, serving the PRODUCTION table's EMAGE evaluation files where that table
says they are: the FGD encoder as seeded random weights in the released layout, the BC normaliser
as its real pinned bytes), then `metrics=genea` and `metrics=emage2025` on the real BEAT2 sample
with the Hub offline and no other step. The body model is the default one
(docs/configuration.md: `model_path: null`, the procedural model file, generated into the fresh
`checkpoints/body_models/`)."""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gesturebench.assets.fetch import LOCK
from gesturebench.assets.table import EVAL
from tests.helpers import REPO
from tests.launch import error_line
from tests.support.fake_hub import FakeHub, serve_emage_eval
from tests.support.requires import BEAT2_SAMPLE, EMAGE_DIR, require_shared

pytestmark = pytest.mark.slow

SEQ = "2_scott_0_1_1"
#: what each preset is run on: genea on BEAT2's test split (all speakers), emage2025 on speaker 2's
#: (its pin, conf/metrics/emage2025.yaml; the sample is speaker 2's)
RUNS = {"genea": "dataset=beat2", "emage2025": "dataset=beat2_speaker2"}


def _beat2(root: Path) -> Path:
    """The real sample in BEAT2's layout (train_test_split.csv, smplxflame_30/, wave16k/)."""
    sample = require_shared(BEAT2_SAMPLE / f"{SEQ}.npz").parent
    folder = root / "beat_english_v2.0.0"
    for sub in ("smplxflame_30", "wave16k"):
        (folder / sub).mkdir(parents=True)
    shutil.copy(sample / f"{SEQ}.npz", folder / "smplxflame_30")
    shutil.copy(sample / f"{SEQ}.wav", folder / "wave16k")
    (folder / "train_test_split.csv").write_text(f"id,type\n{SEQ},test\n")
    return folder


def _clone(root: Path) -> Path:
    """A fresh clone's working folder: launch.py and nothing else (no checkpoints/, data/, .cache/:
    `paths.*` default to folders under it)."""
    root.mkdir(parents=True)
    (root / "launch.py").symlink_to(REPO / "launch.py")
    return root


def _launch(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "launch.py", "logger=none", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )


def _ok(done: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert done.returncode == 0, f"{done.args}\nexit {done.returncode}\n{done.stderr[-3000:]}"
    return done


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_fetch_then_genea_and_emage2025_run_offline_on_the_real_sample(tmp_path):
    mean_speed = require_shared(EMAGE_DIR / "mean_vel_smplxflame_30.npy")
    beat2 = _beat2(tmp_path / "BEAT2")
    clone = _clone(tmp_path / "clone")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HYDRA_"))}
    env.update(
        WANDB_MODE="offline",
        WANDB_SILENT="true",
        HF_HUB_CACHE=str(tmp_path / "hf_cache"),  # an empty cache of its own
        HF_HUB_DISABLE_PROGRESS_BARS="1",
    )
    offline = {**env, "HF_HUB_OFFLINE": "1"}
    root = f"dataset.root={beat2}"
    checkpoints = clone / "checkpoints"

    # before the fetch: one line naming the count, the first file and the command that gets them
    for preset, dataset in RUNS.items():
        line = error_line(_launch(clone, offline, dataset, root, f"metrics={preset}"))
        first = checkpoints / "emage_eval/EMAGE/test_sequences/weights/AESKConv_240_100.bin"
        fetch = f"python launch.py task=fetch {dataset} {root} metrics={preset}"
        assert line.startswith(
            f"error: 2 public files this run needs are missing, the first {first}"
            f" (emage_eval/AESKConv_240_100.bin, for metrics: FGD encoder=emage); get them all:"
            f" {fetch} (traceback: "
        )
    assert not checkpoints.exists() or not (checkpoints / "emage_eval").exists()

    hub = FakeHub().start()
    try:
        served = serve_emage_eval(hub, mean_speed)
        online = {
            **env,
            "HF_HUB_OFFLINE": "0",
            "HF_ENDPOINT": hub.url,
            "GESTUREBENCH_GITHUB_ENDPOINT": hub.github_url,
        }
        # the command the line gave, as a user runs it (the production table: no replacement)
        for preset, dataset in RUNS.items():
            _ok(_launch(clone, online, "task=fetch", dataset, root, f"metrics={preset}"))
    finally:
        hub.stop()
    # each file downloaded once: the second preset's fetch found both in place
    files = [p for m, p, _ in hub.requests if m == "GET" and ("/resolve/" in p or "/gh/" in p)]
    assert sorted(files) == sorted(a.source("", "/gh") for a in EVAL), files
    lock = json.loads((checkpoints / LOCK).read_text())
    for asset in EVAL:
        assert (checkpoints / asset.dest).read_bytes() == served[asset.key]
        assert lock[asset.key]["sha256"] == _sha(served[asset.key])
    bc = next(a for a in EVAL if a.key.endswith(".npy"))
    assert bc.sha256 == _sha(mean_speed.read_bytes())  # the pin held: the real bytes

    # the runs, offline, with nothing else done: exit 0 and their numbers
    for preset, dataset in RUNS.items():
        run_dir = tmp_path / f"run_{preset}"
        _ok(_launch(clone, offline, dataset, root, f"metrics={preset}", f"hydra.run.dir={run_dir}"))
        res = json.loads((run_dir / "results.json").read_text())
        assert res["preset"] == preset
        assert res["protocol"]["status"] == "matched"
        values = res["metrics"]
        # ground truth against itself: EMAGE 2025's FGD formula gives −2·dim·1e-6, not 0
        assert values["fgd"] == pytest.approx(-2 * 240 * 1e-6, abs=1e-9)
        assert res["encoders"]["emage_fgd"]["sha256"] == _sha(
            served["emage_eval/AESKConv_240_100.bin"]
        )
        bcs = ["ba_a2m", "ba_m2a"] if preset == "genea" else ["bc"]
        for name in bcs:
            assert 0 < values[name] <= 1, (name, values[name])
            assert res["encoders"][f"{name}_mean_speed"]["sha256"] == bc.sha256
        assert all(math.isfinite(v) for v in values.values() if isinstance(v, float))
