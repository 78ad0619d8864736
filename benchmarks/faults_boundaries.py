"""The fault cases of the harness's boundaries, one class per kind of input: damaged-but-parsable
caches, absurd magnitudes, silent speech, signals, foreign run folders, a full disk, a read-only
folder, a user YAML with a Python tag, `metrics=none`, NaN weights and mistyped keys. Each case is a
function of the shared work folder returning None when it held, else why not; `CASES` holds
(class, name, case) and `benchmarks/faults.py` runs them.

A mount-based case (full disk, read-only folder) needs root; elsewhere it reports that it was not
tried (counted as tried and not held, so that a run without them is never reported clean).
"""

from __future__ import annotations

import contextlib
import json
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fault_support import (
    REPO,
    WITH_BC,
    dataset_copy,
    finished,
    honest,
    launch,
    metrics_of,
    mini_data,
    refused,
)

from tests.support.kills import killed_at_the_write, leftovers

Case = Callable[[Path], "str | None"]


def _bc_run(workdir: Path, cache: Path, run: Path, *extra: str) -> tuple[int, str, str]:
    args = (*WITH_BC, f"paths.cache={cache}", f"hydra.run.dir={run}", *extra)
    return finished(launch(workdir, *args))


def _poisoned(workdir: Path, name: str, pattern: str, poisons: dict[str, Callable]) -> str | None:
    """A clean BC run, then for each poison every cache entry matching `pattern` (under the case's
    cache folder) rewritten by it, and the run again: the same BC each time, entries set aside."""
    mini_data(workdir)
    cache = workdir / f"cache-{name}"
    code, _, err = _bc_run(workdir, cache, workdir / name / "clean")
    if code:
        return f"clean run: exit {code}, {err.strip()[-300:]}"
    clean = metrics_of(workdir / name / "clean")["bc"]
    for poison, rewrite in poisons.items():
        # the payloads, not their sidecars (`<name>.meta.json`)
        entries = [p for p in sorted(cache.glob(pattern)) if not p.name.endswith(".meta.json")]
        if not entries:
            return f"no cache entry {pattern} after the clean run"
        poisoned = {}
        for entry in entries:
            rewrite(entry)
            poisoned[entry] = entry.read_bytes()
        run = workdir / name / poison
        code, _, err = _bc_run(workdir, cache, run)
        if code:
            return f"{poison}: exit {code}, {err.strip()[-300:]}"
        bc = metrics_of(run)["bc"]
        kept = [e.name for e, data in poisoned.items() if e.is_file() and e.read_bytes() == data]
        if bc != clean or kept:
            return f"{poison}: BC {bc} (clean {clean}), poisoned entries still read: {kept[:3]}"
    return None


def _save_npy(array: np.ndarray) -> Callable[[Path], None]:
    def rewrite(path: Path) -> None:
        with path.open("wb") as f:
            np.save(f, array)

    return rewrite


def poisoned_onsets(workdir: Path) -> str | None:
    """Cached speech onsets replaced by valid .npy files they cannot be: empty, NaN, 2-D."""
    return _poisoned(
        workdir,
        "onsets",
        "**/onsets/*.npy",
        {
            "empty": _save_npy(np.zeros(0)),
            "nan": _save_npy(np.full(12, np.nan)),
            "2-D": _save_npy(np.ones((4, 3))),
        },
    )


def _speeds(scale: float, offset: float = 0.0) -> Callable[[Path], None]:
    def rewrite(path: Path) -> None:
        document = json.loads(path.read_text())
        document["mean_speed"] = [v * scale + offset for v in document["mean_speed"]]
        path.write_text(json.dumps(document))

    return rewrite


def edited_speed_statistics(workdir: Path) -> str | None:
    """BC's cached mean speeds edited to zeros, negatives and ×1000."""
    return _poisoned(
        workdir,
        "speeds",
        "**/bc_mean_speed-*.json",
        {"zeros": _speeds(0.0), "negative": _speeds(-1.0), "x1000": _speeds(1000.0)},
    )


