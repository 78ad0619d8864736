"""The speech onsets shipped with the package (`gesturebench.ship_onsets`): each proves its
bytes, a first run on mini-BEAT2 finds every onset it needs there (no librosa call), and (slow)
librosa recomputes the same bytes."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

from gesturebench.metrics import bc
from gesturebench.ship_onsets import ship_onsets

SHIPPED = bc.SHIPPED_ONSETS
#: BC alone, with unit mean speeds (no train-split statistics): what the onsets depend on
BC = (
    "metrics=none",
    "+metrics.bc._target_=gesturebench.metrics.bc.BeatConsistency",
    f"+metrics.bc.mean_speed=[{','.join(['1.0'] * 55)}]",
    "logger=none",
    "task.render_clips=0",
    "stats.bootstrap=0",
)


def shipped_files() -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(SHIPPED.iterdir())}


def test_the_shipped_onsets_prove_their_bytes_and_are_small():
    payloads = sorted(SHIPPED.glob("*.npy"))
    assert payloads, f"no onsets shipped in {SHIPPED}"
    for path in payloads:
        meta = json.loads(path.with_name(path.name + ".meta.json").read_text())
        assert meta["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
        assert meta["producer"] == "gesturebench.metrics.bc onsets v1"
        onsets = np.load(path)
        assert onsets.ndim == 1 and len(onsets) > 0 and (np.diff(onsets) > 0).all()
    assert sum(len(data) for data in shipped_files().values()) < 50_000


def test_a_first_run_reads_every_onset_shipped(in_process, mini_beat2, tmp_path, monkeypatch):
    """A fresh cache on the default mini-BEAT2: BC's onsets all come from the shipped entries
    (computing one fails the run), each copied into the cache as it was shipped."""

    def computed(*args, **kwargs):
        raise AssertionError("an onset was computed: the shipped ones do not cover this run")

    monkeypatch.setattr(bc, "segment_onsets", computed)
    results = in_process(*BC, f"paths.cache={tmp_path}", encoders=False)
    assert results["metrics"]["bc"] is not None
    cached = {p.name: p.read_bytes() for p in sorted(tmp_path.glob("*/onsets/*"))}
    assert cached == shipped_files()


@pytest.mark.slow
def test_librosa_recomputes_the_shipped_bytes(in_process, sandbox, mini_beat2, tmp_path):
    written = ship_onsets(tmp_path / "out", [*sandbox.overrides, *BC[:3]])
    assert {p.name: p.read_bytes() for p in written} == shipped_files()
