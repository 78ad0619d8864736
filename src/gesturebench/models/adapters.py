"""`ModelAdapter`: a published gesture model (EMAGE, GestureLSM, SemTalk, SemConFlow) or your own as
a motion source.

`source` says how its motion is obtained; every way ends in one result file per sequence, read by
`models.formats.read_result` (so the same formats, checks and copied-field detection apply to all
three):

- ``outputs``: result files the model's own code already wrote, in `dir` (``{id}.npz``,
  ``res_{id}.npz``, …).
- ``command``: a shell command run in the model's own environment, once per sequence (inputs staged
  as a one-sequence BEAT2 folder) or once per split (on the dataset folder), with a timeout. Its
  result files are kept in the generated-motion cache, keyed by a hash of the command and the
  sequence's content: re-scoring never re-runs it. A failure, a timeout or an unreadable result is
  one `ModelCommandError` naming the sequence, the command and the tail of its stderr; nothing of
  the failed run enters the cache.
- ``module``: an importable object (``package.module:Name``) — a LightningModule (`predict_step`) or
  any callable — given a batch (a dict of numpy inputs and the `device` its parameters are on, or
  the `SequenceRecord`) and returning SMPL-X parameters (a `Motion` or a dict of arrays), with
  weights from `checkpoint` (``torch.load(weights_only=True)``); results cached like commands.

Fields a model does not generate but copies from the reference are declared (`copied_fields`) or
detected (identical to the reference); `describe()` reports them and `skip_notes()` names the
metrics they affect.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import pkgutil
import shlex
import shutil
import signal
import string
import subprocess
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytorch_lightning as pl
import torch

from gesturebench.atomic import atomic_path, one_line
from gesturebench.data.annotations_io import write_sem, write_textgrid_words
from gesturebench.data.audio import write_wav
from gesturebench.data.beat2 import SPLIT_FILE, sequence_paths, write_motion_npz
from gesturebench.data.records import SAMPLE_RATE, Motion, SequenceRecord
from gesturebench.errors import (
    CheckpointError,
    ConfigError,
    DataError,
    GestureBenchError,
)
from gesturebench.models.base import GestureModel
from gesturebench.models.formats import (
    DEFAULT_PATTERNS,
    FIELDS,
    find_result,
    identical_fields,
    read_result,
)

SOURCES = ("outputs", "command", "module")
#: Placeholders a command may use, per scope.
PLACEHOLDERS = {
    "sequence": ("audio", "textgrid", "id", "speaker", "split", "split_dir", "out"),
    "split": ("split", "split_dir", "out"),
}
#: Metric values that a field copied from the reference enters (so they partly compare the reference
#: with itself): face vertices (expressions, jaw, eyes) enter Chamfer/Hausdorff; the 55 joint
#: rotations (jaw, eyes) and the root velocity (trans) enter the learned/raw feature spaces (FGD,
#: Density, Coverage, SC); trans enters foot contact.
_FEATURES = ("fgd", "fgd_raw_pose", "density", "coverage", "sc")
AFFECTED_METRICS = {
    "expressions": ("chamfer", "hausdorff"),
    "jaw": ("chamfer", "hausdorff", *_FEATURES),
    "eyes": ("chamfer", "hausdorff", *_FEATURES),
    "trans": ("foot_contact", "contact_rate_gen", *_FEATURES),
}
STDERR_LINES = 5


class ModelCommandError(GestureBenchError):
    """A model's command or module failed, timed out or wrote no usable result for a sequence."""


def record_batch(record: SequenceRecord) -> dict[str, Any]:
    """The dict a `source=module` callable receives (``input=dict``): inputs as numpy arrays and
    plain values.

    ``poses``/``trans``/``expressions``/``betas`` are the reference motion, for seed frames, body
    shape and the fields a model copies; ``audio`` is 16 kHz mono float32 (or None); ``words`` a
    list of (word, start, end).
    """
    m = record.motion
    return {
        "id": record.id,
        "speaker": record.speaker,
        "audio": record.audio,
        "sample_rate": SAMPLE_RATE,
        "words": None if record.words is None else [(w.word, w.start, w.end) for w in record.words],
        "n_frames": m.n_frames,
        "fps": m.fps,
        "poses": m.poses,
        "trans": m.trans,
        "expressions": m.expressions,
        "betas": m.betas,
    }


