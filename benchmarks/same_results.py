"""Check that a behaviour-preserving change of code leaves every number of results.json unchanged.

    python benchmarks/same_results.py record FILE    # run the cases, write their numbers to FILE
    python benchmarks/same_results.py compare FILE   # run them again, compare with FILE bit for bit

Record on the code before the change, compare on the code after it. Each case is one
`task=evaluate` run through the Python API (`gesturebench.evaluate`), in this process, into a fresh
temporary `paths.root` shared by the cases of one invocation (mini-BEAT2 generated and encoders
trained there):

- `mini-paper-default`, `mini-paper-perturbed`: `metrics=paper` on the built-in mini-BEAT2, with the
  main command's default model and with `model=perturbed` (its default kind and level);
- `sample-paper-perturbed`, `sample-emage2024-perturbed`, `sample-emage2025-perturbed`: the real
  BEAT2 sample (../shared/data/beat2-sample; skipped, in one line, where absent) as a BEAT2
  folder: the recording as the test sequence, clips of it as the train and val splits
  (statistics, encoder training; SC's encoder is trained by `task=train_encoder` through the same
  API), and made-up words and semantic intervals (the sample has none; SC, SRGR and SGP need them
  to have a value). The EMAGE presets run on `dataset=beat2_speaker2` (their pinned split) with
  EMAGE's BC speed normaliser from ../shared/data/emage and seeded encoder weights in the released
  layout (the real file is not here; `metrics=paper` uses it too on real BEAT2, for FGD, Density
  and Coverage): the same numbers on both sides matter, not their meaning.

The numbers come from the config's own fixed seeds (run seed, `model.seed`, mini-BEAT2's seed), with
`--threads` torch threads (default 1: a different thread count may change the last bits of sums).
Every number of each run's results.json file (as written, not the document `evaluate` returns) is
kept under its flattened key (`metrics.fgd`, `intervals.fgd.0`, `per_sequence.<sequence id>.mjd`,
`options.bc.joints.0`, ...), and the text of `skipped` and `caveats` (the work folder replaced by
`<work>`); other text (names, paths, hashes) is not compared. Left out as run-specific or inputs,
not results: `timings` (wall-clock seconds), `versions` (package versions), `config` (the resolved
config: the temporary folders, `threads`; its layout is not a result). Values compare as their JSON
text, so floats compare bit for bit (0.0 and -0.0 differ, 1 and 1.0 differ).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data"
SAMPLE = SHARED / "beat2-sample"
EMAGE_SPEED = SHARED / "emage" / "mean_vel_smplxflame_30.npy"
SEQ = "2_scott_0_1_1"
QUIET = ("logger=none", "trainer.enable_progress_bar=false")
SAMPLE_DATA = ("dataset.root={work}/sample",)
WEIGHTS = "{work}/AESKConv_240_100.bin"  # EMAGE's FGD encoder, seeded (prepare_sample)
EMAGE = (
    "model=perturbed",
    "dataset=beat2_speaker2",
    *SAMPLE_DATA,
    f"metrics.fgd.weights={WEIGHTS}",
    f"metrics.bc.mean_speed_file={EMAGE_SPEED}",
)
#: case name → overrides ({work}: the invocation's work folder)
CASES: dict[str, tuple[str, ...]] = {
    "mini-paper-default": ("metrics=paper",),
    "mini-paper-perturbed": ("metrics=paper", "model=perturbed"),
    "sample-paper-perturbed": (
        "metrics=paper",
        "model=perturbed",
        "dataset=beat2",
        *SAMPLE_DATA,
        *(f"metrics.{m}.weights={WEIGHTS}" for m in ("fgd", "density", "coverage")),
    ),
    "sample-emage2024-perturbed": ("metrics=emage2024", *EMAGE),
    "sample-emage2025-perturbed": ("metrics=emage2025", *EMAGE),
}
#: results.json fields that are run-specific or inputs (module docstring)
EXCLUDED = ("timings", "versions", "config")
#: fields kept as text, not only their numbers
TEXTS = ("skipped", "caveats")


def flatten(doc: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """(dotted key, value) of every leaf of `doc`; per_sequence rows keyed by their sequence id
    (and sample, where several)."""
    if isinstance(doc, dict):
        for key, value in doc.items():
            yield from flatten(value, f"{prefix}{key}.")
    elif isinstance(doc, list):
        for i, value in enumerate(doc):
            yield from flatten(value, f"{prefix}{row_key(value, i)}.")
    else:
        yield prefix[:-1], doc


def row_key(value: Any, index: int) -> str:
    """A per_sequence row's sequence id (with its sample), else the list index."""
    if isinstance(value, dict) and "sequence_id" in value:
        sample = value.get("sample")
        return str(value["sequence_id"]) + ("" if sample is None else f"#{sample}")
    return str(index)


