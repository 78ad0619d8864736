"""Generation speed of the models gesturebench runs itself: EMAGE's released generator at full size
(the release's config.json values; PyTorch's initial weights, the speed does not depend on them).

    python benchmarks/bench_models.py [--seconds 20] [--device cpu|cuda] [--threads N]

Prints frames of motion generated per second of wall time (30 frames = 1 s of motion), for the whole
windowed inference (`models.emage.inference.generate`: all windows, codec decoding, translation),
after one warm-up run.
"""

from __future__ import annotations

import argparse
import time

import torch

from gesturebench.models.emage.codecs import BodyCodec
from gesturebench.models.emage.config import CodecConfig, GeneratorConfig
from gesturebench.models.emage.generator import EmageGenerator
from gesturebench.models.emage.inference import generate

#: the release's codec configs (emage_vq/<part>/config.json): input width and depth per part; upper
#: and hands were not readable offline and take the face's depth (2)
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="speech length per run")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    generator = EmageGenerator(GeneratorConfig()).to(args.device).eval()
    codec = BodyCodec(FULL_CODECS).to(args.device).eval()
    params = sum(p.numel() for p in generator.parameters())
    audio = 0.1 * torch.randn(1, int(args.seconds * 16000), device=args.device)
    seed = torch.zeros(1, 4, 337, device=args.device)

    def run() -> int:
        out = generate(generator, codec, audio, seed=seed)
        if args.device.startswith("cuda"):
            torch.cuda.synchronize()
        return int(out["poses"].shape[1])

    run()  # warm-up
    start = time.perf_counter()
    frames = sum(run() for _ in range(args.repeats))
    wall = time.perf_counter() - start
    print(
        f"EMAGE (audio-only release, {params / 1e6:.1f} M generator parameters) on {args.device}, "
        f"{torch.get_num_threads()} threads: {frames / wall:.0f} frames/s "
        f"({frames / 30 / wall:.1f} s of motion per second; {args.repeats} × {args.seconds:g} s)"
    )


if __name__ == "__main__":
    main()
