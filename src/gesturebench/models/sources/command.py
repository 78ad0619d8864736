"""`CommandSource` (``model/source=command``): a shell command run in the model's own environment,
once per sequence (inputs staged as a one-sequence BEAT2 folder) or once per split (on the dataset
folder), with a timeout. Its result files are kept in the generated-motion cache, keyed by a hash of
the command and the sequence's content: re-scoring never re-runs it."""

from __future__ import annotations

import hashlib
import json
import shlex
import string
from pathlib import Path
from typing import Any, Literal

from typing_extensions import Unpack

from gesturebench.data.records import Motion, SequenceRecord
from gesturebench.models.cache import run_once
from gesturebench.models.shell import run_shell, stderr_tail
from gesturebench.models.sources.base import ModelCommandError, SharedOptions
from gesturebench.models.sources.runs import RunSource
from gesturebench.models.staging import stage_sequence
from gesturebench.runtime.errors import ConfigError, DataError

#: Placeholders a command may use, per scope.
PLACEHOLDERS = {
    "sequence": ("audio", "textgrid", "id", "speaker", "split", "split_dir", "out"),
    "split": ("split", "split_dir", "out"),
}


def template_fields(template: str) -> set[str]:
    """The `{placeholder}` names of a command template (`{{`/`}}` are literal braces)."""
    try:
        return {field for _, field, _, _ in string.Formatter().parse(template) if field is not None}
    except ValueError as exc:
        raise ConfigError(
            f"model.command {template!r} is not a valid template ({exc}); write literal braces as "
            f"{{{{ and }}}}"
        ) from None


class CommandSource(RunSource):
    """`command` (a template of `PLACEHOLDERS`) writes the result file(s) into ``{out}``;
    `command_scope`: sequence | split; `timeout`: seconds per run (None: none); `data_root`: the
    dataset folder a split-scope command reads (``{split_dir}``)."""

    kind = "command"

    def __init__(
        self,
        name: str,
        command: str | None = None,
        command_scope: Literal["sequence", "split"] = "sequence",
        timeout: float | None = 3600.0,
        data_root: str | None = None,
        **shared: Unpack[SharedOptions],
    ):
        identity = {"command": command, "command_scope": command_scope}
        if command_scope == "split":
            identity["data_root"] = data_root
        super().__init__(name, identity, **shared)
        if not command:
            raise ConfigError(
                f"model={name}: model/source=command needs model.command='<shell line writing "
                f"result files into {{out}}>' (its YAML in conf/model/ shows an example)"
            )
        unknown = sorted(template_fields(command) - set(PLACEHOLDERS[command_scope]))
        if unknown:
            raise ConfigError(
                f"model={name}: model.command uses {', '.join('{' + u + '}' for u in unknown)}; "
                f"with command_scope={command_scope} it may use "
                f"{', '.join('{' + p + '}' for p in PLACEHOLDERS[command_scope])}"
            )
        if timeout is not None and timeout <= 0:
            raise ConfigError(
                f"model={name}: model.timeout must be a positive number of seconds or null"
            )
        if command_scope == "split" and not data_root:
            raise ConfigError(
                f"model={name}: command_scope=split needs model.data_root (the dataset folder "
                f"the command reads, default ${{dataset.root}})"
            )
        self.command, self.scope, self.timeout, self.data_root = (
            command,
            command_scope,
            timeout,
            data_root,
        )

    def generate(self, record: SequenceRecord) -> Motion:
        if self.scope == "split":
            return self._from_split_run(record)
        return super().generate(record)

    def produce(self, record: SequenceRecord, work: Path) -> None:
        values = stage_sequence(record, work / "input")
        missing = sorted(template_fields(self.command) - set(values) - {"out"})
        if missing:
            raise DataError(
                f"sequence {record.id}",
                f"has no {' or '.join(missing)}, but model={self.name}'s "
                f"command uses {', '.join('{' + m + '}' for m in missing)}",
            )
        self._execute({**values, "out": str(work / "out")}, work, f"sequence {record.id}")

    def _from_split_run(self, record: SequenceRecord) -> Motion:
        """The record's result from the run of the command for its whole split (one run, shared by
        every sequence of the split and by processes sharing the cache)."""
        split = str(record.meta.get("split", "test"))
        key = hashlib.sha256(
            json.dumps([self.identity(), split], sort_keys=True, default=str).encode()
        ).hexdigest()
        what = f"split {split}"
        values = {"split": split, "split_dir": str(self.data_root)}
        return run_once(
            self.run_root() / f"split-{split}-{key[:16]}",
            lambda work: self._execute({**values, "out": str(work / "out")}, work, what),
            lambda folder: self.read_run(folder, record, what),
        )

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

    def unusable(
        self, err: DataError, folder: Path, record: SequenceRecord, what: str
    ) -> ModelCommandError:
        command = (folder / "command.txt").read_text().strip()
        return ModelCommandError(
            f"model={self.name}: the command for {what} wrote no usable result for sequence "
            f"{record.id}: {err} — command: {command} — {stderr_tail(folder)} (logs: {folder})"
        )

    def where(self) -> dict[str, Any]:
        return {"command": self.command, "command_scope": self.scope}
