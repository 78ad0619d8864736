"""Config schemas, the `${gb_...:}` resolvers, and `build`.

Every config group option lists its schema first in its `defaults`, so that a mistyped key or a
wrong type fails when the config is composed, with Hydra's message. Schemas are not written out
per option: `SchemaSource` derives them when a config names them by the class they describe,

- ``- /schema/<package.module.Name>@_here_``: the arguments of the object `_target_` builds
  (`schema`), its `_target_` included: the option gives no `_target_` line of its own;
- ``- /fields/<package.module.Name>@_here_``: that dataclass itself (a plain mapping, or a schema
  written out where a target's arguments do not say enough, e.g. `TrainerConfig`);

and `@<key>` instead of `@_here_` types one entry (a metric of a `metrics` preset).
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import hashlib
import inspect
import os
import typing
from collections.abc import Callable, Iterator
from copy import deepcopy
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Literal

from hydra.core.config_search_path import ConfigSearchPath
from hydra.core.object_type import ObjectType
from hydra.core.plugins import Plugins
from hydra.errors import InstantiationException
from hydra.plugins.config_source import ConfigLoadError, ConfigResult, ConfigSource
from hydra.plugins.search_path_plugin import SearchPathPlugin
from hydra.utils import get_object, instantiate
from omegaconf import MISSING, OmegaConf
from omegaconf.errors import OmegaConfBaseException
from typing_extensions import Unpack

from gesturebench.data.lengths import LengthPolicy
from gesturebench.runtime.atomic import one_line
from gesturebench.runtime.errors import ConfigError, GestureBenchError

#: arguments that no config sets: given at run time (`device`), or by a subclass to its base
#: (`identity`); left out of every schema
NOT_CONFIGURED = ("device", "identity")
#: arguments taking a mapping of a dataclass's fields (the object builds the dataclass itself)
MAPPINGS = {"camera": "gesturebench.render.clips.Camera"}
#: keys of a model config that are no constructor argument (`models.sampling`)
MODEL_KEYS: list[tuple[str, Any, Any]] = [("samples", int, field(default=1))]


def build(node: Any, **kwargs: Any) -> Any:
    """`hydra.utils.instantiate(node, **kwargs)` on the plain containers of `node` (interpolations
    resolved, an enum option as its name), with the target's own GestureBenchError, or a bad
    `_target_` or argument, as one clear error."""
    if OmegaConf.is_config(node):
        node = plain(node)
    try:
        return instantiate(node, _convert_="all", **kwargs)
    except InstantiationException as err:
        cause = err.__cause__
        if isinstance(cause, GestureBenchError):
            raise cause from None
        # the whole message on one line: its first line names the target only, the next the problem
        raise ConfigError(one_line(err)) from None


def build_model(node: Any) -> Any:
    """The `GestureModel` of a `model` config `node` (a config or its `plain` containers): built
    from its arguments, with its ``samples`` (not a constructor argument) checked and set by
    `models.sampling`."""
    from gesturebench.models.sampling import with_samples

    options = dict(plain(node) if OmegaConf.is_config(node) else node)
    samples = options.pop("samples", 1)
    return with_samples(build(options), samples)


def plain(node: Any) -> Any:
    """The config `node` as plain containers, interpolations resolved and an enum option as its
    name, as `build` takes it; a mandatory value left unset (`???`) raises omegaconf's
    `MissingMandatoryValue` naming its key."""
    return OmegaConf.to_container(node, resolve=True, throw_on_missing=True, enum_to_str=True)


def resolved(node: Any) -> dict:
    """The config `node` as a plain dict, interpolations resolved and an enum option as its name
    (what results files record, and what `build` takes back)."""
    container = OmegaConf.to_container(node, resolve=True, enum_to_str=True)
    assert isinstance(container, dict)
    return container


class _Choice(enum.Enum):
    """A member of a `Literal`'s enum (`_choice`), written as its value."""

    def __str__(self) -> str:
        return str(self.value)


