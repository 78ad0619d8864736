"""Config schemas registered in Hydra's ConfigStore, the `${gb_...:}` resolvers, and `build`.

Every config group has a dataclass schema, so a mistyped key or a wrong type fails when the config
is composed, with Hydra's message. The schemas are top-level configs (not group options, so that no
group offers them as a choice); each group option lists its schema first in its `defaults`
(`- /<name>_schema` in `conf/<group>/<option>.yaml`), except `metrics` and some `model` options,
whose options take per-choice arguments: the top-level `Config` types them as open dicts, and a
model option may list its own (`model_schema`; `model=emage`: `offered_schema`, every option of
the sources it offers). Schemas of objects built
from a `_target_` are derived from the target (`schema`): a dataclass's fields or a constructor's
arguments, with their types and defaults, so an option is declared once, where it is used.
"""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
import os
import typing
from collections.abc import Iterator
from copy import deepcopy
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from hydra.core.config_store import ConfigStore
from hydra.errors import InstantiationException
from hydra.utils import get_object, instantiate
from omegaconf import MISSING, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from gesturebench.models.sources.choice import NATIVE, SOURCES, source_target
from gesturebench.runtime.atomic import one_line
from gesturebench.runtime.errors import ConfigError, GestureBenchError


def build(node: Any, **kwargs: Any) -> Any:
    """`hydra.utils.instantiate(node, **kwargs)` (containers converted to plain ones), with the
    target's own GestureBenchError, or a bad `_target_` or argument, as one clear error."""
    try:
        return instantiate(node, _convert_="all", **kwargs)
    except InstantiationException as err:
        cause = err.__cause__
        if isinstance(cause, GestureBenchError):
            raise cause from None
        # the whole message on one line: its first line names the target only, the next the problem
        raise ConfigError(one_line(err)) from None


def resolved(node: Any) -> dict:
    """The config `node` as a plain dict, interpolations resolved (what results files record)."""
    container = OmegaConf.to_container(node, resolve=True)
    assert isinstance(container, dict)
    return container


def _checkable(annotation: Any) -> Any:
    """`annotation` where OmegaConf can check values against it, else `Any`."""
    probe = dataclasses.make_dataclass("Probe", [("value", annotation, MISSING)])
    try:
        OmegaConf.structured(probe)
    except (OmegaConfBaseException, ValueError, TypeError):
        return Any
    return annotation


def _arguments(obj: Any) -> Iterator[tuple[str, Any, Any]]:
    """(name, annotation, default or MISSING) of each argument that `obj` (a dataclass, a class or
    a function) takes by name, with those of the base class where its constructor passes
    `**kwargs` on; a dataclass's default factory is called."""
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
    for name, param in parameters.items():
        if param.kind not in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            empty = param.default is inspect.Parameter.empty
            yield name, hints.get(name, Any), MISSING if empty else param.default
    if inspect.isclass(obj) and any(p.kind == p.VAR_KEYWORD for p in parameters.values()):
        # a constructor's **kwargs go on to its base class's constructor: take its arguments too
        owner = next(c for c in obj.__mro__ if "__init__" in vars(c))
        for argument in _arguments(owner.__mro__[1]):
            if argument[0] not in parameters:
                yield argument


def _fields(
    obj: Any, exclude: tuple[str, ...] = (), nested: dict[str, type] | None = None
) -> list[tuple[str, Any, Any]]:
    """The schema fields of the arguments `obj` takes (see `schema`)."""
    fields: list[tuple[str, Any, Any]] = []
    for name, annotation, default in _arguments(obj):
        if name in exclude:
            continue
        if nested and name in nested:
            fields.append((name, nested[name], field(default_factory=nested[name])))
        elif isinstance(annotation, type) and dataclasses.is_dataclass(annotation):
            inner = schema(f"{annotation.__module__}.{annotation.__qualname__}")
            fields.append((name, inner, field(default_factory=inner)))
        elif isinstance(default, (list, dict, tuple)):
            fields.append(
                (name, _checkable(annotation), field(default_factory=partial(deepcopy, default)))
            )
        else:
            fields.append((name, _checkable(annotation), field(default=default)))
    return fields


