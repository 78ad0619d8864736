"""Run folders whose results.json cannot be taken, one of each kind the reader of run folders
(`reporting.results.read_run_file`) names, beside one good run: for the sweep summary, the
leaderboard and `gesturebench.load_results`, which must each name them, never skip them."""

from __future__ import annotations

import json
import os
from pathlib import Path

from gesturebench.runtime.commit import PENDING, staged

#: folder name → the words its problem is named with
PROBLEMS = {
    "not_json": "not JSON (",
    "edited": "changed after its run (its SHA-256 is not the one manifest.json lists)",
    "pending": f"its run's commit is still pending ({PENDING}/ in its folder)",
    "a_list": "not a JSON object (a list)",
}


def committed(folder: Path, doc: dict, mtime: float = 1000.0) -> Path:
    """`doc` committed as `folder`/results.json (manifest and all, as a run writes it)."""
    with staged(folder) as stage:
        (stage / "results.json").write_text(json.dumps(doc))
    os.utime(folder / "results.json", (mtime, mtime))
    return folder / "results.json"


def unreadable_runs(root: Path, doc: dict) -> dict[str, Path]:
    """One run folder under `root` per `PROBLEMS` kind, each made from the committed `doc`;
    {kind: its results.json}."""
    paths = {}
    for kind in PROBLEMS:
        path = committed(root / kind, doc)
        if kind == "not_json":
            (root / kind / "manifest.json").unlink()
            path.write_text("{")
        elif kind == "edited":
            path.write_text(json.dumps({**doc, "model": "edited"}))
        elif kind == "pending":
            (root / kind / PENDING).mkdir()
        else:
            (root / kind / "manifest.json").unlink()
            path.write_text("[1, 2]")
        paths[kind] = path
    return paths