def _model_files(workdir: Path, name: str, scale: dict[str, float]) -> tuple[Path, list[str]]:
    """A `model=precomputed` folder of the two test sequences' reference files, the first one's
    fields multiplied by `scale` (field → factor)."""
    root, ids = dataset_copy(workdir, f"{name}-data")
    out = workdir / name / "motion"
    out.mkdir(parents=True, exist_ok=True)
    for i, sid in enumerate(ids):
        with np.load(root / "smplxflame_30" / f"{sid}.npz") as npz:
            fields = {k: npz[k] for k in npz.files}
        for key, factor in scale.items() if i == 0 else ():
            fields[key] = fields[key] * factor
        np.savez(out / f"{sid}.npz", **fields)
    return root, ids


def absurd_model_output(workdir: Path) -> str | None:
    """A model's poses and, separately, translation at ~1e30 for one of two sequences: refused,
    or that sequence unscored with a reason and the other scored; never a number from it."""
    for field in ("poses", "trans"):
        root, ids = _model_files(workdir, f"absurd-{field}", {field: 1e30})
        run = workdir / f"absurd-{field}" / "run"
        code, _, err = finished(
            launch(
                workdir,
                f"dataset.root={root}",
                "model=precomputed",
                f"model.dir={workdir / f'absurd-{field}' / 'motion'}",
                f"hydra.run.dir={run}",
            )
        )
        why = honest(code, err, run)
        if why:
            return f"{field}: {why}"
        if code == 0:
            rows = json.loads((run / "results.json").read_text())["per_sequence"]
            scored = [r for r in rows if r["sequence_id"] == ids[0] and r.get("mjd") is not None]
            if scored:
                return f"{field}: {ids[0]} scored (mjd {scored[0]['mjd']})"
    return None


def absurd_reference(workdir: Path) -> str | None:
    """A dataset file with its translation at ~1e30: refused naming the file."""
    root, ids = dataset_copy(workdir, "absurd-reference")
    path = root / "smplxflame_30" / f"{ids[0]}.npz"
    with np.load(path) as npz:
        fields = {k: npz[k] for k in npz.files}
    fields["trans"] = fields["trans"] * 1e30
    np.savez(path, **fields)
    code, _, err = finished(
        launch(workdir, f"dataset.root={root}", f"hydra.run.dir={workdir / 'absurd-reference-run'}")
    )
    return refused(code, err, path)


def silent_speech(workdir: Path) -> str | None:
    """One of two sequences' speech replaced by digital silence: BC is the other's alone, the
    silent one unscored with a reason."""
    root, ids = dataset_copy(workdir, "silent")
    wav = root / "wave16k" / f"{ids[0]}.wav"
    from gesturebench.data.audio import load_audio, write_wav

    write_wav(wav, np.zeros_like(load_audio(wav)))
    run = workdir / "silent-run"
    code, _, err = _bc_run(workdir, workdir / "cache-silent", run, f"dataset.root={root}")
    why = honest(code, err, run)
    if why or code:
        return why or f"exit {code}: {err.strip()[-300:]}"
    results = json.loads((run / "results.json").read_text())
    rows = {r["sequence_id"]: r for r in results["per_sequence"]}
    if rows.get(ids[0], {}).get("bc") is not None:
        return f"the silent sequence has BC {rows[ids[0]]['bc']}"
    if results["metrics"]["bc"] != rows[ids[1]]["bc"]:
        return f"BC {results['metrics']['bc']}, the other sequence's {rows[ids[1]]['bc']}"
    if ids[0] not in json.dumps({k: v for k, v in results.items() if k != "per_sequence"}):
        return f"no reason names {ids[0]}"
    return None


def _signalled(workdir: Path, signum: signal.Signals) -> str | None:
    """A run sent `signum` once it is working: non-zero exit, error.json naming the signal, no
    results.json; the same command again finishes."""
    mini_data(workdir)
    run = workdir / f"signal-{signum.name}"
    args = ("model=perturbed", "metrics=paper", f"hydra.run.dir={run}")
    proc = launch(workdir, *args)
    deadline = time.monotonic() + 300
    while not (run / ".hydra" / "config.yaml").is_file() and proc.poll() is None:
        if time.monotonic() > deadline:
            proc.kill()
            return "the run never started"
        time.sleep(0.2)
    time.sleep(2.0)
    if proc.poll() is not None:
        return f"the run ended (exit {proc.returncode}) before the signal"
    proc.send_signal(signum)
    code, _, _ = finished(proc)
    error = run / "error.json"
    if code == 0 or not error.is_file() or signum.name not in error.read_text():
        return f"exit {code}, error.json: {error.read_text()[:200] if error.is_file() else None}"
    if (run / "results.json").is_file():
        return "results.json written by the interrupted run"
    code, _, _ = finished(launch(workdir, *args))
    return None if code == 0 and (run / "results.json").is_file() else f"rerun exit {code}"


