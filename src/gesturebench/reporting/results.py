"""results.json (`build_results`) and per_sequence.csv, staged and committed with the run folder's
other outputs at once (`runtime.commit`), and read back only where that commit verifies."""

from __future__ import annotations

import hashlib
import json
import logging
import platform
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import pandas as pd

from gesturebench.runtime.atomic import write_atomic
from gesturebench.runtime.commit import PENDING, verified

if TYPE_CHECKING:
    from gesturebench.metrics.base import GestureMetric
    from gesturebench.models.base import GestureModel

#: The paper's metric keys (docs/design.md, results.json): results.json lists each, computed or
#: not.
PAPER_METRICS = (
    "fgd",
    "density",
    "coverage",
    "diversity",
    "chamfer",
    "hausdorff",
    "mjd",
    "pck",
    "dice",
    "foot_contact",
    "ldlj_rel",
    "bc",
    "srgr",
    "sc",
    "sgp",
)
#: How the tables mark a headline metric's direction (results.json `directions`).
ARROWS = {"lower": "↓", "higher": "↑", "zero": "→0"}
RESULTS_FILE = "results.json"
PER_SEQUENCE_FILE = "per_sequence.csv"
ERROR_FILE = "error.json"
#: the config keys that do not change results (resume, logger, the study server's database, how
#: results are written for reading)
UNHASHED = ("resume", "logger", "study_server", "report")
#: A table row's `status`: a run that wrote its results, a job that failed (its error.json), a
#: results.json that could not be read (`read_run_file`).
OK, FAILED, UNREADABLE = "ok", "failed", "unreadable"

log = logging.getLogger(__name__)


def json_text(obj: Any) -> str:
    return json.dumps(obj, indent=2, sort_keys=False, default=str, allow_nan=False) + "\n"


def write_json(path: str | Path, obj: Any) -> None:
    write_atomic(path, json_text(obj))


def config_hash(config: dict) -> str:
    """Hash of a resolved config without the `UNHASHED` keys."""
    relevant = {k: v for k, v in config.items() if k not in UNHASHED}
    return hashlib.sha256(json.dumps(relevant, sort_keys=True, default=str).encode()).hexdigest()


def stage_results(stage: Path, results: dict, per_sequence: bool = True) -> None:
    """results.json (and per_sequence.csv) of `results` into the staging folder `stage`
    (`runtime.commit.staged`)."""
    if per_sequence:
        frame = pd.DataFrame(results["per_sequence"])
        (stage / PER_SEQUENCE_FILE).write_text(frame.to_csv(index=False))
    (stage / RESULTS_FILE).write_text(json_text(results))


def read_results(path: str | Path) -> dict | None:
    """The results document in file `path` where its run folder's commit verifies it
    (`runtime.commit.verified`), else None; `OSError` or `ValueError` where there is none or it is
    not JSON."""
    path = Path(path)
    data = verified(path.parent, path.name)
    return None if data is None else json.loads(data)


class RunFile(NamedTuple):
    """A results.json as the tables and the API read it (`read_run_file`): its `doc` where it was
    read, else the `problem` that kept it from being read."""

    path: Path
    doc: dict | None
    problem: str | None


def read_run_file(path: str | Path) -> RunFile:
    """The committed results.json `path` (`read_results`) or, where it cannot be taken, why: it
    cannot be read, its run's commit is still pending, it was changed after its run (its SHA-256
    is not the one manifest.json lists), or it is not a JSON object. The one reader of run folders
    of the sweep summary, the leaderboard and `gesturebench.load_results` (docs/outputs.md,
    "Unreadable results")."""
    path = Path(path)
    try:
        doc = read_results(path)
    except OSError as error:
        return RunFile(path, None, f"cannot be read ({error.strerror or error})")
    except ValueError as error:
        return RunFile(path, None, f"not JSON ({error})")
    if doc is None:
        pending = (path.parent / PENDING).exists()
        why = (
            f"its run's commit is still pending ({PENDING}/ in its folder)"
            if pending
            else "changed after its run (its SHA-256 is not the one manifest.json lists)"
        )
        return RunFile(path, None, why)
    if not isinstance(doc, dict):
        return RunFile(path, None, f"not a JSON object (a {type(doc).__name__})")
    return RunFile(path, doc, None)


