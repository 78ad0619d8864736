"""Run `launch.py` as a real subprocess, the way a user does, inside the session's sandbox: its
data, cache, checkpoints and run folders are temporary, so that no test writes into the checkout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from gesturebench.config import repo_root

REPO = repo_root()


class Sandbox:
    """A session's `paths.data`, `paths.cache` and `paths.checkpoints` under `root`, plus a fresh
    run folder for each launched run that does not name its own.

    `checkpoints/body_models` links to the checkout's folder where there is one, so that a body
    model file put there (or the procedural one, generated once) is still the one used."""

    def __init__(self, root: Path):
        self.root = root
        self.data, self.cache, self.checkpoints = (
            root / "data",
            root / "cache",
            root / "checkpoints",
        )
        for folder in (self.data, self.cache, self.checkpoints, root / "runs"):
            folder.mkdir(parents=True, exist_ok=True)
        body_models = REPO / "checkpoints" / "body_models"
        if body_models.is_dir():
            (self.checkpoints / "body_models").symlink_to(body_models, target_is_directory=True)

    @property
    def overrides(self) -> tuple[str, ...]:
        return (
            f"paths.data={self.data}",
            f"paths.cache={self.cache}",
            f"paths.checkpoints={self.checkpoints}",
        )

    def run_overrides(self) -> tuple[str, ...]:
        """A new run and sweep folder: the defaults of a launched run that names neither."""
        run = Path(tempfile.mkdtemp(dir=self.root / "runs"))
        return f"hydra.run.dir={run / 'run'}", f"hydra.sweep.dir={run / 'sweep'}"


# the session's sandbox, set by conftest's `sandbox` fixture
SANDBOX: Sandbox | None = None


def command(*overrides: str, env: dict | None = None) -> tuple[list[str], dict]:
    """The command line and environment of `python launch.py OVERRIDES…`, quiet and offline, in the
    sandbox.

    The sandbox's folders come first, so the caller's overrides win; a caller that sets `paths.root`
    gets its own data, cache and checkpoints folders under it."""
    if SANDBOX is None:
        raise RuntimeError("tests.launch needs conftest's `sandbox` fixture (run it under pytest)")
    run_env = {k: v for k, v in os.environ.items() if k != "HYDRA_FULL_ERROR"}
    run_env.update({"WANDB_MODE": "offline", "WANDB_SILENT": "true", **(env or {})})
    flags = [o for o in overrides if o.startswith("-")]
    rest = [o for o in overrides if not o.startswith("-")]
    own_root = any(o.startswith("paths.root=") for o in rest)
    cmd = [
        sys.executable,
        str(REPO / "launch.py"),
        *flags,
        "trainer.enable_progress_bar=false",
        *(() if own_root else SANDBOX.overrides),
        *SANDBOX.run_overrides(),
        *rest,
    ]
    return cmd, run_env


def launch(
    *overrides: str, timeout: int = 600, env: dict | None = None
) -> subprocess.CompletedProcess:
    """Run `command(*overrides, env=env)` from the repository root; its output captured."""
    cmd, run_env = command(*overrides, env=env)
    return subprocess.run(
        cmd, cwd=REPO, env=run_env, capture_output=True, text=True, timeout=timeout
    )


def results(run_dir: Path) -> dict:
    return json.loads((Path(run_dir) / "results.json").read_text())
