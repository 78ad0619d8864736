"""LDLJ_rel's sensitivity to jitter on real motion, with and without the Savitzky–Golay filter (the
table in docs/metrics.md, LDLJ_rel).

    python benchmarks/ldlj_jitter.py [--sample ../shared/data/beat2-sample/2_scott_0_1_1.npz]

The reference is the sample's real BEAT2 motion (procedural body); the "generated" motion is the
same motion with i.i.d. Gaussian noise of σ = 0, 1 and 5 mm added to every joint position and frame
(seed 0). Prints LDLJ_rel = LDLJ_ref − LDLJ_gen for the unfiltered default and for SG(9, 3).
"""

from __future__ import annotations

import argparse

import torch

from gesturebench.body.joints import UPPER
from gesturebench.body.model import BodyModel
from gesturebench.data.beat2 import read_motion_npz
from gesturebench.metrics.functional.ldlj_rel import windowed_ldlj

FPS = 30.0
FILTERS = {"unfiltered (default)": None, "SG(9, 3)": 9}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", default="../shared/data/beat2-sample/2_scott_0_1_1.npz")
    args = parser.parse_args()
    joints = BodyModel()(read_motion_npz(args.sample), vertices=False).joints.double()
    upper = joints[:, list(UPPER)] - joints[:, :1]
    noise = torch.randn(upper.shape, generator=torch.Generator().manual_seed(0), dtype=upper.dtype)
    print(f"{len(upper)} frames ({len(upper) / FPS:.1f} s), {len(UPPER)} UPPER joints")
    print("| jitter σ | " + " | ".join(f"LDLJ_rel, {name}" for name in FILTERS) + " |")
    print("| --- |" + " --- |" * len(FILTERS))
    for mm in (0, 1, 5):
        gen = upper + noise * mm / 1000
        cells = [
            windowed_ldlj(upper, FPS, savgol_window=w) - windowed_ldlj(gen, FPS, savgol_window=w)
            for w in FILTERS.values()
        ]
        print(f"| {mm} mm | " + " | ".join(f"{float(c):.2f}" for c in cells) + " |")


if __name__ == "__main__":
    main()
