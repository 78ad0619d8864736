"""`task=verify task.run=<folder>`: re-run a finished run from what its results.json records and
report, per value, whether the re-run gives it again (docs/outputs.md, "Verifying a run").

For each results.json at or below `run` (a run folder, a sweep's folder, or the file itself):

1. the recorded inputs are checked first (results.json `inputs`: the dataset files of the scored
   sequences and the split file, the body model file), and the recorded config against its
   `config_hash`; an input that is missing or changed means its values cannot be verified: no
   re-run;
2. the recorded resolved config (`config`, with the user's `overrides`) is run by its own task (the
   evaluate task, through the task interface `task(cfg, job)`) in a fresh folder of this task's
   run folder, `rerun/`: no clips, no logger, not resumed, and with a cache of its own
   (`fresh_cache`) so that nothing computed by the verified run is reused;
3. the re-run's learned encoders and released weights are compared with the recorded ones by
   SHA-256 (`encoders`, `model_info`): one that differs means its values cannot be verified;
4. every value is compared: each metric, each bootstrap interval's ends and each per-sequence
   value: `identical` (the same number, bit for bit; both null), `close` (within `rtol`, only
   where one is given), `differs` (both values and the relative difference) or `could not verify`
   (the input that differs, in one line).

The package versions recorded and those of this environment are compared and reported, never
refused. The verified folder is only read. `verify.json` (in this task's run folder) holds every
value's status, recorded and recomputed value and relative difference; a compact table is printed.

Exit status: 0 when every value is identical (or close, with `rtol`); 3 when a value differs; 2
when a value could not be verified (or the results.json cannot be read: one line)."""

from __future__ import annotations

import json
import logging
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from gesturebench.reporting.inputs import changed_inputs
from gesturebench.reporting.results import RESULTS_FILE, config_hash, versions, write_json
from gesturebench.run.config import build
from gesturebench.runtime import status
from gesturebench.runtime.atomic import one_line
from gesturebench.runtime.commit import verified
from gesturebench.runtime.errors import ConfigError, DataError, GestureBenchError
from gesturebench.runtime.threads import thread_budget
from gesturebench.tasks.job import Job

log = logging.getLogger(__name__)

#: a value's status in verify.json
IDENTICAL, CLOSE, DIFFERS, NOT_VERIFIED = "identical", "close", "differs", "could not verify"
#: the exit status of a verification whose values differ (could not verify: 2, as any input error)
EXIT_DIFFERS = 3
EXIT_NOT_VERIFIED = 2
VERIFY_FILE = "verify.json"
#: the folder of this task's run folder that the re-runs go to
RERUN_DIR = "rerun"
#: rows of values that are not identical printed per run (all are in verify.json)
SHOWN = 20


class NotVerified(GestureBenchError):
    """A value could not be verified: an input the run recorded is missing or changed now."""


