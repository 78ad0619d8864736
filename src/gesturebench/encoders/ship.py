"""The encoders shipped with the package (`encoders/shipped/`): mini-BEAT2's (default size, seed 0)
motion autoencoder and text–motion model, trained with the default configs of
`conf/encoder/motion_ae.yaml` and `conf/encoder/text_motion.yaml`, so that the first
`python launch.py` does not train them (docs/performance.md, "First run").

Each is what auto-training writes (`EncoderConfig.train`), trained with one torch thread: the
checkpoint and a sidecar whose "trained_on" (the training config, the SHA-256 of the train and val
records, the sentence encoder's files) must equal the run's before the copy is used; anything else
retrains. Its "trained_with" records the torch version and the thread count. A retrain with one
thread gives the same bytes (`tests/test_shipped_encoders.py`, slow); with another thread count
torch sums in another order and the weights differ in their last bits (docs/performance.md).

Rebuild them after a change to the generator, the encoders or their configs:
`python -m gesturebench.encoders.ship` (writes `src/gesturebench/encoders/shipped/`).
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections.abc import Sequence
from pathlib import Path

import torch

from gesturebench.encoders.motion_ae_training import MotionAEConfig
from gesturebench.encoders.text_training import TextMotionConfig
from gesturebench.encoders.training_common import SHIPPED, EncoderConfig
from gesturebench.runtime.atomic import write_atomic

#: the dataset the shipped encoders are trained on (`dataset=mini_beat2`, its default size and seed)
DATASET = "mini_beat2"
#: torch's intra-op threads while training them: one gives the same bytes on any number of cores
THREADS = 1


def shipped_configs() -> tuple[EncoderConfig, ...]:
    """The training configs of the shipped encoders (the defaults of `conf/encoder/*`)."""
    return (MotionAEConfig(), TextMotionConfig())


def mini_splits(data_dir: Path) -> dict[str, Sequence]:
    """mini-BEAT2's (default size, seed 0) train and val records, generated under `data_dir`
    when missing, as `dataset=mini_beat2` opens them."""
    from gesturebench.run.datamodule import Beat2Source

    source = Beat2Source(name=DATASET, root=str(data_dir / "mini_beat2_default"), generate=True)
    return {split: source.open(split=split, load_audio=False) for split in ("train", "val")}


def train_shipped(
    out_dir: Path, data_dir: Path, checkpoints_dir: str | Path = "checkpoints"
) -> list[Path]:
    """Train every shipped encoder on mini-BEAT2 into `out_dir` (`<encoder>-mini_beat2.pt` and its
    `.json`) as auto-training does, with `THREADS` torch threads (recorded in the sidecar's
    "trained_with"); `checkpoints_dir` is where released weights (the sentence encoder) are looked
    for. Returns the checkpoints."""
    splits = mini_splits(data_dir)
    paths = []
    threads = torch.get_num_threads()
    torch.set_num_threads(THREADS)
    try:
        for cfg in shipped_configs():
            path = out_dir / cfg.checkpoint_path(".", DATASET).name
            cfg.train(splits["train"], splits["val"], path, checkpoints_dir=checkpoints_dir)
            sidecar = cfg.entry(path).meta_path
            meta = json.loads(sidecar.read_text())
            meta["trained_with"] = {"torch": torch.__version__, "threads": THREADS}
            write_atomic(sidecar, json.dumps(meta, indent=1) + "\n")
            paths.append(path)
    finally:
        torch.set_num_threads(threads)
    return paths


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=SHIPPED, help="where to write")
    parser.add_argument("--checkpoints", default="checkpoints", help="paths.checkpoints")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as data:
        for path in train_shipped(args.out, Path(data), args.checkpoints):
            print(f"{path} {path.stat().st_size} bytes")


if __name__ == "__main__":
    main()
