"""The speech onsets shipped with the package (`metrics/shipped/onsets/`): BC's onsets of
mini-BEAT2's test split (default size and seed) under the default metric options, so that the first
`python launch.py` reads them instead of importing librosa, whose kernels compile into a new
environment once (about 15 CPU-seconds; docs/performance.md, "First run").

Each is the cache entry a run writes (`metrics.bc.onset_entry`): found by its file name, which
hashes the audio's samples and the segment, and used only where its sidecar's key and SHA-256 are
the run's. `tests/test_shipped_onsets.py` checks that a first run finds every onset it needs here
and (slow) that recomputing them with librosa gives the same bytes.

Rebuild them after a change to the generator or to BC's onset options:
`python -m gesturebench.ship_onsets` runs the evaluation of `python launch.py` in this
process with an empty cache and the shipped onsets out of reach (so librosa computes every onset),
and replaces the shipped entries with the onsets it wrote.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from unittest import mock

from gesturebench.api import evaluate
from gesturebench.metrics import bc
from gesturebench.metrics.bc import SHIPPED_ONSETS


def ship_onsets(out: Path = SHIPPED_ONSETS, overrides: Sequence[str] = ()) -> list[Path]:
    """Recompute the onsets of `python launch.py OVERRIDES` (its BC's, with librosa) and put
    them, alone, into `out`; returns the files written."""
    with (
        tempfile.TemporaryDirectory() as tmp,
        mock.patch.object(bc, "SHIPPED_ONSETS", Path(tmp) / "none"),
    ):
        evaluate(
            *overrides,
            f"paths.cache={tmp}/cache",
            f"hydra.run.dir={tmp}/run",
            "logger=none",
            "task.render_clips=0",
        )
        out.mkdir(parents=True, exist_ok=True)
        for old in out.iterdir():
            old.unlink()
        return [
            Path(shutil.copy2(path, out / path.name))
            for path in sorted((Path(tmp) / "cache").glob("*/onsets/*"))
        ]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=SHIPPED_ONSETS, help="where to write")
    parser.add_argument("overrides", nargs="*", help="overrides of the run (e.g. paths.data=...)")
    args = parser.parse_args(argv)
    for path in ship_onsets(args.out, args.overrides):
        print(f"{path} {path.stat().st_size} bytes")


if __name__ == "__main__":
    main()