@functools.cache
def _choice(values: tuple[str, ...]) -> type[enum.Enum]:
    """The enum of a `Literal`'s `values`, one per Literal: an option interpolating another option
    of the same Literal (``encoder: ${dataset.feature_encoder}``) takes its value; a string
    interpolating one (``mini_beat2_${dataset.size}``) takes its value too, not the member's name
    (`Choice.default`)."""
    return _Choice("Choice", {v: v for v in values})  # type: ignore[call-arg,return-value]


def _checkable(annotation: Any) -> Any:
    """`annotation` where OmegaConf can check values against it (a `Literal` of strings as an
    enum of them, a list of such as a list of that enum), else `Any`."""
    if typing.get_origin(annotation) is typing.Literal:
        values = typing.get_args(annotation)
        if all(isinstance(v, str) for v in values):
            return _choice(values)
    if typing.get_origin(annotation) is list and len(typing.get_args(annotation)) == 1:
        inner = _checkable(typing.get_args(annotation)[0])
        if isinstance(inner, type) and issubclass(inner, enum.Enum):
            return list[inner]  # type: ignore[valid-type]
    probe = dataclasses.make_dataclass("Probe", [("value", annotation, MISSING)])
    try:
        OmegaConf.structured(probe)
    except (OmegaConfBaseException, ValueError, TypeError):
        return Any
    return annotation


def _arguments(obj: Any) -> Iterator[tuple[str, Any, Any]]:
    """(name, annotation, default or MISSING) of each argument that `obj` (a dataclass, a class or
    a function) takes by name, with those of the base class where its constructor passes
    `**kwargs` on (only the keys of its `Unpack[TypedDict]`, where it says which); a dataclass's
    default factory is called."""
    if dataclasses.is_dataclass(obj):
        hints = typing.get_type_hints(obj)
        for f in dataclasses.fields(obj):
            if f.default is not dataclasses.MISSING:
                default = f.default
            elif f.default_factory is not dataclasses.MISSING:
                default = f.default_factory()
            else:
                default = MISSING
            yield f.name, hints.get(f.name, Any), default
        return
    hints = typing.get_type_hints(obj.__init__ if inspect.isclass(obj) else obj)
    parameters = inspect.signature(obj).parameters
    passed_on: Any = None
    for name, param in parameters.items():
        if param.kind not in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            empty = param.default is inspect.Parameter.empty
            yield name, hints.get(name, Any), MISSING if empty else param.default
        elif param.kind == param.VAR_KEYWORD:
            hint = hints.get(name)
            typed = typing.get_origin(hint) is Unpack
            passed_on = set(typing.get_type_hints(typing.get_args(hint)[0])) if typed else ()
    if inspect.isclass(obj) and passed_on is not None:
        # a constructor's **kwargs go on to its base class's constructor: take its arguments too
        owner = next(c for c in obj.__mro__ if "__init__" in vars(c))
        for argument in _arguments(owner.__mro__[1]):
            if argument[0] not in parameters and (not passed_on or argument[0] in passed_on):
                yield argument


def _fields(obj: Any) -> list[tuple[str, Any, Any]]:
    """The schema fields of the arguments `obj` takes (see `schema`)."""
    fields: list[tuple[str, Any, Any]] = []
    for name, annotation, default in _arguments(obj):
        if name in NOT_CONFIGURED:
            continue
        if isinstance(annotation, type) and dataclasses.is_dataclass(annotation):
            inner = schema(f"{annotation.__module__}.{annotation.__qualname__}")
            fields.append((name, inner, field(default_factory=inner)))
        elif name in MAPPINGS:
            inner = schema(MAPPINGS[name], with_target=False)
            fields.append((name, inner, field(default_factory=inner)))
        elif isinstance(default, (list, dict, tuple)):
            fields.append(
                (name, _checkable(annotation), field(default_factory=partial(deepcopy, default)))
            )
        else:
            fields.append((name, _checkable(annotation), field(default=default)))
    return fields


