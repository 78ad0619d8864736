"""The text–motion embedding model behind SC (docs/metrics.md), its windows, sentence encoder and
checkpoints.

A window of `window_s` seconds of motion (the per-frame representation of `encoders.representation`)
goes through a small temporal convolution tower, mean-pooled over time; the words spoken in the
window go through a frozen sentence encoder (`sentence-transformers/all-MiniLM-L6-v2` by default,
resolved by `encoders.text_model`, or any model `sentence_transformers.SentenceTransformer` can
load) and a trained linear projection. Both land, L2-normalised, in one `embed_dim` space,
trained with symmetric InfoNCE (`encoders.text_training`).

Checkpoints are plain dicts readable with `torch.load(weights_only=True)`, like the motion
autoencoder's: {"format", "state_dict", "hparams", "config"}, with `<name>.json` beside them
(config, training summary, SHA-256).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytorch_lightning as pl
import torch
from torch import nn
from torch.nn import functional as F

from gesturebench.data.records import FPS, Motion, Word
from gesturebench.encoders.checkpoint import (
    encoder_entry,
    encoder_path,
    load_encoder,
    save_encoder,
)
from gesturebench.encoders.conv import downsampling_layers
from gesturebench.encoders.representation import REP_DIM, motion_representation, sliding_windows
from gesturebench.encoders.text_model import OFFICIAL, resolve_text_model
from gesturebench.runtime.atomic import one_line
from gesturebench.runtime.errors import CheckpointError

FORMAT = "gesturebench.text_motion.v1"
ENCODER = "text_motion"


# ---------- windows ----------


def seconds_to_frames(seconds: float) -> int:
    return round(seconds * FPS)


def window_texts(
    words: Sequence[Word], n_frames: int, fps: float, window: int, hop: int
) -> list[str]:
    """The text of every window `sliding_windows(rep, window, hop)` cuts from `n_frames` frames, in
    order.

    A word belongs to the window holding its midpoint ((start + end) / 2); a window with no word
    gets "".
    """
    starts = range(0, max(n_frames - window, 0) + 1, hop)
    mids = np.array([(w.start + w.end) / 2 * fps for w in words])
    texts = []
    for s in starts:
        inside = np.flatnonzero((mids >= s) & (mids < s + window))
        texts.append(" ".join(words[int(i)].word for i in inside))
    return texts


def text_windows(
    motion: Motion, words: Sequence[Word], window: int, hop: int
) -> tuple[torch.Tensor, list[str]]:
    """Representation windows (W, window, REP_DIM) of `motion` that have words, and their texts."""
    windows = sliding_windows(motion_representation(motion), window, hop)
    texts = window_texts(words, motion.n_frames, motion.fps, window, hop)
    keep = [i for i, t in enumerate(texts) if t]
    return windows[keep], [texts[i] for i in keep]


# ---------- frozen sentence encoder ----------


@functools.lru_cache(maxsize=4)
def _sentence_transformer(name: str, device: str, checkpoints_dir: str):
    """The loaded model `name` and its provenance (`resolve_text_model`), once per process."""
    from sentence_transformers import SentenceTransformer

    text_model = resolve_text_model(name, checkpoints_dir)
    try:
        return SentenceTransformer(text_model.path, device=device), text_model.info
    except Exception as exc:  # a missing folder, no network for a hub name, a broken download
        raise CheckpointError(
            f"text model {name}: could not be loaded by sentence-transformers ({one_line(exc)})"
        ) from exc


class SentenceEmbedder:
    """The frozen sentence encoder, loaded once per process, with an in-memory cache of embeddings
    by text; `info` is where its weights came from (for results.json)."""

    def __init__(
        self,
        name: str = OFFICIAL,
        device: str = "cpu",
        batch_size: int = 128,
        checkpoints_dir: str | Path = "checkpoints",
    ):
        self.name, self.device, self.batch_size = name, device, batch_size
        self.model, self.info = _sentence_transformer(name, str(device), str(checkpoints_dir))
        self._cache: dict[str, torch.Tensor] = {}

    @property
    def dim(self) -> int:
        dim = (
            getattr(self.model, "get_embedding_dimension", None)
            or self.model.get_sentence_embedding_dimension
        )
        return int(dim())

    def __call__(self, texts: Sequence[str]) -> torch.Tensor:
        """(N, dim) float32 CPU embeddings of `texts`; each distinct text is encoded once."""
        new = sorted({t for t in texts if t not in self._cache})
        if new:
            emb = self.model.encode(
                new, batch_size=self.batch_size, convert_to_tensor=True, show_progress_bar=False
            )
            self._cache.update(zip(new, emb.float().cpu()))
        if not texts:
            return torch.zeros((0, self.dim))
        return torch.stack([self._cache[t] for t in texts])


# ---------- model ----------


def text_to_motion_ranks(motion: torch.Tensor, text: torch.Tensor) -> torch.Tensor:
    """For unit embeddings whose i-th rows pair up: the rank (1 = best) of motion i among all
    motions for text i."""
    sim = text @ motion.T
    return (sim > sim.diagonal()[:, None]).sum(1) + 1


def mean_reciprocal_rank(motion: torch.Tensor, text: torch.Tensor) -> torch.Tensor:
    return (1.0 / text_to_motion_ranks(motion, text).double()).mean()


def info_nce(motion: torch.Tensor, text: torch.Tensor, temperature: float) -> torch.Tensor:
    """Symmetric InfoNCE of L2-normalised (B, E) embeddings whose i-th rows are the positive
    pairs."""
    logits = motion @ text.T / temperature
    target = torch.arange(len(motion), device=motion.device)
    return (F.cross_entropy(logits, target) + F.cross_entropy(logits.T, target)) / 2


class TextMotionModel(pl.LightningModule):
    """Motion tower + text projection into one L2-normalised space; trained on (windows, sentence
    embeddings).

    The InfoNCE temperature is fixed: with mini-BEAT2's class-level text–motion signal a learned one
    sharpens until the model memorises individual pairs, which lowers held-out retrieval.
    """

    #: Per-dimension normalisation of the representation (buffers, saved in the checkpoint).
    mean: torch.Tensor
    std: torch.Tensor

    def __init__(
        self,
        text_dim: int = 384,
        rep_dim: int = REP_DIM,
        hidden_dim: int = 32,
        embed_dim: int = 32,
        kernel_size: int = 5,
        temperature: float = 0.5,
        text_dropout: float = 0.3,
        lr: float = 2e-3,
        weight_decay: float = 1e-2,
    ):
        super().__init__()
        self.save_hyperparameters()
        self.register_buffer("mean", torch.zeros(rep_dim))
        self.register_buffer("std", torch.ones(rep_dim))
        act, k = nn.GELU(), kernel_size
        # 30 fps → 15 fps, per-frame projection, two strided convolutions
        self.motion_tower = nn.Sequential(
            nn.AvgPool1d(2), *downsampling_layers(rep_dim, hidden_dim, k, act)
        )
        self.motion_head = nn.Linear(hidden_dim, embed_dim)
        self.text_dropout = nn.Dropout(text_dropout)
        self.text_projection = nn.Linear(text_dim, embed_dim)

    def set_normalisation(self, mean: torch.Tensor, std: torch.Tensor) -> None:
        self.mean.copy_(mean)
        self.std.copy_(std)

    def embed_motion(self, windows: torch.Tensor) -> torch.Tensor:
        """Raw representation windows (B, window, REP_DIM) → unit embeddings (B, embed_dim)."""
        x = ((windows - self.mean) / self.std).transpose(1, 2)
        return F.normalize(self.motion_head(self.motion_tower(x).mean(-1)), dim=-1)

    def embed_text(self, sentence_embeddings: torch.Tensor) -> torch.Tensor:
        """Frozen sentence embeddings (B, text_dim) → unit embeddings (B, embed_dim)."""
        return F.normalize(self.text_projection(self.text_dropout(sentence_embeddings)), dim=-1)

    def training_step(self, batch, batch_idx):
        windows, sentences = batch
        loss = info_nce(
            self.embed_motion(windows), self.embed_text(sentences), self.hparams["temperature"]
        )
        self.log("train_loss", loss, prog_bar=True)
        return loss

    def validation_step(self, batch, batch_idx):
        """The whole validation set is one batch: its loss and text→motion mean reciprocal rank."""
        motion, text = self.embed_motion(batch[0]), self.embed_text(batch[1])
        self.log("val_loss", info_nce(motion, text, self.hparams["temperature"]))
        self.log("val_mrr", mean_reciprocal_rank(motion, text), prog_bar=True)

    def configure_optimizers(self):
        return torch.optim.AdamW(
            self.parameters(), lr=self.hparams["lr"], weight_decay=self.hparams["weight_decay"]
        )


# ---------- checkpoints ----------


def text_motion_path(checkpoints_dir: str | Path, dataset: str) -> Path:
    """`<checkpoints_dir>/encoders/text_motion-<dataset>.pt`."""
    return encoder_path(checkpoints_dir, ENCODER, dataset)


def save_text_motion(model: TextMotionModel, path: str | Path, config: dict, summary: dict) -> str:
    """Write the checkpoint and `<path>.json` beside it; return the checkpoint's SHA-256."""
    return save_encoder(model, encoder_entry(path, FORMAT, load_text_motion), config, summary)


