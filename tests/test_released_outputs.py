"""Models scored from their authors' released results: SemTalk's test-set npz files in the exact
layout its trainer writes (``res_<id>.npz`` beside ``gt_<id>.npz``: semtalk_sparse_trainer.py's
test, Xiangyue-Zhang/SemTalk 12589ef), and SemConFlow, which releases no code or weights."""

from __future__ import annotations

import numpy as np
import pytest

from gesturebench.run.config import build_model
from gesturebench.runtime.errors import CheckpointError
from gesturebench.tasks.common import open_dataset
from tests.helpers import composed


def write_semtalk_release(folder, record, rng):
    """res_/gt_ files as SemTalk's test writes them: float32 axis-angle poses (T, 165), 100
    expressions, translation, the BEAT2 file's betas (300,), and three metadata scalars."""
    n = record.motion.n_frames
    meta = {"model": "smplx2020", "gender": "neutral", "mocap_frame_rate": 30}
    res = {
        "betas": record.motion.betas,
        "poses": rng.normal(0, 0.3, (n, 165)).astype(np.float32),
        "expressions": rng.normal(0, 1, (n, 100)).astype(np.float32),
        "trans": rng.normal(0, 0.1, (n, 3)).astype(np.float32),
    }
    ref = record.motion
    gt = {
        "betas": ref.betas,
        "poses": ref.poses,
        "expressions": ref.expressions,
        "trans": ref.trans,
    }
    np.savez(folder / f"res_{record.id}.npz", **res, **meta)
    np.savez(folder / f"gt_{record.id}.npz", **gt, **meta)
    return res


def test_semtalk_reads_its_released_test_npz_layout(tmp_path):
    records = list(open_dataset(composed().dataset))[:2]
    release = tmp_path / "semtalk_test_npz"
    release.mkdir()
    rng = np.random.default_rng(0)
    written = {r.id: write_semtalk_release(release, r, rng) for r in records}
    cfg = composed(f"paths.checkpoints={tmp_path}", "model=semtalk", f"model.dir={release}")
    model = build_model(cfg.model)
    for record in records:
        motion = model.generate(record)
        for key in ("poses", "expressions", "trans"):
            np.testing.assert_array_equal(getattr(motion, key), written[record.id][key])
    info = model.describe()
    assert info["source"] == "outputs" and info["copied_fields"] == []
    assert info["identical_to_reference"] == {}  # gt_*.npz (the reference) is never read


def test_semtalk_without_its_results_names_the_layout(tmp_path):
    cfg = composed(f"paths.checkpoints={tmp_path}", "model=semtalk")
    with pytest.raises(CheckpointError) as err:
        build_model(cfg.model)
    assert "res_{sequence_id}.npz" in str(err.value) and "\n" not in str(err.value)


def test_semconflow_says_nothing_is_released_and_names_its_protocol(tmp_path):
    cfg = composed(f"paths.checkpoints={tmp_path}", "model=semconflow")
    with pytest.raises(CheckpointError) as err:
        build_model(cfg.model)
    text = str(err.value)
    assert "\n" not in text and "releases no code or weights" in text
    assert "25-speaker BEAT2 protocol" in text