@functools.cache
def schema(target: str, with_target: bool = True) -> type:
    """The structured-config schema of the object `target` ("module.Name") builds: `_target_` and
    one field per argument (a dataclass's fields, else the constructor's parameters) with its type
    and default; an argument without default is a mandatory value (`???`), an argument typed by a
    dataclass a nested schema (so `instantiate` builds it too), one of `MAPPINGS` the fields of
    its dataclass; a model's also `MODEL_KEYS`. `with_target=False` leaves `_target_` out (a plain
    mapping). Frozen dataclasses are fine: the schema itself is not frozen. Made once per target."""
    from gesturebench.models.base import GestureModel

    obj = get_object(target)
    fields: list[tuple[str, Any, Any]] = (
        [("_target_", str, field(default=target))] if with_target else []
    )
    fields += _fields(obj)
    if inspect.isclass(obj) and issubclass(obj, GestureModel):
        fields += MODEL_KEYS
    return dataclasses.make_dataclass(f"{target.rsplit('.', 1)[-1]}Schema", fields)


def checked_fields(target: str) -> type:
    """The dataclass `target` ("module.Name") as a ``fields/`` config (`checkable_dataclass`)."""
    return checkable_dataclass(get_object(target))


@functools.cache
def checkable_dataclass(cls: type) -> type:
    """The dataclass `cls` where OmegaConf can check it: itself, or where a field (or a field of
    a dataclass field) is a `Literal` of strings, a copy of it whose such fields are the Literal's
    enum (`_checkable`), so a value outside the Literal is refused when the config is composed or
    merged; `from_checked` turns what the copy holds back into `cls`. Made once per class."""
    hints = typing.get_type_hints(cls)
    fields: list[tuple[str, Any, Any]] = []
    changed = False
    for f in dataclasses.fields(cls):
        hint = hints[f.name]
        if isinstance(hint, type) and dataclasses.is_dataclass(hint):
            annotation: Any = checkable_dataclass(hint)
        elif typing.get_origin(hint) is typing.Literal:
            annotation = _checkable(hint)
        else:
            annotation = hint
        changed |= annotation is not hint
        if f.default_factory is not dataclasses.MISSING:
            default = field(default_factory=partial(_made_checkable, f.default_factory))
        else:
            default = field(default=MISSING if f.default is dataclasses.MISSING else f.default)
        fields.append((f.name, annotation, default))
    return dataclasses.make_dataclass(cls.__name__, fields) if changed else cls


def _made_checkable(make: Callable[[], Any]) -> Any:
    return as_checkable(make())


def as_checkable(value: Any) -> Any:
    """A dataclass instance as an instance of its `checkable_dataclass` (other values as they
    are)."""
    if not dataclasses.is_dataclass(value) or isinstance(value, type):
        return value
    copy = checkable_dataclass(type(value))
    if copy is type(value):
        return value
    return copy(**{f.name: as_checkable(getattr(value, f.name)) for f in dataclasses.fields(value)})


def from_checked(cls: type, node: Any) -> Any:
    """An instance of dataclass `cls` from `node`, a config of its `checkable_dataclass` (enum
    options as their values); a mandatory value left unset raises omegaconf's
    `MissingMandatoryValue`."""
    values = plain(node) if OmegaConf.is_config(node) else node
    hints = typing.get_type_hints(cls)
    kwargs = {}
    for f in dataclasses.fields(cls):
        if f.name in values:
            hint = hints[f.name]
            nested = isinstance(hint, type) and dataclasses.is_dataclass(hint)
            kwargs[f.name] = from_checked(hint, values[f.name]) if nested else values[f.name]
    return cls(**kwargs)