def schema(
    target: str,
    exclude: tuple[str, ...] = (),
    nested: dict[str, type] | None = None,
    with_target: bool = True,
) -> type:
    """The structured-config schema of the object `target` ("module.Name") builds: `_target_` and
    one field per argument (a dataclass's fields, else the constructor's parameters) with its type
    and default; an argument without default is a mandatory value (`???`), an argument typed by a
    dataclass a nested schema (so `instantiate` builds it too). `exclude` names the arguments given
    at run time (e.g. the device); `nested` types arguments that take a mapping by a schema (e.g. an
    annotator's `camera`); `with_target=False` leaves `_target_` out (a plain mapping). Frozen
    dataclasses are fine: the schema itself is not frozen."""
    fields: list[tuple[str, Any, Any]] = (
        [("_target_", str, field(default=target))] if with_target else []
    )
    fields += _fields(get_object(target), exclude, nested)
    return dataclasses.make_dataclass(f"{target.rsplit('.', 1)[-1]}Schema", fields)


def offered_schema(native: str) -> type:
    """The schema of a model YAML that offers every source of `SOURCES` and its own class `native`
    (``_target_: ${gb_source:${.source},${.native}}``): `source`, `native` and the arguments of all
    those classes (each once; `ResultSource.offered` passes each class its own), less `identity`,
    which each class gives its base itself."""
    fields: list[tuple[str, Any, Any]] = [
        ("_target_", str, field(default=MISSING)),
        ("source", str, field(default=NATIVE)),
        ("native", str, field(default=native)),
        ("samples", int, field(default=1)),  # not a constructor argument: models.sampling
    ]
    for target in (native, *(t.replace(":", ".") for t in SOURCES.values())):
        taken = {f[0] for f in fields}
        fields += [f for f in _fields(get_object(target), ("identity",)) if f[0] not in taken]
    return dataclasses.make_dataclass(f"{native.rsplit('.', 1)[-1]}OfferedSchema", fields)


def model_schema(target: str, exclude: tuple[str, ...] = ()) -> type:
    """The schema of a model option that builds `target`: its arguments plus `samples` (which
    `models.sampling` takes off before building), so that `model.level=abc` fails at composition."""
    return dataclasses.make_dataclass(
        f"{target.rsplit('.', 1)[-1]}ModelSchema",
        [("samples", int, field(default=1))],
        bases=(schema(target, exclude),),
    )


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
    `generator`), the analysis options."""

    name: str = MISSING
    path: str | None = MISSING
    drop_invalid: bool = False
    windows: StudyWindowsConfig = field(default_factory=StudyWindowsConfig)
    reference_source: str = "ground_truth"
    sources: dict[str, Any] = field(default_factory=dict)
    analysis: Any = MISSING
    generator: Any = None


@dataclass
class PairwiseStudyConfig:
    """`conf/study/pairwise.yaml`: a pairwise comparisons file (`path`) and its analysis options."""

    name: str = "pairwise"
    kind: str = "pairwise"
    path: str = MISSING
    analysis: Any = MISSING


@dataclass
class StudyServerConfig:
    """`study_server`: the database of `task=study_server` and `task=study_export`, any
    SQLAlchemy URL; null: the SQLite file study.db in the study's folder
    (`tasks.study_server.database_url`)."""

    db_url: str | None = None


@dataclass
class Config:
    """The top level. The groups are typed by their options' schemas (`defaults` of each option);
    `model` and `metrics` are open: their options' arguments differ per `_target_`."""

    task: Any = MISSING
    dataset: Any = MISSING
    model: dict[str, Any] = field(default_factory=dict)
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
    seed: int = 0
    threads: int | None = None
    resume: bool = True
    length_policy: str = "truncate"
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