def numbers(doc: dict, work: str) -> dict[str, Any]:
    """Every number, boolean and null of a results.json document under its flattened key, and the
    text of its `TEXTS` fields (the work folder as `<work>`), without the `EXCLUDED` fields."""
    out = {}
    for key, value in flatten({k: v for k, v in doc.items() if k not in EXCLUDED}):
        if not isinstance(value, str):
            out[key] = value
        elif key.split(".")[0] in TEXTS:
            out[key] = value.replace(work, "<work>")
    return out


def differences(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """One line per key whose value differs (as JSON text: floats bit for bit) or that only one
    side has."""
    lines = []
    for key in sorted(set(old) | set(new)):
        a = json.dumps(old[key]) if key in old else "absent"
        b = json.dumps(new[key]) if key in new else "absent"
        if a != b:
            lines.append(f"{key}: {a} -> {b}")
    return lines


def report(old: dict[str, dict], new: dict[str, dict], shown: int = 20) -> tuple[str, bool]:
    """The table of cases (identical, or the differing keys with old -> new) and whether any
    differs; a case only one side has is a difference."""
    lines, failed = [], False
    width = max(map(len, old | new), default=0)
    for case in sorted(old.keys() | new.keys()):
        if case not in old:
            lines.append(f"{case:<{width}}  not in the record")
            failed = True
            continue
        diffs = differences(old[case], new.get(case, {}))
        failed |= bool(diffs)
        n = len(old[case])
        verdict = f"{len(diffs)} of {n} values differ" if diffs else f"identical ({n} values)"
        lines.append(f"{case:<{width}}  {verdict}")
        lines += [f"    {d}" for d in diffs[:shown]]
        if len(diffs) > shown:
            lines.append(f"    ... and {len(diffs) - shown} more")
    return "\n".join(lines), failed


def sample_layout(root: Path) -> None:
    """The real sample as the test sequence, and clips of it under other ids as the train and val
    splits (dataset statistics, encoder training)."""
    for folder in ("smplxflame_30", "wave16k", "textgrid", "sem"):
        (root / folder).mkdir(parents=True)
    clips = {"2_scott_0_2_2": (0, 900), "2_scott_0_3_3": (600, 1500), "2_scott_0_4_4": (1000, 1906)}
    splits = {SEQ: "test", "2_scott_0_2_2": "train", "2_scott_0_3_3": "train"}
    splits["2_scott_0_4_4"] = "val"
    for seq in splits:
        arrays = dict(np.load(SAMPLE / f"{SEQ}.npz", allow_pickle=False))
        if seq in clips:  # a different clip of the same recording, so the splits differ
            start, stop = clips[seq]
            for key in ("poses", "trans", "expressions"):
                arrays[key] = arrays[key][start:stop]
        np.savez(root / "smplxflame_30" / f"{seq}.npz", **arrays)
        annotate(root, seq, len(arrays["poses"]) / 30.0)
        shutil.copy(SAMPLE / f"{SEQ}.wav", root / "wave16k" / f"{seq}.wav")
    rows = ["id,type", *(f"{seq},{split}" for seq, split in splits.items())]
    (root / "train_test_split.csv").write_text("\n".join(rows) + "\n")


def annotate(root: Path, seq: str, duration: float) -> None:
    """Made-up words (one every 0.4 s) and semantic intervals (one every 6 s, the four classes in
    turn)."""
    from gesturebench.data.annotations_io import write_sem, write_textgrid_words
    from gesturebench.data.records import SemInterval, Word

    vocab = ("we", "built", "this", "idea", "around", "a", "box", "there", "future", "never")
    words = [Word(vocab[i % 10], 0.4 * i, 0.4 * i + 0.3) for i in range(int(duration / 0.4))]
    write_textgrid_words(root / "textgrid" / f"{seq}.TextGrid", words, duration)
    classes = ("iconic", "beat", "deictic", "metaphoric")
    sem = [
        SemInterval(
            f"0{k % 4 + 1}_{classes[k % 4]}", 6.0 * k + 1, 6.0 * k + 2.2, 0.8, vocab[k % 10]
        )
        for k in range(int((duration - 3.0) / 6.0))
    ]
    write_sem(root / "sem" / f"{seq}.txt", sem)


def prepare_sample(work: Path, run: Callable[..., Path]) -> None:
    """The sample's BEAT2 folder, its SC encoder and the seeded EMAGE encoder file in `work` (the
    paper's FGD, Density and Coverage use EMAGE's encoder on real BEAT2, not motion_ae)."""
    import torch

    from tests.emage_fgd_support import released_state

    sample_layout(work / "sample")
    run("train_encoder", "task=train_encoder", "encoder=text_motion", "dataset=beat2", *SAMPLE_DATA)
    torch.save({"model_state": released_state(7)}, WEIGHTS.format(work=work))


def runner(work: Path, threads: int) -> Callable[..., Path]:
    """`run(name, *overrides)`: `gesturebench.evaluate` on them in `work`, its printout on stderr
    (stdout keeps only the comparison); its run folder."""
    import gesturebench

    def run(name: str, *overrides: str) -> Path:
        folder = work / "runs" / name
        args = [o.format(work=work) for o in overrides]
        with contextlib.redirect_stdout(sys.stderr):
            gesturebench.evaluate(
                *args, *QUIET, f"paths.root={work}", f"threads={threads}", f"hydra.run.dir={folder}"
            )
        return folder

    return run


def needs(name: str) -> list[Path]:
    """The shared files a case reads."""
    return [SAMPLE / f"{SEQ}.npz", EMAGE_SPEED] if name.startswith("sample-") else []


def available(names: list[str]) -> list[str]:
    """`names` without the cases whose shared files are absent (said in one line)."""
    missing = {name: [f for f in needs(name) if not f.is_file()] for name in names}
    skipped = [name for name in names if missing[name]]
    if skipped:
        first = next(f for name in skipped for f in missing[name])
        print(f"skipping {', '.join(skipped)}: {first} not found")
    return [name for name in names if not missing[name]]


def run_cases(names: list[str], threads: int) -> dict[str, dict]:
    """The flattened numbers of each named case whose shared files are here, read from the
    results.json its run wrote."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    names = available(names)
    out = {}
    with tempfile.TemporaryDirectory(prefix="same_results-") as tmp:
        work = Path(tmp)
        run = runner(work, threads)
        if any(n.startswith("sample-") for n in names):
            prepare_sample(work, run)
        for name in names:
            folder = run(name, *CASES[name], "task.render_clips=0")
            out[name] = numbers(json.loads((folder / "results.json").read_text()), str(work))
            print(f"{name}: {len(out[name])} values", file=sys.stderr)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=("record", "compare"))
    parser.add_argument("file", type=Path, help="the recorded numbers (JSON)")
    parser.add_argument("--cases", nargs="+", choices=list(CASES), default=list(CASES))
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(REPO))  # tests.emage_fgd_support
    if args.action == "compare":
        old = json.loads(args.file.read_text())
        new = run_cases(args.cases, args.threads)
        table, failed = report({c: old[c] for c in new if c in old}, new)
        print(table)
        return 1 if failed else 0
    recorded = run_cases(args.cases, args.threads)
    args.file.write_text(json.dumps(recorded, indent=1) + "\n")
    print(f"recorded {', '.join(recorded)} in {args.file}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
