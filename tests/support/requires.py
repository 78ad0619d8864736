"""What a test needs from outside the checkout: the project's shared/ folder beside it (the real
BEAT2 sample, EMAGE's files), headless Chromium, a PostgreSQL server. Where one is missing the test
is skipped with the reason, except under CI (`CI=true`, which `.ci/run` sets), where it fails: CI
must run every proof, not pass by skipping them."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import NoReturn

import pytest

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"
#: the real BEAT2 sample, or the folder `$GESTUREBENCH_BEAT2_SAMPLE` names
BEAT2_SAMPLE = Path(os.environ.get("GESTUREBENCH_BEAT2_SAMPLE", SHARED / "data" / "beat2-sample"))
#: EMAGE's released evaluation files (its BC speed normaliser)
EMAGE_DIR = SHARED / "data" / "emage"


def missing(reason: str) -> NoReturn:
    """Skip the test with `reason`, or fail it under CI."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (CI=true: a test that needs it fails rather than skips)")
    pytest.skip(reason)


def require_shared(path: Path) -> Path:
    """`path` (a file or folder of the shared/ folder), or the test skipped (failed under CI)."""
    if not path.exists():
        missing(f"{path} not found (it lives in the project's shared/ folder beside the checkout)")
    return path


def require_binary(*names: str, package: str) -> list[str]:
    """The full paths of the programs `names` on PATH, or the test skipped (failed under CI)
    naming the Debian `package` to install."""
    found = [shutil.which(name) for name in names]
    absent = [name for name, path in zip(names, found) if path is None]
    if absent:
        missing(f"{', '.join(absent)} not on PATH: apt-get install {package}")
    return [path for path in found if path is not None]


def require_postgres() -> Path:
    """A PostgreSQL server's binaries folder (the last of `/usr/lib/postgresql/*/bin`), or the test
    skipped (failed under CI)."""
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"))
    if not found:
        missing("no /usr/lib/postgresql/*/bin/pg_ctl: apt-get install postgresql")
    return found[-1].parent


def require_latex() -> dict[str, str]:
    """pdflatex with booktabs, pdftoppm and pdftotext (name → path), or the test skipped (failed
    under CI) naming the Debian packages (`.ci/run` installs them)."""
    tex = "texlive-latex-base texlive-latex-recommended texlive-fonts-recommended"
    paths = require_binary("pdflatex", "kpsewhich", package=tex)
    paths += require_binary("pdftoppm", "pdftotext", package="poppler-utils")
    found = subprocess.run([paths[1], "booktabs.sty"], capture_output=True, text=True).stdout
    if not found.strip():
        missing(f"booktabs.sty not found by kpsewhich: apt-get install {tex}")
    return dict(zip(("pdflatex", "kpsewhich", "pdftoppm", "pdftotext"), paths))
