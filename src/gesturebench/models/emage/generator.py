"""EMAGE's audio-only generator: for one window of speech and a partly masked motion (seed frames
visible), per body part a regressed latent (``rec_*``) and class logits over its codebook
(``cls_*``)."""

from __future__ import annotations

import torch
from torch import nn

from gesturebench.data.records import N_JOINTS
from gesturebench.models.emage.config import GeneratorConfig
from gesturebench.models.emage.layers import MLP, PeriodicPositions, WaveEncoder, conv_encoder

BODY = ("upper", "hands", "lower")
#: checkpoint entries of the two template transformer layers the stacks were copied from; they are
#: loaded (strictly, like every key) but never run
TEMPLATE_PREFIXES = ("transformer_en_layer.", "audio_motion_cross_attn_layer.")
#: per frame: 55 joints as 6D rotations, root translation (3), foot contact (4)
MOTION_DIM = N_JOINTS * 6 + 3 + 4


class EmageGenerator(nn.Module):
    """Attribute names follow the released checkpoint (``moton_proj`` included)."""

    def __init__(self, cfg: GeneratorConfig):
        super().__init__()
        self.cfg = cfg
        h, codes, motion_dim = cfg.hidden_size, cfg.vae_codebook_size, cfg.pose_dims + 7
        self.audio_encoder_face = WaveEncoder(cfg.audio_f)
        self.audio_encoder_body = WaveEncoder(cfg.audio_f)
        self.speaker_embedding_body = nn.Embedding(cfg.speaker_dims, h)
        self.speaker_embedding_face = nn.Embedding(cfg.speaker_dims, h)
        self.mask_embedding = nn.Parameter(torch.zeros(1, 1, motion_dim))
        self.motion_encoder = conv_encoder(motion_dim, cfg.motion_f, 3)
        self.bodyhints_face = MLP(cfg.motion_f, h, cfg.motion_f)
        self.bodyhints_body = MLP(cfg.motion_f, h, cfg.motion_f)
        self.audio_body_motion_proj = nn.Linear(cfg.audio_f, h)
        self.moton_proj = nn.Linear(cfg.motion_f, h)
        self.position_embeddings = PeriodicPositions(h, cfg.pose_length)
        self.transformer_en_layer = nn.TransformerEncoderLayer(h, 4, 2 * h, batch_first=True)
        self.motion_self_encoder = nn.TransformerEncoder(
            self.transformer_en_layer, 1, enable_nested_tensor=False
        )
        self.audio_motion_cross_attn_layer = nn.TransformerDecoderLayer(
            h, 4, 2 * h, batch_first=True
        )
        self.audio_motion_cross_attn = self._decoder(8)
        for part in BODY:
            setattr(self, f"motion2latent_{part}", MLP(h, h, h))
            setattr(self, f"body_motion_decoder_{part}", self._decoder(1))
            setattr(self, f"motion_out_proj_{part}", nn.Linear(h, codes))
            setattr(self, f"motion_cls_{part}", MLP(codes, h, codes))
        self.audio_face_motion_proj = nn.Linear(cfg.audio_f + cfg.motion_f, h)
        self.face_motion_decoder = self._decoder(4)
        self.face_out_proj = nn.Linear(h, codes)
        self.face_cls = MLP(codes, h, codes)

    def _decoder(self, layers: int) -> nn.TransformerDecoder:
        return nn.TransformerDecoder(self.audio_motion_cross_attn_layer, layers)

    def forward(
        self, audio: torch.Tensor, motion: torch.Tensor, mask: torch.Tensor, speaker: torch.Tensor
    ) -> dict[str, torch.Tensor]:
        """`audio` (B, S) at 16 kHz, `motion` (B, T, MOTION_DIM), `mask` (B, T, MOTION_DIM) with 1
        where the motion is hidden, `speaker` (B, 1) ids → ``rec_<part>`` (B, T, codebook) and
        ``cls_<part>`` (B, T, codebook) for face, upper, hands, lower.

        The audio must give at least T feature frames; extra face-audio frames are cut, the
        body-audio ones stay (as memory of the cross-attention), as in the release."""
        motion = torch.where(mask == 1, self.mask_embedding.expand_as(motion), motion)
        hint = self.motion_encoder(motion)
        face_audio = self.audio_encoder_face(audio)[:, : motion.shape[1]]
        body_audio = self.audio_encoder_body(audio)
        t = face_audio.shape[1]
        speaker_body = self.speaker_embedding_body(speaker).expand(-1, t, -1)
        speaker_face = self.speaker_embedding_face(speaker).expand(-1, t, -1)
        face_memory = self.audio_face_motion_proj(
            torch.cat([face_audio, self.bodyhints_face(hint)], dim=2)
        )
        face = self.face_out_proj(
            self.face_motion_decoder(self.position_embeddings(speaker_face), face_memory)
        )
        body = speaker_body + self.position_embeddings(self.moton_proj(self.bodyhints_body(hint)))
        body = self.position_embeddings(self.motion_self_encoder(body) + speaker_body)
        body = body + self.audio_motion_cross_attn(body, self.audio_body_motion_proj(body_audio))
        latents = {p: getattr(self, f"motion2latent_{p}")(body) for p in BODY}
        out = {"rec_face": face, "cls_face": self.face_cls(face)}
        for part in BODY:
            others = sum(latents[p] for p in BODY if p != part)
            refine = getattr(self, f"body_motion_decoder_{part}")(
                latents[part] + speaker_body, others
            )
            rec = getattr(self, f"motion_out_proj_{part}")(latents[part] + refine)
            out[f"rec_{part}"] = rec
            out[f"cls_{part}"] = getattr(self, f"motion_cls_{part}")(rec)
        return out
