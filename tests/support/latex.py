"""Compiling a LaTeX file the project wrote, as a paper would (pdflatex, stopping at the first
error), for the tests of summary.tex and leaderboard.tex."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.support.requires import require_latex


def compile_pdf(tex: Path) -> Path:
    tools = require_latex()
    done = subprocess.run(
        [tools["pdflatex"], "-interaction=nonstopmode", "-halt-on-error", tex.name],
        cwd=tex.parent,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-3000:]
    assert "Overfull \\hbox" not in done.stdout, done.stdout[-3000:]  # nothing runs off the page
    return tex.with_suffix(".pdf")
