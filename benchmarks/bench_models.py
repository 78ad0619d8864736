"""Generation speed of the models gesturebench runs itself at full size: EMAGE's released generator
(the release's config.json values) and GestureLSM's shortcut model (the paper's sizes, 2 steps with
guidance); PyTorch's initial weights, the speed does not depend on them.

    python benchmarks/bench_models.py [--model emage|gesturelsm] [--seconds 20] [--device cpu|cuda]

Prints frames of motion generated per second of wall time (30 frames = 1 s of motion), for the whole
windowed inference (`models.emage.inference.generate` / `models.gesturelsm.inference.generate`: all
windows, codec encoding/decoding), after one warm-up run. GestureLSM's audio features (librosa
onsets) are not timed.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import torch

from gesturebench.models.emage.codecs import BodyCodec
from gesturebench.models.emage.config import CodecConfig, GeneratorConfig
from gesturebench.models.emage.generator import EmageGenerator
from gesturebench.models.emage.inference import generate
from gesturebench.models.gesturelsm import config as lsm_config
from gesturebench.models.gesturelsm import inference as lsm
from gesturebench.models.gesturelsm.generator import GestureLSMGenerator
from gesturebench.models.gesturelsm.rvqvae import RVQVAE

#: the release's codec configs (emage_vq/<part>/config.json): input width and depth per part, as
#: PantoMatrix's EMAGE trainer builds them (docs/emage.md, "Codec sizes")
FULL_CODECS = {
    part: CodecConfig(vae_test_dim=dim, vae_length=256, vae_layer=layers, vae_codebook_size=256)
    for part, dim, layers in (
        ("face", 106, 2),
        ("upper", 78, 2),
        ("hands", 180, 2),
        ("lower", 61, 4),
        ("global", 61, 4),
    )
}


def emage_run(seconds: float, device: str) -> tuple[str, Callable[[], int]]:
    """EMAGE at full size and one run over `seconds` of speech (→ frames generated)."""
    generator = EmageGenerator(GeneratorConfig()).to(device).eval()
    codec = BodyCodec(FULL_CODECS).to(device).eval()
    params = sum(p.numel() for p in generator.parameters())
    audio = 0.1 * torch.randn(1, int(seconds * 16000), device=device)
    seed = torch.zeros(1, 4, 337, device=device)
    return (
        f"EMAGE (audio-only release, {params / 1e6:.1f} M generator parameters)",
        lambda: int(generate(generator, codec, audio, seed=seed)["poses"].shape[1]),
    )


def gesturelsm_run(seconds: float, device: str) -> tuple[str, Callable[[], int]]:
    """GestureLSM's shortcut model at the paper's sizes and one run over `seconds` of speech."""
    cfg = lsm_config.GeneratorConfig()
    generator = GestureLSMGenerator(cfg).to(device).eval()
    codecs = {
        part: RVQVAE(lsm_config.CodecConfig(width)).to(device).eval()
        for part, width in lsm_config.PART_WIDTHS.items()
    }
    params = sum(p.numel() for p in generator.parameters())
    frames = int(seconds * 30)
    g = torch.Generator().manual_seed(0)
    windows = lsm.window_count(frames, cfg)
    noise = lsm.draw_noise(1, windows, cfg, g, device=device, dtype=torch.float32)
    norm = lsm.Normalisation(torch.zeros(330), torch.ones(330), torch.zeros(3), torch.ones(3))
    audio = torch.rand(1, frames * 16000 // 30, 2, device=device)
    words = torch.full((1, frames), 3, device=device)
    poses = torch.zeros(1, frames, 165, device=device)
    trans = torch.zeros(1, frames, 3, device=device)

    def run() -> int:
        out = lsm.generate(generator, codecs, norm, audio, words, poses, trans, noise)
        return int(out["poses"].shape[1])

    return f"GestureLSM (shortcut, {params / 1e6:.1f} M generator parameters)", run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=("emage", "gesturelsm"), default="emage")
    parser.add_argument("--seconds", type=float, default=20.0, help="speech length per run")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    build = {"emage": emage_run, "gesturelsm": gesturelsm_run}[args.model]
    title, generate_once = build(args.seconds, args.device)

    def run() -> int:
        with torch.no_grad():
            frames = generate_once()
        if args.device.startswith("cuda"):
            torch.cuda.synchronize()
        return frames

    run()  # warm-up
    start = time.perf_counter()
    frames = sum(run() for _ in range(args.repeats))
    wall = time.perf_counter() - start
    print(
        f"{title} on {args.device}, "
        f"{torch.get_num_threads()} threads: {frames / wall:.0f} frames/s "
        f"({frames / 30 / wall:.1f} s of motion per second; {args.repeats} × {args.seconds:g} s)"
    )


if __name__ == "__main__":
    main()