@dataclass
class VerifyTask:
    """`task=verify` (conf/task/verify.yaml): `run`, the run folder (a sweep's folder: each of its
    jobs; or a results.json) to verify; `overrides`, ``key=value`` settings of the recorded config
    for this machine (e.g. ``dataset.root=...`` where the dataset lies elsewhere now); `rtol`, the
    relative difference up to which a value counts as `close` (0: only identical values pass);
    `fresh_cache`, whether the re-run computes everything again (a cache folder of its own) or
    reads the cache of `paths.cache`."""

    run: str
    name: str = "verify"
    overrides: list[str] = field(default_factory=list)
    rtol: float = 0.0
    fresh_cache: bool = True

    def __call__(self, cfg: DictConfig, job: Job) -> dict:
        target = Path(self.run).expanduser()
        files = results_files(target)
        _check_out_folder(job.run_dir, target)
        several = len(files) > 1
        reports = []
        for path in files:
            where = job.run_dir / RERUN_DIR
            if several:
                where = where / _relative(path.parent, target)
            reports.append(self.verify(path, where, alone=not several))
        code = exit_code(reports)
        doc = {
            "run": str(target),
            "status": {0: IDENTICAL, EXIT_DIFFERS: DIFFERS}.get(code, NOT_VERIFIED),
            "exit_code": code,
            "rtol": self.rtol,
            "runs": reports,
        }
        out = job.run_dir / VERIFY_FILE
        write_json(out, doc)
        print(table(reports, out), flush=True)
        if code == EXIT_NOT_VERIFIED:
            first = next(r for r in reports if r["could_not_verify"])
            more = sum(len(r["could_not_verify"]) for r in reports) - 1
            raise NotVerified(
                f"could not verify {first['results']}: {first['could_not_verify'][0]}"
                + (f" (and {more} more: {out})" if more else f" ({out})")
            )
        if code:
            status.current().mark_failed(code)
        return doc

    def verify(self, path: Path, rerun: Path, alone: bool = True) -> dict:
        """The report of one results.json `path`, re-run in folder `rerun`; `alone`: the only one
        verified (where it cannot be read, its one line is the error; among a sweep's jobs, that
        job's values could not be verified)."""
        report: dict[str, Any] = {
            "results": str(path),
            "rerun": None,
            "could_not_verify": [],
            "notes": [],
            "environment": {},
            "values": [],
        }
        try:
            recorded = read_recorded(path)
        except DataError as err:
            if alone:
                raise
            report["could_not_verify"].append(str(err))
            return _counted(report)
        report["environment"] = environment(recorded.get("versions") or {}, versions())
        if not _committed(path):
            report["notes"].append(
                "results.json is not the one its run committed (manifest.json lists another"
                " SHA-256): it was changed after its run"
            )
        if recorded.get("inputs") is None:
            report["notes"].append(
                "results.json records no input hashes (written before it recorded its inputs):"
                " the dataset and body model files were not checked, only the values"
            )
        cfg = self.rerun_config(recorded, rerun)
        body = OmegaConf.to_container(cfg.body_model, resolve=True) if "body_model" in cfg else {}
        root = OmegaConf.select(cfg, "dataset.root", default="")
        problems = self.check_inputs(recorded, root, body if isinstance(body, dict) else {})
        recomputed: dict = {}
        if not problems:
            report["rerun"] = str(rerun)
            try:
                recomputed = rerun_task(cfg, recorded, rerun)
            except GestureBenchError as err:  # e.g. a weights file missing here: one line
                problems = [f"the re-run stopped: {err}"]
            else:
                problems = changed_weights(recorded, recomputed)
        report["could_not_verify"] = problems
        report["values"] = compare(recorded, recomputed, self.rtol, problems)
        return _counted(report)

    def rerun_config(self, recorded: dict, rerun: Path) -> DictConfig:
        """The recorded config with `overrides`, set up for the re-run: no clips, no logger, not
        resumed, and (with `fresh_cache`) a cache folder of its own in `rerun`."""
        cfg = OmegaConf.create(recorded["config"])
        for item in self.overrides:
            key, sep, _ = str(item).partition("=")
            if not sep or OmegaConf.select(cfg, key.strip(), default=_ABSENT) is _ABSENT:
                raise ConfigError(
                    f"task.overrides: {item!r} is not key=value of a key the recorded config has"
                    f" ({recorded.get('config_hash', '?')[:8]})"
                )
            value = OmegaConf.select(OmegaConf.from_dotlist([str(item)]), key.strip())
            OmegaConf.update(cfg, key.strip(), value, merge=False)
        if OmegaConf.select(cfg, "task.render_clips") is not None:
            cfg.task.render_clips = 0
        cfg.logger = None
        cfg.resume = False
        if self.fresh_cache:
            OmegaConf.update(cfg, "paths.cache", str(rerun / "cache"), merge=False)
        return cfg

    def check_inputs(self, recorded: dict, dataset_root: str, body_model: dict) -> list[str]:
        """Why the values of `recorded` cannot be verified before any re-run: its config does not
        hash to its `config_hash`, or an input it recorded is missing or changed (in the re-run's
        `dataset_root` and the body model file of its resolved `body_model` node)."""
        problems = []
        if config_hash(recorded["config"]) != recorded.get("config_hash"):
            problems.append(
                "its config does not hash to its config_hash: the config was changed after the run"
            )
        inputs = recorded.get("inputs")
        if inputs is None:
            return problems
        return problems + changed_inputs(inputs, dataset_root, body_model)


_ABSENT = object()


def results_files(target: Path) -> list[Path]:
    """The results.json files to verify: `target` itself (a file), the one in folder `target`, or
    every one below it (a sweep's jobs); a `DataError` where there is none."""
    if target.is_file():
        return [target]
    if (target / RESULTS_FILE).exists():
        return [target / RESULTS_FILE]
    found = sorted(target.rglob(RESULTS_FILE)) if target.is_dir() else []
    if not found:
        what = "no such folder" if not target.exists() else f"no {RESULTS_FILE} at or below it"
        raise DataError(target, f"{what}: task.run= names a finished run's folder")
    return found


