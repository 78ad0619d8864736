"""Fault script: tries, as a hostile user and a crashing machine would, what must not give a wrong
number or lose a result, against a fresh temporary folder, and prints `held` or `failed` per case.

    python benchmarks/faults.py [--keep]

A case is a function `(workdir) -> None | str`: None when the fault was handled as it must be,
else why not. `CASES` lists them; a module `faults_server.py` beside this one, where present, adds
its own `CASES` (the study server's). Every case shares one workdir (the mini-BEAT2 data and
caches under it) and makes its own folders there.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from datetime import datetime
from importlib.metadata import version
from pathlib import Path

import tomllib
from packaging.requirements import Requirement
from packaging.version import Version

REPO = Path(__file__).resolve().parents[1]
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


def launch(workdir: Path, *args: str) -> subprocess.Popen:
    """`launch.py ARGS` started in `workdir` (its outputs/, data/, .cache/ and checkpoints/ there),
    quiet and offline, on the small mini-BEAT2 test split with the fast metrics."""
    cmd = [
        sys.executable,
        str(REPO / "launch.py"),
        *(a for a in args if a.startswith("-")),  # Hydra's flags before the overrides
        "logger=none",
        "metrics=fast",
        "task.render_clips=0",
        "dataset.max_sequences=2",
        "trainer.enable_progress_bar=false",
        "threads=1",
        *(a for a in args if not a.startswith("-")),
    ]
    env = {k: v for k, v in os.environ.items() if k != "HYDRA_FULL_ERROR"}
    env["WANDB_MODE"] = "offline"
    return subprocess.Popen(
        cmd, cwd=workdir, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def finished(proc: subprocess.Popen) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=900)
    return proc.returncode, out, err


def mini_data(workdir: Path) -> Path:
    """mini-BEAT2 under `workdir` (generated once), where `paths.root=workdir` finds it."""
    from gesturebench.synthesis.mini.dataset import ensure_mini_beat2

    return ensure_mini_beat2(workdir / "data" / "mini_beat2_default")


def refused(code: int, err: str, path: Path) -> str | None:
    """None when a run was refused with exit 2 and one `error:` line naming `path`."""
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    if code != 2 or len(lines) != 1 or str(path) not in lines[0] or "Traceback" in err:
        return f"exit {code}, stderr: {err.strip()[-300:]}"
    return None


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


CASES: list[tuple[str, Case]] = [
    ("same-second run folders", same_second_runs),
    ("audio shorter than motion", short_audio),
    ("wav header claiming 2 GB", lying_wav_header),
    ("damaged BC caches", damaged_caches),
    ("sweep job raising", failing_sweep_job),
    ("bad override values", bad_override_values),
    ("dependency floors", dependency_floors),
]

_server = Path(__file__).with_name("faults_server.py")
if _server.is_file():
    _spec = importlib.util.spec_from_file_location("faults_server", _server)
    assert _spec is not None and _spec.loader is not None
    _module = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(_module)
    CASES.extend(_module.CASES)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="gesturebench-faults-"))
    print(f"faults, {datetime.now():%Y-%m-%d %H:%M}, in {workdir}", flush=True)
    failed = 0
    for name, case in CASES:
        try:
            reason = case(workdir)
        except Exception as exc:  # a case that crashes is a failure to report, not to stop at
            reason = f"{type(exc).__name__}: {exc}"
        failed += reason is not None
        print(f"{name}: " + ("held" if reason is None else f"failed ({reason})"), flush=True)
    if not args.keep:
        shutil.rmtree(workdir, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
