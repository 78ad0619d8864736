"""SC: semantic score, the text–motion agreement of generated motion with its transcript
(docs/metrics.md, SC)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from gesturebench.encoders.text_model import TextModelUnavailable
from gesturebench.encoders.text_motion import TextMotionEncoder
from gesturebench.encoders.text_training import TextMotionConfig
from gesturebench.metrics.base import SequenceMetric
from gesturebench.metrics.context import MetricContext
from gesturebench.metrics.pair import MotionPair
from gesturebench.runtime.errors import ConfigError

log = logging.getLogger(__name__)


class SemanticScore(SequenceMetric):
    """SC ↑: mean cosine, in the learned text–motion space, of each worded 4 s window of generated
    motion with the words spoken in it (mean over windows, then over sequences); ``sc_ref`` scores
    the reference motion.

    The encoder is the dataset's `text_motion` checkpoint (`checkpoint` overrides its path); where
    it is missing it is trained with `encoder` options when the context allows auto-training
    (mini-BEAT2). A sequence with no worded window counts as missing, like one without a transcript.
    Without a sentence encoder (`encoders.text_model`) SC is skipped, its reason naming the extra.
    """

    default_name = "sc"
    direction = "higher"
    requires = ("words",)
    extras = ("{name}_ref",)
    reads = ("jaw", "eyes", "trans")  # joint rotations and root velocity of the text–motion space
    reference_only = ("{name}_ref",)
    hidden_options = ("encoder",)

    def __init__(
        self,
        checkpoint: str | None = None,
        encoder: Mapping | None = None,
        **kwargs: Any,
    ):
        super().__init__(**kwargs)
        self.checkpoint = checkpoint
        self.encoder_cfg = TextMotionConfig.coerce(encoder)
        self.encoder: TextMotionEncoder | None = None
        #: why SC cannot be scored on this machine (no sentence encoder), else None
        self.unavailable: str | None = None

    def provenance(self) -> dict:
        return {"text_motion": self.encoder.info} if self.encoder is not None else {}

    def prepare(self, context: MetricContext) -> None:
        try:
            model, info = context.encoder(self.encoder_cfg, self.checkpoint)
            self.encoder = TextMotionEncoder(model, info, context.device, context.checkpoints_dir)
        except TextModelUnavailable as err:
            self.unavailable = str(err)
            log.warning("%s skipped: %s", self.name, err)

    def skip_reason(self) -> str | None:
        return self.unavailable or super().skip_reason()

    def sequence_values(self, pair: MotionPair) -> tuple[list[float | None], float] | None:
        if self.unavailable:
            return None
        if self.encoder is None:
            raise ConfigError(
                f"metric {self.name}: prepare(context) must run before update (text_motion encoder)"
            )
        words = pair.words or []
        if not any(self.encoder.texts(pair.generated, words)):
            return None  # no window holds a word: counted as missing
        values: list[float | None] = [
            float(self.encoder.window_scores(m, words).mean())
            for m in (pair.generated, pair.reference)
        ]
        return values, 1.0