def sigterm(workdir: Path) -> str | None:
    return _signalled(workdir, signal.SIGTERM)


def sighup(workdir: Path) -> str | None:
    return _signalled(workdir, signal.SIGHUP)


def foreign_run_folder(workdir: Path) -> str | None:
    """A run folder named on purpose that holds another configuration's results: refused in one
    line, the first results kept."""
    mini_data(workdir)
    run = workdir / "named"
    code, _, err = finished(launch(workdir, "model=ground_truth", f"hydra.run.dir={run}"))
    if code:
        return f"first run: exit {code}"
    first = (run / "results.json").read_bytes()
    code, _, err = finished(launch(workdir, "model=mean_pose", f"hydra.run.dir={run}"))
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    if code != 2 or len(lines) != 1 or "Traceback" in err:
        return f"second run: exit {code}, {err.strip()[-300:]}"
    return None if (run / "results.json").read_bytes() == first else "results.json replaced"


def killed_results_write(workdir: Path) -> str | None:
    """SIGKILL half-way through the results write of a run into a folder holding the same
    configuration's finished run: its results.json and per_sequence.csv kept whole, no temporary
    file once the next run has started."""
    mini_data(workdir)
    run = workdir / "killed"
    code, _, err = finished(launch(workdir, f"hydra.run.dir={run}"))
    if code:
        return f"first run: exit {code}"
    before = {n: (run / n).read_bytes() for n in ("results.json", "per_sequence.csv")}
    program = ("-c", killed_at_the_write(REPO / "launch.py"))
    code, _, err = finished(launch(workdir, f"hydra.run.dir={run}", "resume=false", python=program))
    if code != -signal.SIGKILL:
        return f"killed run: exit {code}, {err.strip()[-300:]}"
    if any((run / name).read_bytes() != data for name, data in before.items()):
        return "results.json or per_sequence.csv replaced"
    code, _, err = finished(launch(workdir, f"hydra.run.dir={run}"))
    if code:
        return f"next run: exit {code}, {err.strip()[-300:]}"
    left = leftovers(run)
    return f"left after the next run: {left}" if left else None


@contextlib.contextmanager
def _mounted(size: str, read_only: bool = False) -> Iterator[Path | None]:
    """A tmpfs of `size` (read-only when asked), or None where mounting is not allowed."""
    where = Path(tempfile.mkdtemp(prefix="gesturebench-mount-"))
    mount = ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)]
    if subprocess.run(mount, capture_output=True).returncode:
        yield None
        return
    try:
        if read_only:
            subprocess.run(["mount", "-o", "remount,ro", str(where)], check=True)
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)
        shutil.rmtree(where, ignore_errors=True)


def full_disk(workdir: Path) -> str | None:
    """A run folder on a nearly full file system: one line naming the folder, no traceback."""
    mini_data(workdir)
    with _mounted("256k") as disk:
        if disk is None:
            return "not tried: mounting a tmpfs needs root"
        (disk / "filler").write_bytes(b"\0" * (256 * 1024 - 24 * 1024))
        run = disk / "run"
        code, _, err = finished(launch(workdir, f"hydra.run.dir={run}"))
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    if code != 2 or len(lines) != 1 or "Traceback" in err or str(disk) not in lines[0]:
        return f"exit {code}, stderr: {err.strip()[-300:]}"
    return None


def read_only_folder(workdir: Path) -> str | None:
    """A run folder under a read-only file system: one line naming it, exit 2."""
    with _mounted("1m", read_only=True) as disk:
        if disk is None:
            return "not tried: mounting a tmpfs needs root"
        code, _, err = finished(launch(workdir, f"hydra.run.dir={disk / 'run'}"))
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    if code != 2 or len(lines) != 1 or "Traceback" in err or str(disk) not in lines[0]:
        return f"exit {code}, stderr: {err.strip()[-300:]}"
    return None