def result_arrays(output: Any) -> dict[str, np.ndarray]:
    """A module's output (a `Motion` or a mapping of arrays/tensors) as numeric numpy arrays for an
    npz file."""
    if isinstance(output, Motion):
        return output.to_npz_dict()
    if not isinstance(output, Mapping):
        raise TypeError(
            f"returned {type(output).__name__}; expected a Motion or a dict of SMPL-X arrays"
        )
    arrays = {}
    for key, value in output.items():
        value = (
            value.detach().cpu().numpy() if isinstance(value, torch.Tensor) else np.asarray(value)
        )
        if np.issubdtype(value.dtype, np.number):
            arrays[str(key)] = value
    return arrays


def stage_sequence(record: SequenceRecord, root: Path) -> dict[str, str]:
    """Write `record` as a one-sequence BEAT2 folder under `root`; return the placeholder values it
    provides (``audio`` and ``textgrid`` only where the record has them)."""
    split = str(record.meta.get("split", "test"))
    paths = sequence_paths(root, record.id)
    root.mkdir(parents=True, exist_ok=True)
    (root / SPLIT_FILE).write_text(f"id,type\n{record.id},{split}\n")
    write_motion_npz(paths.motion, record.motion)
    values = {
        "id": record.id,
        "speaker": str(record.speaker),
        "split": split,
        "split_dir": str(root),
    }
    if record.audio is not None:
        write_wav(paths.audio, record.audio)
        values["audio"] = str(paths.audio)
    if record.words is not None:
        end = max([record.motion.duration, *(w.end for w in record.words)])
        write_textgrid_words(paths.textgrid, record.words, end)
        values["textgrid"] = str(paths.textgrid)
    if record.sem is not None:
        write_sem(paths.sem, record.sem)
    return values


def template_fields(template: str) -> set[str]:
    """The `{placeholder}` names of a command template (`{{`/`}}` are literal braces)."""
    try:
        return {field for _, field, _, _ in string.Formatter().parse(template) if field is not None}
    except ValueError as exc:
        raise ConfigError(
            f"model.command {template!r} is not a valid template ({exc}); write literal braces as "
            f"{{{{ and }}}}"
        ) from None


def stderr_tail(folder: Path) -> str:
    """The last lines of a run's stderr (else stdout) on one line, for error messages."""
    for name in ("stderr.txt", "stdout.txt"):
        path = folder / name
        lines = path.read_text(errors="replace").strip().splitlines() if path.is_file() else []
        if lines:
            return (
                f"{name[:-4]}: " + " ⏎ ".join(line.strip() for line in lines[-STDERR_LINES:])[-800:]
            )
    return "no output on stderr or stdout"