def read_recorded(path: Path) -> dict:
    """The results.json document at `path`, as it is (an edited file too: its values are compared
    as written); a `DataError` naming it where it cannot be read or is no finished evaluation's."""
    try:
        doc = json.loads(path.read_text())
    except OSError as err:
        raise DataError(path, f"cannot be read ({err.strerror or one_line(err)})") from None
    except ValueError as err:
        raise DataError(path, f"not JSON ({one_line(err)})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("config"), dict):
        raise DataError(path, "records no config: not the results.json of a finished run")
    if doc.get("task") != "evaluate" or not doc.get("complete"):
        raise DataError(
            path, "not the results.json of a complete evaluate run: nothing to re-run from it"
        )
    if not isinstance(doc.get("metrics"), dict):
        raise DataError(path, "records no metrics: nothing to verify")
    return doc


def rerun_task(cfg: DictConfig, recorded: dict, out: Path) -> dict:
    """Run the task of config `cfg` (the recorded config, set up by `VerifyTask.rerun_config`) in
    folder `out`, as a run with the recorded metrics preset; its results document."""
    out.mkdir(parents=True, exist_ok=True)
    job = Job(run_dir=out, choices={"metrics": str(recorded.get("preset") or "?")})
    log.info("re-running %s in %s", recorded.get("model"), out)
    with thread_budget(cfg.get("threads")):
        return build(cfg.task)(cfg, job) or {}


def changed_weights(recorded: dict, recomputed: dict) -> list[str]:
    """One line per learned encoder or released weights file whose SHA-256 the re-run records
    differently (`encoders`, `model_info`)."""
    problems = []
    for part in ("encoders", "model_info"):
        before, after = _hashes(recorded.get(part)), _hashes(recomputed.get(part))
        for key, digest in before.items():
            now = after.get(key)
            if now != digest:
                now_text = now[:12] if isinstance(now, str) else "none"
                problems.append(
                    f"{part}.{key} differs: the re-run read sha256 {now_text}, results.json"
                    f" records {str(digest)[:12]}"
                )
    return problems


def compare(recorded: dict, recomputed: dict, rtol: float, problems: list[str]) -> list[dict]:
    """Every value of `recorded` (and of `recomputed`): name, status, both values and their
    relative difference; each `could not verify` with the first of `problems` where there are
    any."""
    before, after = values_of(recorded), values_of(recomputed) if recomputed else {}
    rows = []
    for name in [*before, *(k for k in after if k not in before)]:
        old, new = before.get(name), after.get(name)
        row: dict[str, Any] = {"value": name, "recorded": old, "recomputed": new}
        if problems:
            row.update(status=NOT_VERIFIED, relative_difference=None, reason=problems[0])
        else:
            diff = relative_difference(old, new)
            same = old == new
            st = IDENTICAL if same else CLOSE if diff is not None and diff <= rtol else DIFFERS
            row.update(status=st, relative_difference=None if same else diff)
        rows.append(row)
    return rows


def values_of(doc: dict) -> dict[str, Any]:
    """{name: value} of a results document: `metrics.<name>`, `intervals.<name>.lo` and `.hi`,
    `per_sequence.<sequence id>[#<sample>].<field>`."""
    out: dict[str, Any] = {}
    for name, value in (doc.get("metrics") or {}).items():
        out[f"metrics.{name}"] = value
    for name, ends in (doc.get("intervals") or {}).items():
        if isinstance(ends, list) and len(ends) == 2:
            out[f"intervals.{name}.lo"], out[f"intervals.{name}.hi"] = ends
    for row in doc.get("per_sequence") or []:
        if not isinstance(row, dict):
            continue
        sid = str(row.get("sequence_id"))
        if "sample" in row:
            sid = f"{sid}#{row['sample']}"
        for key, value in row.items():
            if key not in ("sequence_id", "index", "sample"):
                out[f"per_sequence.{sid}.{key}"] = value
    return out


def relative_difference(recorded: Any, recomputed: Any) -> float | None:
    """|recomputed − recorded| / |recorded| (over |recomputed| where the recorded value is 0);
    None where either is no number."""
    if not (_number(recorded) and _number(recomputed)):
        return None
    scale = abs(recorded) or abs(recomputed)
    return 0.0 if scale == 0 else abs(recomputed - recorded) / scale


def environment(recorded: dict, now: dict) -> dict[str, dict]:
    """{package: {recorded, now}} of the package versions that differ (reported, not refused)."""
    return {
        name: {"recorded": recorded.get(name), "now": now.get(name)}
        for name in sorted({*recorded, *now})
        if recorded.get(name) != now.get(name)
    }


def exit_code(reports: list[dict]) -> int:
    """3 where a value differs, else 2 where one could not be verified, else 0."""
    statuses = {row["status"] for r in reports for row in r["values"]}
    if DIFFERS in statuses:
        return EXIT_DIFFERS
    if NOT_VERIFIED in statuses or any(r["could_not_verify"] for r in reports):
        return EXIT_NOT_VERIFIED
    return 0


def table(reports: list[dict], out: Path) -> str:
    """The compact table: per run, each metric's status and values, every other value that
    differs or is close (at most `SHOWN`), why values could not be verified, the notes, the
    environment's differences, the counts; then verify.json."""
    lines = []
    for r in reports:
        lines.append(f"verify {r['results']}" + (f" (re-run: {r['rerun']})" if r["rerun"] else ""))
        rows = [
            row
            for row in r["values"]
            if row["value"].startswith("metrics.")
            and (row["recorded"] is not None or row["recomputed"] is not None)
        ]
        others = [
            row
            for row in r["values"]
            if not row["value"].startswith("metrics.")
            and row["status"] not in (IDENTICAL, NOT_VERIFIED)
        ]
        shown = rows + others[:SHOWN]
        width = max((len(row["value"]) for row in shown), default=0)
        for row in shown:
            lines.append("  " + _row(row, width))
        if len(others) > SHOWN:
            lines.append(f"  … {len(others) - SHOWN} more not identical: {out}")
        for reason in r["could_not_verify"]:
            lines.append(f"  could not verify: {reason}")
        for note in r["notes"]:
            lines.append(f"  note: {note}")
        if r["environment"]:
            changed = ", ".join(
                f"{name} {v['recorded']} -> {v['now']}" for name, v in r["environment"].items()
            )
            lines.append(f"  environment differs (reported, not refused): {changed}")
        counts = ", ".join(f"{n} {s}" for s, n in r["counts"].items() if n)
        lines.append(f"  {len(r['values'])} values: {counts or 'none'}")
    lines.append(f"verify.json: {out}")
    return "\n".join(lines)


def _row(row: dict, width: int) -> str:
    name, st = row["value"].ljust(width), row["status"]
    if st == IDENTICAL:
        return f"{name}  {st:<9}  {_text(row['recorded'])}"
    if st == NOT_VERIFIED:
        return f"{name}  {st}  recorded {_text(row['recorded'])}"
    diff = row["relative_difference"]
    rel = f"  relative difference {diff:.3g}" if diff is not None else ""
    return (
        f"{name}  {st:<9}  recorded {_text(row['recorded'])}, recomputed"
        f" {_text(row['recomputed'])}{rel}"
    )


def _text(value: Any) -> str:
    """A value as it is: a float's shortest exact form (repr), null as `-`."""
    return "-" if value is None else repr(value)


def _number(value: Any) -> bool:
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and not (isinstance(value, float) and math.isnan(value))
    )