def results_files(root: str | Path) -> list[Path]:
    """The results.json files at or below `root` (a results.json itself, a run folder or any
    folder), sorted; none where `root` does not exist."""
    root = Path(root)
    if root.is_file():
        return [root]
    return sorted(root.rglob(RESULTS_FILE)) if root.is_dir() else []


def scan_results(roots: list[str | Path] | tuple[str | Path, ...]) -> list[RunFile]:
    """Every results.json at or below `roots`, read (`read_run_file`); each one that could not be
    read is named in a warning line (the file and the problem) and returned with its `problem`,
    for its caller to mark its row `UNREADABLE` (`unreadable_row`), never skipped silently."""
    files = [read_run_file(path) for root in roots for path in results_files(root)]
    for file in files:
        if file.problem is not None:
            log.warning("%s: %s; marked %s", file.path, file.problem, UNREADABLE)
    return files


def unreadable_row(file: RunFile) -> dict:
    """A table row for a results.json that could not be read: status `UNREADABLE`, the problem
    under `error`, its folder under `run`, no metric value; the keys of a results.json row, so that
    every table writer can print it."""
    return {
        "status": UNREADABLE,
        "error": f"{file.path}: {file.problem}",
        "run": str(file.path.parent),
        "model": "?",
        "dataset": "?",
        "preset": "?",
        "metrics": {},
        "skipped": {},
        "directions": {},
    }


def load_complete(run_dir: str | Path, expected_hash: str) -> dict | None:
    """The run folder's results.json if it is committed, complete and was made with the same
    config, else None."""
    try:
        results = read_results(Path(run_dir) / RESULTS_FILE)
    except (OSError, ValueError):
        return None
    ok = results and results.get("complete") and results.get("config_hash") == expected_hash
    return results if ok else None


def config_differences(old: dict, new: dict, limit: int = 4) -> tuple[str, str]:
    """Where two resolved configs differ (the `UNHASHED` keys aside), as each side's `key=value`
    list, a config group whose `name` differs (model, dataset) as `group=name`; at most `limit`
    keys, then how many more."""
    flat_old, flat_new = _flat(old), _flat(new)
    shown: dict[str, tuple[Any, Any]] = {}
    for key in {**flat_new, **flat_old}:
        group = key.split(".")[0]
        pair = (flat_old.get(key, _UNSET), flat_new.get(key, _UNSET))
        if group in UNHASHED or pair[0] == pair[1]:
            continue
        names = (_name(old, group), _name(new, group))
        if None not in names and names[0] != names[1]:
            shown.setdefault(group, names)
        else:
            shown[key] = pair
    items = list(shown.items())[:limit]
    more = f", and {len(shown) - limit} more" if len(shown) > limit else ""
    old_side, new_side = (
        ", ".join(f"{key}={_short(pair[side])}" for key, pair in items) + more for side in (0, 1)
    )
    return old_side, new_side


def versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for dist in (
        "gesturebench",
        "torch",
        "pytorch-lightning",
        "torchmetrics",
        "smplx",
        "numpy",
        "librosa",
        "hydra-core",
    ):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "not installed"
    return out


def finite_or_none(value: float | None) -> float | None:
    return (
        None if value is None or value != value or value in (float("inf"), float("-inf")) else value
    )