def run_shell(command: str, folder: Path, timeout: float | None) -> str | None:
    """Run `command` in a shell in its own process group, stdout/stderr into `folder`; return None
    on success, else why it failed. On timeout (or interrupt) the whole process group is killed."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "stdout.txt", "wb") as out, open(folder / "stderr.txt", "wb") as err:
        proc = subprocess.Popen(
            command,
            shell=True,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=True,
        )
        try:
            code = proc.wait(timeout=timeout)
        except BaseException as exc:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            if isinstance(exc, subprocess.TimeoutExpired):
                return f"timed out after {timeout:g} s (model.timeout)"
            raise
    return None if code == 0 else f"exited with status {code}"


def load_target(spec: str) -> Any:
    """The object named `package.module:Name` (or `package.module.Name`)."""
    try:
        return pkgutil.resolve_name(spec)
    except (ImportError, AttributeError, ValueError) as exc:
        raise CheckpointError(
            f"model.target={spec}: cannot import it ({one_line(exc)}); install the package or "
            f"put it on PYTHONPATH, and write the target as package.module:Name"
        ) from exc


def load_weights(module: torch.nn.Module, path: Path, target: str) -> None:
    """Load a state dict (plain, or a Lightning checkpoint's ``state_dict``) with
    ``torch.load(weights_only=True)``."""
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # unpickling refusals and corrupt files alike: the file is unusable
        raise CheckpointError(
            f"{path}: not loadable with torch.load(weights_only=True) ({one_line(exc)}); save the "
            f"weights as torch.save(model.state_dict(), path)"
        ) from exc
    if isinstance(state, Mapping) and "state_dict" in state:
        state = state["state_dict"]
    try:
        module.load_state_dict(state)
    except (RuntimeError, TypeError, AttributeError) as exc:
        raise CheckpointError(f"{path}: does not fit {target} ({one_line(exc)[:600]})") from exc


def file_digest(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def attempt_dir(final: Path) -> Path:
    """Where a run whose results would enter the cache as `final` works: its staged inputs, command
    line, stdout/stderr and outputs stay there when it fails, and it becomes `final` only when its
    results read."""
    return final.with_name(final.name + ".attempt")


def _retire(folder: Path) -> Path:
    """Take a cached run folder whose result does not read out of the cache (it becomes the last
    attempt)."""
    if folder.name.endswith(".attempt"):
        return folder
    attempt = attempt_dir(folder)
    shutil.rmtree(attempt, ignore_errors=True)
    os.replace(folder, attempt)
    return attempt


def _generation_options(source, command, scope, data_root, target, target_args, input) -> dict:
    """The options besides the source that determine the generated motion (part of the cache key)."""
    if source == "command":
        return {
            "command": command,
            "command_scope": scope,
            **({"data_root": data_root} if scope == "split" else {}),
        }
    if source == "module":
        return {"target": target, "target_args": target_args or {}, "input": input}
    return {}


class ModelAdapter(GestureModel):
    """A gesture model as a motion source: its result files, its command, or its Python object (see
    module doc).

    Options (the YAML files in ``conf/model/`` document them per model): `title` (display name),
    `source`, `copied_fields` (fields the model copies from the reference, out of expressions, jaw,
    eyes, trans), `file_pattern` (result file name, e.g. ``res_{id}.npz``; default: every pattern of
    `DEFAULT_PATTERNS`);
    outputs: `dir`; command: `command`, `command_scope` (sequence | split), `timeout` (seconds, null: none),
    `data_root` (the dataset folder a split-scope command reads); module: `target`, `target_args`,
    `input`
    (dict | record), `checkpoint` (null: the object loads its own weights).
    """

    cacheable = False  # result files are cached by the adapter itself (commands and modules) or are the source

    def __init__(
        self,
        name: str,
        title: str | None = None,
        source: str = "outputs",
        copied_fields: Iterable[str] = (),
        file_pattern: str | None = None,
        dir: str | None = None,
        command: str | None = None,
        command_scope: str = "sequence",
        timeout: float | None = 3600.0,
        data_root: str | None = None,
        target: str | None = None,
        target_args: dict | None = None,
        input: str = "dict",
        checkpoint: str | None = None,
    ):
        super().__init__(
            name,
            source=source,
            file_pattern=file_pattern,
            **_generation_options(
                source, command, command_scope, data_root, target, target_args, input
            ),
        )
        self.title = title or name
        if source not in SOURCES:
            raise ConfigError(
                f"model={name}: model.source={source!r} is not one of {', '.join(SOURCES)}"
            )
        unknown = sorted(set(copied_fields) - set(FIELDS))
        if unknown:
            raise ConfigError(
                f"model={name}: copied_fields {unknown} are not among {', '.join(FIELDS)}"
            )
        self.source, self.declared = source, sorted(set(copied_fields))
        self.patterns = (file_pattern,) if file_pattern else DEFAULT_PATTERNS
        self.dir = None if dir in (None, "", "???") else Path(dir)
        self.command, self.scope, self.timeout, self.data_root = (
            command,
            command_scope,
            timeout,
            data_root,
        )
        self.target, self.input, self.checkpoint = target, input, checkpoint
        self.work_root: Path | None = None
        self.seen: dict[
            str, tuple[list[str], list[str]]
        ] = {}  # id → (fields missing in its file, identical ones)
        if source == "outputs":
            self._check_outputs()
        elif source == "command":
            self._check_command()
        else:
            self.net, self.options["weights_sha256"] = self._load_module(target_args or {})

    # ---- construction checks: each failure is one message saying what to put where ----

    def _names(self) -> str:
        return " or ".join(p.replace("{id}", "{sequence_id}") for p in self.patterns)

    def _check_outputs(self) -> None:
        if self.dir is None or not self.dir.is_dir() or not any(self.dir.glob("*.npz")):
            where = (
                "model.dir is not set. Put {title}'s result files in a folder"
                if self.dir is None
                else "no outputs found in {dir}. Put {title}'s result files there"
            ).format(title=self.title, dir=self.dir)
            raise CheckpointError(
                f"model={self.name}: {where}, one per sequence named "
                f"{self._names()}, or set model.dir=/folder/with/them, or let gesturebench run the model: "
                f"model.source=command model.command='...' or model.source=module model.target=package.module:Name "
                f"(its YAML in conf/model/ shows how)"
            )

    def _check_command(self) -> None:
        if not self.command or self.command == "???":
            raise ConfigError(
                f"model={self.name}: model.source=command needs model.command='<shell line writing "
                f"result files into {{out}}>' (its YAML in conf/model/ shows an example)"
            )
        if self.scope not in PLACEHOLDERS:
            raise ConfigError(
                f"model={self.name}: model.command_scope={self.scope!r} is not one of "
                f"{', '.join(PLACEHOLDERS)}"
            )
        unknown = sorted(template_fields(self.command) - set(PLACEHOLDERS[self.scope]))
        if unknown:
            raise ConfigError(
                f"model={self.name}: model.command uses {', '.join('{' + u + '}' for u in unknown)}; "
                f"with command_scope={self.scope} it may use "
                f"{', '.join('{' + p + '}' for p in PLACEHOLDERS[self.scope])}"
            )
        if self.timeout is not None and self.timeout <= 0:
            raise ConfigError(
                f"model={self.name}: model.timeout must be a positive number of seconds or null"
            )
        if self.scope == "split" and not self.data_root:
            raise ConfigError(
                f"model={self.name}: command_scope=split needs model.data_root (the dataset folder "
                f"the command reads, default ${{dataset.root}})"
            )

    def _load_module(self, target_args: dict) -> tuple[Any, str | None]:
        """The callable named by `target` (a class is instantiated with `target_args`), with its
        weights loaded; and the checkpoint's SHA-256 (None when it has no weights to load)."""
        if not self.target or self.target == "???":
            raise ConfigError(
                f"model={self.name}: model.source=module needs model.target=package.module:Name"
            )
        if self.input not in ("dict", "record"):
            raise ConfigError(
                f"model={self.name}: model.input={self.input!r} is not one of dict, record"
            )
        net = load_target(self.target)
        if isinstance(net, type):
            net = net(**target_args)
        if not callable(net):
            raise ConfigError(
                f"model={self.name}: model.target={self.target} is a {type(net).__name__}, "
                f"not a callable"
            )
        if not (isinstance(net, torch.nn.Module) and len(net.state_dict()) and self.checkpoint):
            return net, None
        path = Path(self.checkpoint)
        if not path.is_file():
            raise CheckpointError(
                f"model={self.name}: no weights at {path}. Put {self.title}'s weights there "
                f"(torch.save(model.state_dict(), '{path}') or a Lightning .ckpt), or set "
                f"model.checkpoint=/path/to/weights, or model.checkpoint=null if {self.target} loads its own"
            )
        load_weights(net, path, self.target)
        return net.eval(), file_digest(path)

    # ---- generation ----

    def prepare(self, context) -> None:
        self.work_root = Path(context.cache_dir) / "generated" / self.name

    def cache_key(self, record: SequenceRecord) -> str:
        """The base key (options, id, reference motion) plus the inputs a model reads: audio and
        words."""
        h = hashlib.sha256(super().cache_key(record).encode())
        if record.audio is not None:
            h.update(np.ascontiguousarray(record.audio).tobytes())
        h.update(json.dumps([(w.word, w.start, w.end) for w in record.words or []]).encode())
        return h.hexdigest()

    def generate(self, record: SequenceRecord) -> Motion:
        if self.source == "outputs":
            motion, missing = read_result(self._output_file(record), record.motion)
        elif self.work_root is None:
            raise ConfigError(f"model={self.name}: prepare(context) must run before generate()")
        elif self.source == "command" and self.scope == "split":
            motion, missing = self._from_split_run(record)
        else:
            motion, missing = self._from_sequence_run(record)
        self.seen[record.id] = (missing, identical_fields(motion, record.motion))
        return motion

    def _output_file(self, record: SequenceRecord) -> Path:
        path = find_result(self.dir, record.id, self.patterns)
        if path is None:
            others = sorted(p.name for p in self.dir.glob("*.npz"))
            raise CheckpointError(
                f"model={self.name}: no result for sequence {record.id} in {self.dir} (looked for "
                f"{', '.join(p.format(id=record.id) for p in self.patterns)}; the folder holds {len(others)} other "
                f".npz files, e.g. {', '.join(others[:3])}). Put {self.title}'s result for every evaluated sequence there"
            )
        return path

    def _from_sequence_run(self, record: SequenceRecord) -> tuple[Motion, list[str]]:
        """The cached result of `record`, else run the command (or module) once in its attempt
        folder, which enters the cache only when its result reads."""
        final = self.work_root / f"{record.id}-{self.cache_key(record)[:16]}"
        what = f"sequence {record.id}"
        if final.is_dir():
            return self._checked_read(final, record, what)
        work = attempt_dir(final)
        shutil.rmtree(work, ignore_errors=True)
        if self.source == "command":
            values = self._stage(record, work / "input")
            self._execute({**values, "out": str(work / "out")}, work, what)
        else:
            self._run_module(record, work / "out")
        result = self._checked_read(work, record, what)
        os.replace(work, final)
        return result

    def _from_split_run(self, record: SequenceRecord) -> tuple[Motion, list[str]]:
        """Run the command once for the record's split (under a file lock, so parallel processes
        share one run)."""
        split = str(record.meta.get("split", "test"))
        key = hashlib.sha256(
            json.dumps([self.identity(), split], sort_keys=True, default=str).encode()
        ).hexdigest()
        final = self.work_root / f"split-{split}-{key[:16]}"
        final.parent.mkdir(parents=True, exist_ok=True)
        with open(final.with_name(final.name + ".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not final.is_dir():
                work = attempt_dir(final)
                shutil.rmtree(work, ignore_errors=True)
                values = {
                    "split": split,
                    "split_dir": str(self.data_root),
                    "out": str(work / "out"),
                }
                self._execute(values, work, f"split {split}")
                os.replace(work, final)
            return self._checked_read(final, record, f"split {split}")

    def _stage(self, record: SequenceRecord, folder: Path) -> dict[str, str]:
        values = stage_sequence(record, folder)
        missing = sorted(template_fields(self.command) - set(values) - {"out"})
        if missing:
            raise DataError(
                f"sequence {record.id}",
                f"has no {' or '.join(missing)}, but model={self.name}'s "
                f"command uses {', '.join('{' + m + '}' for m in missing)}",
            )
        return values

    def _execute(self, values: dict[str, str], folder: Path, what: str) -> None:
        """Run the command with `values` in `folder` (its command line and logs stay there)."""
        (folder / "out").mkdir(parents=True, exist_ok=True)
        command = self.command.format(**{k: shlex.quote(v) for k, v in values.items()})
        (folder / "command.txt").write_text(command + "\n")
        failure = run_shell(command, folder, self.timeout)
        if failure:
            raise ModelCommandError(
                f"model={self.name}: the command for {what} {failure}: {command} — "
                f"{stderr_tail(folder)} (logs: {folder})"
            )

    def _checked_read(
        self, folder: Path, record: SequenceRecord, what: str
    ) -> tuple[Motion, list[str]]:
        """Read the record's result from a run folder; a missing or unusable file takes the folder
        out of the cache (so the next run regenerates it) and raises one error with the command and
        the tail of its stderr."""
        path = find_result(folder / "out", record.id, self.patterns)
        try:
            if path is None:
                wrote = sorted(p.name for p in (folder / "out").iterdir())[:5]
                raise DataError(
                    folder / "out",
                    f"no result for sequence {record.id} (looked for "
                    f"{', '.join(p.format(id=record.id) for p in self.patterns)}; "
                    f"found: {', '.join(wrote) or 'nothing'})",
                )
            return read_result(path, record.motion)
        except DataError as err:
            folder = _retire(folder)
            if self.source == "module":
                raise ModelCommandError(
                    f"model={self.name}: {self.target} returned no usable SMPL-X parameters "
                    f"for sequence {record.id}: {err}"
                ) from err
            command = (folder / "command.txt").read_text().strip()
            raise ModelCommandError(
                f"model={self.name}: the command for {what} wrote no usable result for sequence "
                f"{record.id}: {err} — command: {command} — {stderr_tail(folder)} "
                f"(logs: {folder})"
            ) from err

    def _run_module(self, record: SequenceRecord, out: Path) -> None:
        batch = (
            record if self.input == "record" else {**record_batch(record), "device": self.device}
        )
        try:
            with torch.no_grad():
                if isinstance(self.net, pl.LightningModule):
                    output = self.net.predict_step(batch, max(record.index, 0))
                else:
                    output = self.net(batch)
            arrays = result_arrays(output)
        except GestureBenchError:
            raise
        except Exception as exc:
            raise ModelCommandError(
                f"model={self.name}: {self.target} failed on sequence {record.id}: "
                f"{type(exc).__name__}: {one_line(exc)} (HYDRA_FULL_ERROR=1 shows the traceback)"
            ) from exc
        with atomic_path(out / f"{record.id}.npz") as tmp, open(tmp, "wb") as f:
            np.savez(f, **arrays)

    # ---- what results.json says about the source ----

    @property
    def copied_fields(self) -> list[str]:
        """Declared copied fields plus those found identical to the reference in any evaluated
        sequence."""
        found = {f for missing, same in self.seen.values() for f in (*missing, *same)}
        return sorted(set(self.declared) | found)

    def describe(self) -> dict:
        """The `model_info` of results.json: source, where motion came from, and the copied fields."""

        def counts(i: int) -> dict[str, int]:
            return {
                f: n for f in FIELDS if (n := sum(f in entry[i] for entry in self.seen.values()))
            }

        where = {
            "outputs": {"dir": str(self.dir)},
            "command": {"command": self.command, "command_scope": self.scope},
            "module": {
                "target": self.target,
                "checkpoint": self.checkpoint,
                "checkpoint_sha256": self.options.get("weights_sha256"),
            },
        }[self.source]
        return {
            "title": self.title,
            "source": self.source,
            **where,
            "copied_fields": self.copied_fields,
            "declared_copied_fields": self.declared,
            "missing_in_result_files": counts(0),
            "identical_to_reference": counts(1),
            "sequences": len(self.seen),
            "betas": "reference (body shape is not generated)",
        }

    def skip_notes(self, value_names: Iterable[str]) -> dict[str, str]:
        """For each metric value among `value_names` that a copied field enters, why it is partly
        meaningless."""
        names = set(value_names)
        fields: dict[str, list[str]] = {}
        for field in self.copied_fields:
            for metric in AFFECTED_METRICS[field]:
                if metric in names:
                    fields.setdefault(metric, []).append(field)
        return {
            metric: f"partly compares the reference with itself: {self.title} copies {', '.join(fs)} from the "
            f"reference (model_info.copied_fields)"
            for metric, fs in fields.items()
        }
