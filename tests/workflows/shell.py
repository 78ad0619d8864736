"""A user's shell for the documented commands: a fresh working folder with `launch.py` linked in
(so that `python launch.py` and the relative `outputs/` of the docs work as written), the session
sandbox's `data/`, `checkpoints/` and `.cache/` linked in as that folder's defaults (mini-BEAT2 and
its encoders made once per session), the virtual environment's python first on PATH."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.helpers import REPO
from tests.launch import Sandbox
from tests.workflows.registry import documented_command
from tests.workflows.substitutions import ENVIRONMENT, substitute

ASSIGNMENT = re.compile(r"^(?:export )?([A-Za-z_]\w*)=")


class Shell:
    """Runs documented commands (checked to be in the docs verbatim) in `root`, after the
    substitution table with `values`; shell variables a command sets stay set for the next."""

    def __init__(self, root: Path, sandbox: Sandbox, **values: str):
        self.root, self.values = root, values
        root.mkdir(parents=True, exist_ok=True)
        (root / "launch.py").symlink_to(REPO / "launch.py")
        links = {"data": sandbox.data, "checkpoints": sandbox.checkpoints, ".cache": sandbox.cache}
        for name, target in links.items():
            (root / name).symlink_to(target, target_is_directory=True)
        self.env = {k: v for k, v in os.environ.items() if k != "HYDRA_FULL_ERROR"}
        bin_dir = str(Path(sys.executable).parent)
        self.env.update(ENVIRONMENT, PATH=f"{bin_dir}{os.pathsep}{self.env.get('PATH', '')}")

    def line(self, documented: str) -> str:
        """The command line that runs `documented`."""
        return substitute(documented_command(documented), self.values)

    def run(self, documented: str, timeout: int = 1800) -> subprocess.CompletedProcess:
        """Run `documented` to its end; a variable assignment is kept for later commands."""
        line = self.line(documented)
        assigned = ASSIGNMENT.match(line)
        if assigned:
            line = f'{line}; printf %s "${assigned.group(1)}"'
        done = subprocess.run(
            ["bash", "-c", line],
            cwd=self.root,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if assigned and done.returncode == 0:
            self.env[assigned.group(1)] = done.stdout
        return done

    def program(self, documented: str, name: str = "example.py") -> subprocess.CompletedProcess:
        """Run the documented python program `documented` as the file `name` in the folder."""
        (self.root / name).write_text(documented_command(documented))
        return subprocess.run(
            [sys.executable, name], cwd=self.root, env=self.env, capture_output=True, text=True
        )

    def start(self, documented: str, log: Path) -> subprocess.Popen:
        """Start `documented` in the background (a server), its output into `log`."""
        with open(log, "w") as out:
            return subprocess.Popen(
                ["bash", "-c", f"exec {self.line(documented)}"],
                cwd=self.root,
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )

    def runs(self, task: str) -> list[Path]:
        """The run folders of `task` under the working folder's `outputs/`, oldest first."""
        found = [p.parent for p in (self.root / "outputs" / task).rglob(".hydra")]
        return sorted(found, key=lambda p: p.stat().st_mtime)


def ok(done: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    """`done`, after checking that it exited 0 (else its command and output's end)."""
    assert done.returncode == 0, f"{done.args[-1]}\nexit {done.returncode}\n{done.stderr[-3000:]}"
    return done