def load_text_motion(
    path: str | Path, overrides: Sequence[str] = ()
) -> tuple[TextMotionModel, dict]:
    """A frozen model in eval mode and its info {"path", "sha256", "config"}; `CheckpointError` if
    unusable, naming the command (with the run's `overrides`) that creates it."""
    return load_encoder(path, TextMotionModel, FORMAT, ENCODER, overrides)


# ---------- scoring ----------


class TextMotionEncoder:
    """A trained model with its sentence encoder and window geometry: what SC uses at evaluation
    time."""

    def __init__(
        self,
        model: TextMotionModel,
        info: dict,
        device: str = "cpu",
        checkpoints_dir: str | Path = "checkpoints",
    ):
        cfg = info["config"]
        self.embedder = SentenceEmbedder(cfg["text_model"], device, checkpoints_dir=checkpoints_dir)
        self.model, self.device = model.to(device), device
        self.info = {**info, "text_model": self.embedder.info}
        self.window, self.hop = seconds_to_frames(cfg["window_s"]), seconds_to_frames(cfg["hop_s"])

    def texts(self, motion: Motion, words: Sequence[Word]) -> list[str]:
        return window_texts(words, motion.n_frames, motion.fps, self.window, self.hop)

    @torch.no_grad()
    def motion_embeddings(self, windows: torch.Tensor, batch_size: int = 256) -> torch.Tensor:
        out = [self.model.embed_motion(w.to(self.device)).cpu() for w in windows.split(batch_size)]
        return torch.cat(out) if out else torch.zeros((0, self.model.hparams["embed_dim"]))

    @torch.no_grad()
    def text_embeddings(self, texts: Sequence[str]) -> torch.Tensor:
        return self.model.embed_text(self.embedder(texts).to(self.device)).cpu()

    def window_scores(self, motion: Motion, words: Sequence[Word]) -> torch.Tensor:
        """The cosine of each worded window of `motion` with the embedding of its words: (W,)."""
        windows, texts = text_windows(motion, words, self.window, self.hop)
        return (self.motion_embeddings(windows) * self.text_embeddings(texts)).sum(-1)