def build_results(
    config: dict,
    chash: str,
    dataset_name: str,
    preset: str,
    sweep_id: str | None,
    dataset: Any,
    model: GestureModel,
    metrics: dict[str, GestureMetric],
    raw: dict,
    protocol: dict | None = None,
) -> dict:
    """The results.json document (docs/design.md), with every paper metric key present; `config`:
    the resolved config it records (its hash `chash`), `preset`: the `metrics` choice, `sweep_id`:
    the id of the multirun of the job (None outside one), `dataset`: the records scored,
    `protocol`: the preset's checked pin (`protocol.protocol_check`), None without one.
    `self_compared`: the values that have a number although the model's notes (`skip_notes`, also
    under `skipped`) say they partly compare the reference with itself (the tables mark them)."""
    values = {k: finite_or_none(v) for k, v in raw["metrics"].items()}
    skipped = dict(raw["skipped"])
    for key in PAPER_METRICS:
        if key not in values:
            values[key] = None
            skipped[key] = f"not computed: no metric named {key!r} in metrics={preset}"
    for key, value in values.items():
        if value is None and key not in skipped:
            skipped[key] = "the metric returned no finite value"
    self_compared = {}
    for key, note in model.skip_notes(metrics.values()).items():
        skipped[key] = f"{skipped[key]}; {note}" if key in skipped else note
        if values.get(key) is not None:
            self_compared[key] = note
    directions = {n: m.direction for m in metrics.values() for n in m.value_names}
    ids = dataset.ids
    per_sequence = [
        {"sequence_id": ids[row["index"]], **{k: finite_or_none(v) for k, v in row.items()}}
        for row in raw["per_sequence"]
    ]
    encoders = {}
    for m in metrics.values():
        encoders.update(m.provenance())
    from gesturebench.reporting.inputs import input_hashes  # imports torch: not at module level

    return {
        "task": "evaluate",
        "model": model.name,
        "model_info": model.describe(),
        "dataset": dataset_name,
        "preset": preset,
        "protocol": protocol,
        "protocol_mismatch": (protocol or {}).get("differences") or None,
        "metrics": values,
        "display": display_values(metrics, values),
        "directions": directions,
        "skipped": skipped,
        "caveats": raw.get("caveats") or {},
        "self_compared": self_compared,
        "notes": {m.name: about for m in metrics.values() if (about := m.note())},
        "intervals": {k: v for k, v in raw["intervals"].items() if values.get(k) is not None},
        "replicates": {k: v for k, v in raw["replicates"].items() if values.get(k) is not None},
        "per_sequence": per_sequence,
        **({"samples": raw["samples"]} if raw.get("samples") else {}),
        "encoders": encoders,
        "inputs": input_hashes(config, dataset),
        "options": {m.name: m.options() for m in metrics.values()},
        "timings": {stage: round(seconds, 4) for stage, seconds in raw["timings"].items()},
        "config": config,
        "versions": versions(),
        "config_hash": chash,
        "sweep_id": sweep_id,
        "complete": True,
    }


def display_values(metrics: dict[str, GestureMetric], values: dict) -> dict:
    """The values of the metrics that have a `display_scale`, as a publication prints them:
    {value name: {"value": value / scale, "scale": scale}} (None values stay None)."""
    out = {}
    for m in metrics.values():
        if m.display_scale is None:
            continue
        for name in m.value_names:
            value = values.get(name)
            shown = None if value is None else value / m.display_scale
            out[name] = {"value": shown, "scale": m.display_scale}
    return out


#: a key one config has and the other has not
_UNSET = "<unset>"


def _flat(config: dict, prefix: str = "") -> dict[str, Any]:
    """{dotted key: leaf value} of a nested config."""
    out: dict[str, Any] = {}
    for key, value in config.items():
        if isinstance(value, dict) and value:
            out.update(_flat(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def _name(config: dict, group: str) -> Any:
    node = config.get(group)
    return node.get("name") if isinstance(node, dict) else None


def _short(value: Any, width: int = 40) -> str:
    text = str(value)
    return text if len(text) <= width else text[: width - 1] + "…"
