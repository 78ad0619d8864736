"""Fault script: tries, as a hostile user and a crashing machine would, what must not give a wrong
number or lose a result, against a fresh temporary folder, and prints `held` or `failed` per case,
then how many cases of each class were tried and held.

    python benchmarks/faults.py [--keep] [--only CLASS]

A case is a function `(workdir) -> None | str`: None when the fault was handled as it must be,
else why not. `CASES` lists (class, name, case): this module's, those of `faults_boundaries.py`
(the boundaries' classes) and `faults_server.py` (the study server's). Every case shares one
workdir (the mini-BEAT2 data and caches under it) and makes its own folders there.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import shutil
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from datetime import datetime
from importlib.metadata import version
from pathlib import Path

import tomllib
from packaging.requirements import Requirement
from packaging.version import Version

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fault_support import REPO, finished, launch, mini_data, refused

Case = Callable[[Path], "str | None"]
#: the releases with the known advisories fixed (pyproject's floors must not go below them)
FIXED = {
    "torch": "2.13",
    "pillow": "12.3",
    "requests": "2.33",
    "urllib3": "2.7",
    "starlette": "1.3.1",
    "h11": "0.16",
    "jinja2": "3.1.6",
    "python-multipart": "0.0.32",
}


def same_second_runs(workdir: Path) -> str | None:
    """Two runs started together keep a run folder, and results, each. Their folders are named by
    the default's rule with the time fixed, so that they collide however slowly each starts."""
    mini_data(workdir)
    same = "hydra.run.dir=${gb_fresh_dir:outputs/evaluate/same-second}"
    procs = [
        launch(workdir, "model=perturbed", f"model.level={level}", same) for level in (0.1, 0.3)
    ]
    done = [finished(p) for p in procs]
    if any(code for code, _, _ in done):
        return f"a run failed: {[err.strip()[-200:] for _, _, err in done]}"
    names = {
        json.loads(p.read_text())["model"] for p in (workdir / "outputs").rglob("results.json")
    }
    wanted = {"perturbed_rotation_noise_0.1", "perturbed_rotation_noise_0.3"}
    return None if wanted <= names else f"results kept: {sorted(names)}"


def short_audio(workdir: Path) -> str | None:
    """A 0.1 s wav under seconds of motion is refused naming the file."""
    from gesturebench.data.audio import load_audio, write_wav

    root = workdir / "short_audio"
    shutil.copytree(mini_data(workdir), root)
    wav = next(iter(sorted((root / "wave16k").glob("*.wav"))))
    write_wav(wav, load_audio(wav)[:1600])
    (root / "train_test_split.csv").write_text(f"id,type\n{wav.stem},test\n")
    code, _, err = finished(launch(workdir, f"dataset.root={root}"))
    return refused(code, err, wav)


def lying_wav_header(workdir: Path) -> str | None:
    """A wav whose header claims 2 GB of its 1 s is refused naming the file."""
    root = workdir / "lying_header"
    shutil.copytree(mini_data(workdir), root)
    wav = next(iter(sorted((root / "wave16k").glob("*.wav"))))
    raw = bytearray(wav.read_bytes())
    at = raw.index(b"data") + 4
    raw[at : at + 4] = (2_000_000_000).to_bytes(4, "little")
    wav.write_bytes(bytes(raw))
    (root / "train_test_split.csv").write_text(f"id,type\n{wav.stem},test\n")
    code, _, err = finished(launch(workdir, f"dataset.root={root}"))
    return refused(code, err, wav)