def yaml_python_tag(workdir: Path) -> str | None:
    """A user's metrics preset carrying a `!!python/object/apply` tag: one line naming the file,
    nothing executed."""
    conf = workdir / "user-conf" / "metrics"
    conf.mkdir(parents=True, exist_ok=True)
    evil = conf / "evil.yaml"
    marker = workdir / "executed"
    evil.write_text(f"mjd: !!python/object/apply:os.system ['touch {marker}']\n")
    code, _, err = finished(
        launch(workdir, f"--config-dir={conf.parent}", "metrics=evil", "dataset.max_sequences=1")
    )
    if marker.exists():
        return "the tag was executed"
    return refused(code, err, evil)


def metrics_none(workdir: Path) -> str | None:
    """`metrics=none` (generate and cache motion only): exit 0, results.json with no values."""
    mini_data(workdir)
    run = workdir / "metrics-none"
    code, _, err = finished(launch(workdir, "metrics=none", f"hydra.run.dir={run}"))
    if code or not (run / "results.json").is_file():
        return f"exit {code}, stderr: {err.strip()[-300:]}"
    values = [v for v in metrics_of(run).values() if v is not None]
    return f"values without metrics: {values}" if values else None


def nan_encoder_weights(workdir: Path) -> str | None:
    """FGD's trained encoder with NaN weights: refused naming the file, or set aside and
    retrained to the same FGD."""
    import torch

    mini_data(workdir)
    fgd = ("+metrics.fgd._target_=gesturebench.metrics.fgd.FGD", "+metrics.fgd.name=fgd")
    code, _, err = finished(launch(workdir, *fgd, f"hydra.run.dir={workdir / 'fgd-clean'}"))
    if code:
        return f"clean run: exit {code}, {err.strip()[-300:]}"
    clean = metrics_of(workdir / "fgd-clean")["fgd"]
    files = sorted((workdir / "checkpoints" / "encoders").glob("motion_ae-*.pt"))
    if not files:
        return "no trained encoder under checkpoints/encoders"
    checkpoint = torch.load(files[0], weights_only=False)
    state = checkpoint.get("state_dict", checkpoint)
    for tensor in state.values():
        if torch.is_tensor(tensor) and tensor.is_floating_point():
            tensor.fill_(float("nan"))
    torch.save(checkpoint, files[0])
    run = workdir / "fgd-nan"
    code, _, err = finished(launch(workdir, *fgd, f"hydra.run.dir={run}"))
    if code == 2:
        return refused(code, err, files[0])
    why = honest(code, err, run)
    if why:
        return why
    fgd_value = metrics_of(run)["fgd"]
    return None if fgd_value == clean else f"FGD {fgd_value} after retraining (clean {clean})"


def mistyped_keys(workdir: Path) -> str | None:
    """`metrics.mjd.nam=x` and `model.dirr=…`: one line with the closest valid key, exit 2."""
    for args, closest in (
        (("metrics.mjd.nam=x",), "name"),
        (("model=precomputed", f"model.dirr={workdir}"), "dir"),
    ):
        code, _, err = finished(launch(workdir, *args))
        lines = [line for line in err.splitlines() if line.startswith("error:")]
        if code != 2 or len(lines) != 1 or closest not in lines[0] or "+" in lines[0]:
            return f"{args[-1]}: exit {code}, {err.strip()[-300:]}"
    return None


CASES: list[tuple[str, str, Case]] = [
    ("caches", "speech onsets empty, NaN, 2-D", poisoned_onsets),
    ("caches", "BC speed statistics zeros, negative, x1000", edited_speed_statistics),
    ("motion magnitudes", "model output at 1e30 (poses, translation)", absurd_model_output),
    ("motion magnitudes", "reference translation at 1e30", absurd_reference),
    ("audio", "one sequence's speech digital silence", silent_speech),
    ("signals", "SIGTERM mid-run", sigterm),
    ("signals", "SIGHUP mid-run", sighup),
    ("run folders", "named folder of another configuration", foreign_run_folder),
    ("run folders", "SIGKILL half-way through the results write", killed_results_write),
    ("disk, folders, YAML", "nearly full disk", full_disk),
    ("disk, folders, YAML", "user YAML with a Python tag", yaml_python_tag),
    ("metrics=none", "generate and cache motion only", metrics_none),
    ("checkpoints", "encoder weights NaN", nan_encoder_weights),
    ("keys and overrides", "mistyped keys", mistyped_keys),
    ("disk, folders, YAML", "read-only run folder", read_only_folder),
]