def _counted(report: dict) -> dict:
    counts = {s: 0 for s in (IDENTICAL, CLOSE, DIFFERS, NOT_VERIFIED)}
    for row in report["values"]:
        counts[row["status"]] += 1
    report["counts"] = counts
    return report


def _hashes(part: Any, prefix: str = "") -> dict[str, str]:
    """{dotted key: SHA-256} of every value under a key naming a sha256 in `part`."""
    out: dict[str, str] = {}
    if isinstance(part, dict):
        for key, value in part.items():
            name = f"{prefix}{key}"
            if "sha256" in str(key) and isinstance(value, str):
                out[name] = value
            elif "sha256" in str(key) and isinstance(value, dict):
                out.update({f"{name}.{k}": v for k, v in value.items() if isinstance(v, str)})
            else:
                out.update(_hashes(value, f"{name}."))
    return out


def _committed(path: Path) -> bool:
    """Whether `path` is the results.json its run folder's commit lists (or no manifest exists)."""
    try:
        return verified(path.parent, path.name) is not None
    except OSError:
        return False


def _relative(folder: Path, root: Path) -> Path:
    try:
        return folder.relative_to(root)
    except ValueError:
        return Path(folder.name)


def _check_out_folder(out: Path, target: Path) -> None:
    """Refuse a run folder of this task that is the verified folder or lies inside it: the verified
    folder is only read."""
    verified_folder = (target.parent if target.is_file() else target).resolve()
    here = out.resolve()
    if here == verified_folder or verified_folder in here.parents:
        raise ConfigError(
            f"hydra.run.dir={out} lies in the verified folder {verified_folder}:"
            " task=verify writes only into a folder of its own"
        )
