"""The text–motion model behind SC: windows, offline sentence encoder, InfoNCE, checkpoints,
training on mini-BEAT2."""

from __future__ import annotations

import hashlib
import json
import os

import numpy as np
import pytest
import torch
from torch.nn import functional as F

from gesturebench.data.records import Word
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
    retrieval_recall,
    worded_windows,
)
from gesturebench.runtime.errors import CheckpointError, ConfigError

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


def test_text_to_motion_retrieval_on_held_out_windows_is_well_above_chance(
    trained_sc, mini_records
):
    metric, _ = trained_sc
    enc = metric.encoder
    windows, texts = worded_windows(mini_records["test"], enc.window, enc.hop, "test")
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


def test_reference_motion_scores_higher_than_with_shuffled_transcripts(trained_sc, mini_records):
    metric, _ = trained_sc
    enc = metric.encoder
    own, shuffled = [], []
    records = mini_records["test"]
    for i, r in enumerate(records):
        other = records[(i + 1) % len(records)]
        own.append(float(enc.window_scores(r.motion, r.words).mean()))
        shuffled.append(float(enc.window_scores(r.motion, other.words).mean()))
    assert np.mean(own) > np.mean(shuffled) + 0.2  # measured 0.49 vs 0.06


def test_train_function_is_seeded(mini_records, tmp_path):
    cfg = {"max_steps": 5, "hidden_dim": 16, "embed_dim": 8}
    subset = {"train": mini_records["train"][:3], "val": mini_records["val"][:1]}
    a = TextMotionConfig.coerce(cfg).train(subset["train"], subset["val"], tmp_path / "a.pt")
    b, _ = TextMotionConfig.coerce(cfg).load_or_train(
        tmp_path, "x", subset.__getitem__, True, path=tmp_path / "b.pt"
    )
    sd_a = load_text_motion(a)[0].state_dict()
    sd_b = b.state_dict()
    assert all(torch.equal(sd_a[k], sd_b[k]) for k in sd_a)
    # the same file, byte for byte: its SHA-256 identifies the encoder across retrains
    assert a.read_bytes() == (tmp_path / "b.pt").read_bytes()