def _schemas() -> dict[str, dict[str, Any]]:
    """group → schema name → node (the `<name>` that `conf/<group>/*.yaml` list in `defaults`)."""
    camera = schema("gesturebench.render.clips.Camera", with_target=False)
    return {
        "task": {
            f"{task}_schema": schema(f"gesturebench.tasks.{task}.{cls}")
            for task, cls in (
                ("evaluate", "EvaluateTask"),
                ("make_data", "MakeDataTask"),
                ("train_encoder", "TrainEncoderTask"),
                ("annotate", "AnnotateTask"),
                ("analyze", "AnalyzeTask"),
                ("study_server", "StudyServerTask"),
                ("study_export", "StudyExportTask"),
                ("leaderboard", "LeaderboardTask"),
                ("prepare_beat2", "PrepareBeat2Task"),
                ("render", "RenderTask"),
            )
        },
        "dataset": {"dataset_schema": schema("gesturebench.run.datamodule.Beat2Source")},
        "body_model": {
            "body_model_schema": schema("gesturebench.body.model.BodyModel", exclude=("device",))
        },
        "encoder": {
            "motion_ae_schema": schema("gesturebench.encoders.motion_ae_training.MotionAEConfig"),
            "text_motion_schema": schema("gesturebench.encoders.text_training.TextMotionConfig"),
        },
        "annotator": {
            f"{name}_schema": schema(
                f"gesturebench.annotation.backends.{target}", nested={"camera": camera}
            )
            for name, target in (
                ("kinematic", "kinematic.KinematicAnnotator"),
                ("gemini", "gemini.GeminiAnnotator"),
                ("openai", "openai_compat.OpenAICompatAnnotator"),
                ("replay", "replay.ReplayAnnotator"),
            )
        },
        "study": {
            "study_schema": StudyConfig,
            "analysis_schema": schema("gesturebench.study.analysis.AnalysisOptions"),
            "generator_schema": schema("gesturebench.study.synthetic.SyntheticStudy"),
            "pairwise_schema": PairwiseStudyConfig,
            "pairwise_analysis_schema": schema("gesturebench.study.pairwise.PairwiseOptions"),
        },
        "model": {
            "emage_schema": offered_schema("gesturebench.models.emage.source.EmageSource"),
            "gesturelsm_schema": offered_schema(
                "gesturebench.models.gesturelsm.source.GestureLSMSource"
            ),
            "ground_truth_schema": model_schema("gesturebench.models.reference.GroundTruth"),
            "mean_pose_schema": model_schema("gesturebench.models.baselines.MeanPose"),
            "random_clip_schema": model_schema("gesturebench.models.baselines.RandomClip"),
            "perturbed_schema": model_schema("gesturebench.models.perturbed.Perturbed"),
            "precomputed_schema": model_schema(
                "gesturebench.models.sources.outputs.OutputsSource", exclude=("identity",)
            ),
        },
        "trainer": {"trainer_schema": TrainerConfig},
        "stats": {"stats_schema": schema("gesturebench.stats.bootstrap.BootstrapOptions")},
        "logger": {"wandb_schema": WandbLoggerConfig, "csv_schema": CSVLoggerConfig},
    }


def register_configs() -> None:
    """Register the schemas and the `${gb_cwd:}` / `${gb_jobdir:...}` / `${gb_source:...}` /
    `${gb_fresh_dir:...}` resolvers (idempotent)."""
    if not OmegaConf.has_resolver("gb_cwd"):
        OmegaConf.register_new_resolver("gb_cwd", os.getcwd)
        OmegaConf.register_new_resolver("gb_jobdir", job_dirname)
        OmegaConf.register_new_resolver("gb_source", source_target)
        # cached: the run folder is created once per composed config, however often it is read
        OmegaConf.register_new_resolver("gb_fresh_dir", fresh_dir, use_cache=True)
    store = ConfigStore.instance()
    if "config_schema.yaml" in store.list(""):
        return
    for nodes in _schemas().values():
        for name, node in nodes.items():
            store.store(name=name, node=node)
    store.store(name="config_schema", node=Config)
