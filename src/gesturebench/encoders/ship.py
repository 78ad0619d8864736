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

Rebuild them after a change to the generator, the encoders or their configs: generate mini-BEAT2
(`python launch.py task=make_data dataset.root=data/mini_beat2_default`), then
`python -m gesturebench.encoders.ship` (writes `src/gesturebench/encoders/shipped/`;
`--data`: another mini-BEAT2 folder).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import cast

import torch

from gesturebench.data.beat2 import SPLIT_FILE, Beat2Dataset
from gesturebench.data.records import SequenceRecord
from gesturebench.encoders.motion_ae_training import MotionAEConfig
from gesturebench.encoders.text_training import TextMotionConfig
from gesturebench.encoders.training_common import SHIPPED, EncoderConfig
from gesturebench.runtime.atomic import write_atomic
from gesturebench.runtime.errors import DataError
from gesturebench.runtime.threads import thread_budget

#: the dataset the shipped encoders are trained on (`dataset=mini_beat2`, its default size and seed)
DATASET = "mini_beat2"
#: torch's intra-op threads while training them: one gives the same bytes on any number of cores
THREADS = 1


def shipped_configs() -> tuple[EncoderConfig, ...]:
    """The training configs of the shipped encoders (the defaults of `conf/encoder/*`)."""
    return (MotionAEConfig(), TextMotionConfig())


def mini_splits(root: Path) -> dict[str, Sequence[SequenceRecord]]:
    """The train and val records of the mini-BEAT2 folder `root`, as `dataset=mini_beat2` opens
    them (no audio)."""
    if not (root / SPLIT_FILE).is_file():
        raise DataError(
            root,
            f"no mini-BEAT2 here ({SPLIT_FILE} missing); generate it with "
            f"`python launch.py task=make_data dataset.root={root}`",
        )
    return {
        split: cast(Sequence[SequenceRecord], Beat2Dataset(root, split, load_audio=False))
        for split in ("train", "val")
    }


def train_shipped(
    out_dir: Path,
    splits: dict[str, Sequence[SequenceRecord]],
    checkpoints_dir: str | Path = "checkpoints",
) -> list[Path]:
    """Train every shipped encoder on mini-BEAT2's `splits` ("train", "val") into `out_dir`
    (`<encoder>-mini_beat2.pt` and its `.json`) as auto-training does, with `THREADS` threads per
    pool (`thread_budget`; recorded in the sidecar's "trained_with"); `checkpoints_dir` is where
    released weights (the sentence encoder) are looked for. Returns the checkpoints."""
    paths = []
    with thread_budget(THREADS):
        for cfg in shipped_configs():
            path = out_dir / cfg.checkpoint_path(".", DATASET).name
            cfg.train(splits["train"], splits["val"], path, checkpoints_dir=checkpoints_dir)
            sidecar = cfg.entry(path).meta_path
            meta = json.loads(sidecar.read_text())
            meta["trained_with"] = {"torch": torch.__version__, "threads": THREADS}
            write_atomic(sidecar, json.dumps(meta, indent=1) + "\n")
            paths.append(path)
    return paths


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path("data/mini_beat2_default"))
    parser.add_argument("--out", type=Path, default=SHIPPED, help="where to write")
    parser.add_argument("--checkpoints", default="checkpoints", help="paths.checkpoints")
    args = parser.parse_args(argv)
    for path in train_shipped(args.out, mini_splits(args.data), args.checkpoints):
        print(f"{path} {path.stat().st_size} bytes")


if __name__ == "__main__":
    main()
