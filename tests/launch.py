"""Run `launch.py` as a real subprocess, the way a user does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.helpers import REPO


def launch(
    *overrides: str, timeout: int = 600, env: dict | None = None
) -> subprocess.CompletedProcess:
    """`python launch.py OVERRIDES…` from the repository root, quiet and offline."""
    run_env = {k: v for k, v in os.environ.items() if k != "HYDRA_FULL_ERROR"}
    run_env.update({"WANDB_MODE": "offline", "WANDB_SILENT": "true", **(env or {})})
    flags = [o for o in overrides if o.startswith("-")]
    rest = [o for o in overrides if not o.startswith("-")]
    cmd = [
        sys.executable,
        str(REPO / "launch.py"),
        *flags,
        "trainer.enable_progress_bar=false",
        *rest,
    ]
    return subprocess.run(
        cmd, cwd=REPO, env=run_env, capture_output=True, text=True, timeout=timeout
    )


def results(run_dir: Path) -> dict:
    return json.loads((Path(run_dir) / "results.json").read_text())
