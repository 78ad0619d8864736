"""Training of the text–motion model (`task=train_encoder encoder=text_motion`, and auto-training on
mini data).

Pairs are (motion window, words spoken in it) from the train split, windows without words skipped.
The sentence embeddings are computed once per distinct text before training (the sentence encoder is
frozen), so an epoch only runs the small motion tower and the projection: mini-BEAT2 trains in
seconds on a CPU.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytorch_lightning as pl
import torch
from pytorch_lightning.callbacks import EarlyStopping
from torch.utils.data import DataLoader, TensorDataset

from gesturebench.data.records import SequenceRecord
from gesturebench.encoders.text_model import OFFICIAL, resolve_text_model
from gesturebench.encoders.text_motion import (
    FORMAT,
    SentenceEmbedder,
    TextMotionModel,
    load_text_motion,
    seconds_to_frames,
    text_motion_path,
    text_to_motion_ranks,
    text_windows,
)
from gesturebench.encoders.training_common import EncoderConfig, Fitted
from gesturebench.runtime.errors import ConfigError


@dataclass(frozen=True)
class TextMotionConfig(EncoderConfig):
    """Training config of the text–motion model (`conf/encoder/text_motion.yaml`); stored in the
    checkpoint.

    `window_s`/`hop_s` are the windows SC scores; `train_hop_s` the (denser) hop of the training
    windows. Training stops when the validation text→motion mean reciprocal rank has not improved
    for `patience` epochs and keeps the best epoch's weights. The defaults are small and strongly
    regularised (text dropout, weight decay, fixed temperature), for data whose text–motion link is,
    as in mini-BEAT2, mostly the class of the semantic gesture; on mini-BEAT2 they train in seconds
    on 2 CPU cores.
    """

    name: str = "text_motion"
    text_model: str = OFFICIAL
    window_s: float = 4.0
    hop_s: float = 2.0
    train_hop_s: float = 1.0
    hidden_dim: int = 32
    embed_dim: int = 32
    kernel_size: int = 5
    temperature: float = 0.5
    text_dropout: float = 0.3
    weight_decay: float = 1e-2
    lr: float = 2e-3
    max_epochs: int = 40
    max_steps: int = 400
    patience: int = 10

    checkpoint_format = FORMAT

    def load(self, path: Path, overrides: Sequence[str] = ()):
        return load_text_motion(path, overrides)

    def checkpoint_path(self, checkpoints_dir: str | Path, dataset: str) -> Path:
        return text_motion_path(checkpoints_dir, dataset)

    def identity(self, train, val, checkpoints_dir) -> dict:
        """The config and records' digests (`EncoderConfig.identity`) and the SHA-256 of each file
        of the sentence encoder the projection is trained on (where `text_model` resolves)."""
        hashes = resolve_text_model(self.text_model, checkpoints_dir).info.get("sha256", {})
        return {**super().identity(train, val, checkpoints_dir), "text_model": dict(hashes)}

    def __post_init__(self):
        for key in ("window_s", "hop_s", "train_hop_s"):
            if seconds_to_frames(getattr(self, key)) <= 0:
                raise ConfigError(
                    f"encoder.{key}={getattr(self, key)} must be at least one frame (1/30 s)"
                )

    def fit_module(self, train, val, fit, checkpoints_dir) -> Fitted:
        window = seconds_to_frames(self.window_s)
        train_w, train_t = worded_windows(
            train, window, seconds_to_frames(self.train_hop_s), "train"
        )
        val_w, val_t = worded_windows(val, window, seconds_to_frames(self.hop_s), "val")
        embedder = SentenceEmbedder(self.text_model, checkpoints_dir=checkpoints_dir)
        train_e, val_e = embedder(train_t), embedder(val_t)

        model = TextMotionModel(
            text_dim=embedder.dim,
            hidden_dim=self.hidden_dim,
            embed_dim=self.embed_dim,
            kernel_size=self.kernel_size,
            temperature=self.temperature,
            text_dropout=self.text_dropout,
            lr=self.lr,
            weight_decay=self.weight_decay,
        )
        # over the training windows' frames
        std, mean = torch.std_mean(train_w.reshape(-1, train_w.shape[-1]), dim=0)
        model.set_normalisation(mean, std.clamp_min(self.std_floor))
        shuffle = torch.Generator().manual_seed(self.seed)
        train_loader = DataLoader(
            TensorDataset(train_w, train_e),
            batch_size=self.batch_size,
            shuffle=True,
            generator=shuffle,
            drop_last=len(train_t) > self.batch_size,
        )
        # one batch: MRR over all of it
        val_loader = DataLoader(TensorDataset(val_w, val_e), batch_size=len(val_t))
        best = KeepBest("val_mrr")
        early_stopping = EarlyStopping(monitor="val_mrr", mode="max", patience=self.patience)
        trainer = fit(model, train_loader, val_loader, [early_stopping, best], progress_bar=False)

        model.eval()
        with torch.no_grad():
            val_m, val_x = model.embed_motion(val_w), model.embed_text(val_e)
        figures = {
            "val_mrr": best.best,
            "best_step": best.step,
            "val_r1": retrieval_recall(val_m, val_x, 1),
            "val_r5": retrieval_recall(val_m, val_x, 5),
            "val_chance_r1": 1 / len(val_t),
            "val_sc": float((val_m * val_x).sum(-1).mean()),
            "train_windows": len(train_t),
            "val_windows": len(val_t),
            "text_model": embedder.info,
        }
        headline = f"val R@1={figures['val_r1']:.3f} (chance {figures['val_chance_r1']:.3f})"
        return Fitted(model, trainer, figures, headline)


def worded_windows(
    records: Sequence[SequenceRecord], window: int, hop: int, what: str
) -> tuple[torch.Tensor, list[str]]:
    """All worded windows (N, window, REP_DIM) of `records` and their texts; records without words
    are skipped."""
    windows, texts = [], []
    for record in records:
        if record.words:
            w, t = text_windows(record.motion, record.words, window, hop)
            windows.append(w)
            texts.extend(t)
    if not texts:
        raise ConfigError(
            f"text_motion training needs {what} sequences with transcripts (words), and found none"
        )
    return torch.cat(windows).contiguous(), texts


@torch.no_grad()
def retrieval_recall(motion: torch.Tensor, text: torch.Tensor, k: int = 1) -> float:
    """Text→motion R@k of unit embeddings whose i-th rows pair up: how often motion i is in text i's
    top k (ties count against it)."""
    return float((text_to_motion_ranks(motion, text) <= k).double().mean())


class KeepBest(pl.Callback):
    """Keeps the weights of the best validation epoch (highest `monitor`) and loads them back when
    training ends."""

    def __init__(self, monitor: str):
        self.monitor, self.best, self.state, self.step = monitor, -float("inf"), None, 0

    def on_validation_end(self, trainer, module):
        value = trainer.callback_metrics.get(self.monitor)
        if not trainer.sanity_checking and value is not None and float(value) > self.best:
            self.best, self.step = float(value), trainer.global_step
            self.state = copy.deepcopy(module.state_dict())

    def on_fit_end(self, trainer, module):
        if self.state is not None:
            module.load_state_dict(self.state)