class SchemaSource(ConfigSource):
    """The configs ``schema/<package.module.Name>`` (`schema` of that target) and
    ``fields/<package.module.Name>`` (that dataclass), made when a config's `defaults` names one."""

    KINDS = ("schema", "fields")

    @staticmethod
    def scheme() -> str:
        return "gesturebench-schema"

    def _split(self, config_path: str) -> tuple[str, str] | None:
        kind, _, name = config_path.strip("/").removesuffix(".yaml").partition("/")
        return (kind, name) if kind in self.KINDS and "." in name and "/" not in name else None

    def load_config(self, config_path: str) -> ConfigResult:
        kind, name = self._split(config_path) or ("", "")
        try:
            node = schema(name) if kind == "schema" else checked_fields(name)
            config = OmegaConf.structured(node)
        except Exception as err:  # an unknown name or a schema OmegaConf refuses: one line
            raise ConfigLoadError(f"{config_path}: {one_line(err)}") from None
        return ConfigResult(
            config=config, path=self.full_path(), provider=self.provider, header={"package": None}
        )

    def available(self) -> bool:
        return True

    def is_group(self, config_path: str) -> bool:
        return config_path.strip("/") in self.KINDS

    def is_config(self, config_path: str) -> bool:
        return self._split(config_path) is not None

    def list(self, config_path: str, results_filter: ObjectType | None) -> list[str]:
        # schemas are made on demand, never offered as options
        if config_path == "" and results_filter in (None, ObjectType.GROUP):
            return list(self.KINDS)
        return []


class SchemaSearchPath(SearchPathPlugin):
    """Puts `SchemaSource` on Hydra's config search path."""

    def manipulate_search_path(self, search_path: ConfigSearchPath) -> None:
        search_path.append("gesturebench-schema", f"{SchemaSource.scheme()}://gesturebench")


@dataclass
class PathsConfig:
    """Where data, checkpoints and caches live. `root` defaults to the folder gesturebench is
    started from (the working folder of `python launch.py` or of the `gesturebench` command; Hydra
    does not change it, `hydra.job.chdir=false`)."""

    root: str = "${gb_cwd:}"
    data: str = "${paths.root}/data"
    checkpoints: str = "${paths.root}/checkpoints"
    cache: str = "${paths.root}/.cache"


@dataclass
class TrainerConfig:
    """`pytorch_lightning.Trainer` arguments of `conf/trainer/*`; any other Trainer argument can be
    added without code: `+trainer.<argument>=<value>`."""

    _target_: str = "pytorch_lightning.Trainer"
    accelerator: str = "cpu"
    devices: Any = 1
    strategy: str = "auto"
    num_nodes: int = 1
    precision: Any = 32
    enable_progress_bar: bool = True


@dataclass
class WandbLoggerConfig:
    """W&B through Lightning's WandbLogger (the run's name, folder and config are given at run time;
    `mode` and any other key go to `wandb.init`)."""

    _target_: str = "pytorch_lightning.loggers.WandbLogger"
    project: str = "gesturebench"
    entity: str | None = None
    mode: str = "offline"


@dataclass
class CSVLoggerConfig:
    """Lightning's CSVLogger (its folder and name are given at run time)."""

    _target_: str = "pytorch_lightning.loggers.CSVLogger"


@dataclass
class StudyWindowsConfig:
    file: str | None = None
    splits: list[str] = field(default_factory=lambda: ["test"])
    n: int = 15
    seconds: float = 10.0
    step: float = 0.5


@dataclass
class StudyConfig:
    """`conf/study/*`: the rated windows and sources, the ratings (`path`, or generated by
    `generator`), the analysis options, and the analysis it runs (`analyze`: a `_target_` node
    of a function of the run (`tasks.run.Run`) and this study node as plain containers,
    `tasks.analyze.analyze_study`)."""

    name: str = MISSING
    analyze: Any = MISSING
    path: str | None = MISSING
    drop_invalid: bool = False
    windows: StudyWindowsConfig = field(default_factory=StudyWindowsConfig)
    reference_source: str = "ground_truth"
    sources: dict[str, Any] = field(default_factory=dict)
    analysis: Any = MISSING
    generator: Any = None