def damaged_caches(workdir: Path) -> str | None:
    """BC's cached onsets and speed statistics truncated: the rerun recomputes the same BC."""
    mini_data(workdir)
    bc = ("+metrics.bc._target_=gesturebench.metrics.bc.BeatConsistency", "+metrics.bc.name=bc")
    values = []
    for attempt in range(2):
        run = workdir / "caches" / str(attempt)
        code, _, err = finished(launch(workdir, *bc, f"hydra.run.dir={run}"))
        if code:
            return f"run {attempt} exit {code}: {err.strip()[-300:]}"
        values.append(json.loads((run / "results.json").read_text())["metrics"]["bc"])
        if attempt:
            break
        for entry in [*workdir.glob(".cache/*/onsets/*.npy"), *workdir.glob(".cache/*/bc_*.json")]:
            entry.write_bytes(entry.read_bytes()[: entry.stat().st_size // 2])
    aside = list(workdir.glob(".cache/**/*.corrupt"))
    if values[0] != values[1] or not aside:
        return f"BC {values[0]} then {values[1]}; {len(aside)} entries set aside"
    return None


def failing_sweep_job(workdir: Path) -> str | None:
    """A sweep job raising an unexpected error: its error.json and the summary are written."""
    mini_data(workdir)
    sweep = workdir / "sweep"
    code, _, _ = finished(
        launch(workdir, "-m", "model=random_clip", "model.seed=0,-1", f"hydra.sweep.dir={sweep}")
    )
    errors = list(sweep.glob("*/error.json"))
    if code == 0 or len(errors) != 1 or not (sweep / "summary.csv").is_file():
        return (
            f"exit {code}, {len(errors)} error.json, summary: {(sweep / 'summary.csv').is_file()}"
        )
    if not (errors[0].parent / "traceback.txt").is_file():
        return "no traceback.txt beside error.json"
    return None


def bad_override_values(workdir: Path) -> str | None:
    """`model.level=abc` and `model=grond_truth` refused at once, in one line each."""
    code, _, err = finished(launch(workdir, "model=perturbed", "model.level=abc"))
    if code == 0 or "numpy" in err or "model.level" not in err:
        return f"model.level=abc: exit {code}, {err.strip()[-200:]}"
    code, _, err = finished(launch(workdir, "model=grond_truth"))
    if code != 2 or len(err.strip().splitlines()) != 1 or "ground_truth" not in err:
        return f"model=grond_truth: exit {code}, {err.strip()[-200:]}"
    return None


def dependency_floors(workdir: Path) -> str | None:
    """pyproject's floors at or above the fixed releases; the installed versions satisfy them and
    constraints.txt."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    floors = {Requirement(r).name.lower(): Requirement(r) for r in project["dependencies"]}
    pinned = {
        Requirement(line).name.lower(): Requirement(line)
        for line in (REPO / "constraints.txt").read_text().splitlines()
        if line and not line.startswith("#")
    }
    for name, fixed in FIXED.items():
        req = floors.get(name)
        if req is None or Version(fixed) not in req.specifier or Version("0") in req.specifier:
            return f"{name}: pyproject says {req}, the fixed release is {fixed}"
        lows = [Version(s.version) for s in req.specifier if s.operator == ">="]
        if not lows or min(lows) < Version(fixed):
            return f"{name}: floor {req.specifier} below {fixed}"
        installed = Version(version(name))
        if installed not in req.specifier or installed not in pinned[name].specifier:
            return f"{name} {installed}: outside {req.specifier} or constraints {pinned[name]}"
    return None


CASES: list[tuple[str, str, Case]] = [
    ("run folders", "same-second run folders", same_second_runs),
    ("audio", "audio shorter than motion", short_audio),
    ("audio", "wav header claiming 2 GB", lying_wav_header),
    ("caches", "damaged BC caches", damaged_caches),
    ("sweeps", "sweep job raising", failing_sweep_job),
    ("keys and overrides", "bad override values", bad_override_values),
    ("dependencies", "dependency floors", dependency_floors),
]


def _cases_of(module: str) -> list:
    """`CASES` of the module `module`.py beside this one."""
    spec = importlib.util.spec_from_file_location(module, Path(__file__).with_name(f"{module}.py"))
    assert spec is not None and spec.loader is not None
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    return loaded.CASES


CASES.extend(_cases_of("faults_boundaries"))
CASES.extend(
    ("study server", name.removeprefix("study server: "), case)
    for name, case in _cases_of("faults_server")
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    parser.add_argument("--only", action="append", help="run only this class (repeatable)")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="gesturebench-faults-"))
    print(f"faults, {datetime.now():%Y-%m-%d %H:%M}, in {workdir}", flush=True)
    tried: Counter[str] = Counter()
    held: Counter[str] = Counter()
    for group, name, case in CASES:
        if args.only and group not in args.only:
            continue
        try:
            reason = case(workdir)
        except Exception as exc:  # a case that crashes is a failure to report, not to stop at
            reason = f"{type(exc).__name__}: {exc}"
        tried[group] += 1
        held[group] += reason is None
        outcome = "held" if reason is None else f"failed ({reason})"
        print(f"{group}: {name}: {outcome}", flush=True)
    print("\nclass: held / tried")
    for group in tried:
        print(f"  {group}: {held[group]} / {tried[group]}")
    print(f"  all: {sum(held.values())} / {sum(tried.values())}")
    if not args.keep:
        shutil.rmtree(workdir, ignore_errors=True)
    return 1 if held != tried else 0


if __name__ == "__main__":
    sys.exit(main())
