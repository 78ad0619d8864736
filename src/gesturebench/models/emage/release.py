"""EMAGE's released files (``H-Liu1997/emage_audio`` on the Hugging Face Hub) and loading them: the
generator's ``config.json`` + ``pytorch_model.bin`` at the top, one pair per codec under
``emage_vq/<part>/`` (as the official code's ``from_pretrained(..., subfolder="emage_vq/<part>")``
reads them). Every network is built from its config.json and loaded strictly. The files' pins (a
Hub download must match them) and `task=fetch`: `gesturebench.assets.table`."""

from __future__ import annotations

import torch

from gesturebench.assets.table import pinned
from gesturebench.models.emage.codecs import PARTS, BodyCodec
from gesturebench.models.emage.config import CodecConfig, GeneratorConfig
from gesturebench.models.emage.generator import EmageGenerator
from gesturebench.models.loading import load_weights
from gesturebench.runtime.weights import HubFiles, ResolvedWeights

CONFIG, WEIGHTS = "config.json", "pytorch_model.bin"
#: the generator's folder, then each codec's, relative to the release's root
FOLDERS = ("", *(f"emage_vq/{part}/" for part in PARTS))
RELEASE = HubFiles(
    repo_id="H-Liu1997/emage_audio",
    files=tuple(f"{folder}{name}" for folder in FOLDERS for name in (CONFIG, WEIGHTS)),
    folder="emage",
    docs="docs/emage.md",
    sha256=pinned("H-Liu1997/emage_audio", "emage"),
)


def load_release(
    weights: ResolvedWeights, device: str | torch.device = "cpu"
) -> tuple[EmageGenerator, BodyCodec]:
    """The generator and codecs of a resolved `RELEASE` folder, in eval mode on `device`. A config
    that lacks a field, or weights that do not load strictly into the network it describes (a
    truncated file, another size), is one `CheckpointError` naming the file."""
    generator = EmageGenerator(GeneratorConfig.from_json(weights.path(CONFIG)))
    load_weights(generator, weights.path(WEIGHTS), f"the generator its {CONFIG} describes")
    configs = {p: CodecConfig.from_json(weights.path(f"emage_vq/{p}/{CONFIG}")) for p in PARTS}
    codec = BodyCodec(configs)
    for part in PARTS:
        load_weights(
            codec.parts[part],
            weights.path(f"emage_vq/{part}/{WEIGHTS}"),
            f"the {part} codec its {CONFIG} describes",
        )
    return generator.to(device).eval(), codec.to(device).eval()