@dataclass
class PairwiseStudyConfig:
    """`conf/study/pairwise.yaml`: a pairwise comparisons file (`path`), its analysis options and
    the analysis it runs (`analyze`, `tasks.analyze.analyze_pairwise`)."""

    name: str = "pairwise"
    analyze: Any = MISSING
    path: str = MISSING
    analysis: Any = MISSING


@dataclass
class StudyServerConfig:
    """`study_server`: the database of `task=study_server` and `task=study_export`, any
    SQLAlchemy URL; null: the SQLite file study.db in the study's folder
    (`tasks.study_server.database_url`)."""

    db_url: str | None = None


#: how a LaTeX table shows a bootstrap interval: ``value [lo, hi]``, ``value ± (hi − lo)/2``,
#: or not at all
LatexInterval = Literal["bracket", "pm", "none"]


@dataclass
class LatexOptions:
    """`report.latex`: the LaTeX tables of the sweep summaries and the leaderboard
    (docs/outputs.md, "LaTeX tables")."""

    interval: LatexInterval = "bracket"


@dataclass
class ReportConfig:
    """`report`: how results are written for reading (not part of a run's config hash)."""

    latex: LatexOptions = field(default_factory=LatexOptions)


def report_options(cfg: Any) -> ReportConfig:
    """The `report` options of the composed config `cfg` (the defaults where it has none: a
    config composed before they existed)."""
    node = cfg.get("report")
    return from_checked(ReportConfig, node) if node is not None else ReportConfig()


@dataclass
class Config:
    """The top level. The groups are typed by their options' schemas (`defaults` of each option);
    `metrics` holds any number of metrics, each typed by its own schema (and `protocol`, a pin)."""

    task: Any = MISSING
    dataset: Any = MISSING
    model: Any = MISSING
    metrics: dict[str, Any] = field(default_factory=dict)
    body_model: Any = MISSING
    encoder: Any = MISSING
    annotator: Any = MISSING
    study: Any = MISSING
    trainer: Any = MISSING
    stats: Any = MISSING
    logger: Any = None
    paths: PathsConfig = field(default_factory=PathsConfig)
    study_server: StudyServerConfig = field(default_factory=StudyServerConfig)
    report: ReportConfig = field(default_factory=ReportConfig)
    seed: int = 0
    threads: int | None = 1
    resume: bool = True
    length_policy: LengthPolicy = "truncate"
    max_length_gap: float = 1.0


def job_dirname(overrides: str, limit: int = 120) -> str:
    """A multirun job's folder name: its overrides, shortened with a hash beyond `limit` characters
    (file systems refuse names over 255 bytes), "default" when there are none. Deterministic, so
    re-running a sweep resumes it."""
    if len(overrides) <= limit:
        return overrides or "default"
    return f"{overrides[: limit - 17]}-{hashlib.sha256(overrides.encode()).hexdigest()[:16]}"


def fresh_dir(path: str) -> str:
    """`path`, or `path-1`, `path-2`, ... : the first that did not exist, created here (exclusively,
    so two runs started in the same second never share a run folder)."""
    base = Path(path)
    base.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    while True:
        candidate = base.with_name(f"{base.name}-{n}") if n else base
        try:
            candidate.mkdir()
            return str(candidate)
        except FileExistsError:
            n += 1


def register_configs() -> None:
    """Register the schemas' config source and the `${gb_cwd:}` / `${gb_jobdir:...}` /
    `${gb_fresh_dir:...}` resolvers (idempotent)."""
    if not OmegaConf.has_resolver("gb_cwd"):
        OmegaConf.register_new_resolver("gb_cwd", os.getcwd)
        OmegaConf.register_new_resolver("gb_jobdir", job_dirname)
        # cached: the run folder is created once per composed config, however often it is read
        OmegaConf.register_new_resolver("gb_fresh_dir", fresh_dir, use_cache=True)
    plugins = Plugins.instance()
    if SchemaSearchPath not in plugins.discover(SearchPathPlugin):
        plugins.register(SchemaSource)
        plugins.register(SchemaSearchPath)
