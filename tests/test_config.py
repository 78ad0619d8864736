"""Config composition and instantiation: every option of every group composes against its registered
schema, every `_target_` builds, typos and wrong types fail when the config is composed."""

from __future__ import annotations

import copy
import datetime
import functools
import inspect
import json
import os
import shutil
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from hydra.core.hydra_config import HydraConfig
from hydra.errors import ConfigCompositionException
from hydra.types import RunMode
from hydra.utils import get_object
from omegaconf import DictConfig, OmegaConf

from gesturebench import cli
from gesturebench.models.base import GestureModel
from gesturebench.run.config import (
    MODEL_KEYS,
    build,
    build_model,
    job_dirname,
    register_configs,
    resolved,
)
from gesturebench.run.protocol import metric_nodes
from gesturebench.runtime import status
from gesturebench.runtime.errors import ConfigError, DataError
from gesturebench.study.pairwise import PairwiseOptions
from gesturebench.tasks.job import Job
from gesturebench.tasks.run import Run
from tests.helpers import CONF, REPO, composed
from tests.helpers import CONFIG_GROUPS as GROUPS

MODEL_KEYS_NAMES = [name for name, *_ in MODEL_KEYS]
#: overrides that an option needs to compose (mandatory values it leaves unset)
NEEDS = {
    "beat2": ("dataset.root=/data/BEAT2",),
    "beat2_speaker2": ("dataset.root=/data/BEAT2",),
    "precomputed": ("model.dir=/tmp/outputs",),
    "csv": ("study.path=/tmp/ratings.csv",),
}


def options(group: str) -> list[str]:
    return sorted(p.stem for p in (CONF / group).glob("*.yaml"))


def with_option(group: str, option: str, *extra: str, hydra: bool = False) -> DictConfig:
    """The config with `group=option` and what the option needs; a copy of the one composition per
    argument list (each option is composed here once, then built by its group's test)."""
    return copy.deepcopy(_with_option(group, option, *extra, hydra=hydra))


@functools.cache
def _with_option(group: str, option: str, *extra: str, hydra: bool = False) -> DictConfig:
    needs = () if (group, option) == ("logger", "csv") else NEEDS.get(option, ())
    return composed(f"{group}={option}", *needs, *extra, hydra=hydra)


def test_default_config_composes_and_resolves():
    cfg = composed()
    assert cfg.task.name == "evaluate"
    assert cfg.dataset.name == "mini_beat2"
    assert cfg.model._target_.endswith("GroundTruth")
    assert {"mjd", "pck"} <= set(cfg.metrics)
    assert Path(cfg.dataset.root).is_absolute()
    OmegaConf.to_container(cfg, resolve=True)


def test_paths_root_is_the_working_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cfg = composed()
    assert cfg.paths.root == str(tmp_path) and cfg.paths.checkpoints == f"{tmp_path}/checkpoints"
    assert cfg.body_model.checkpoints_dir == cfg.paths.checkpoints


@pytest.mark.parametrize("group", GROUPS)
def test_every_option_composes(group):
    for option in options(group):
        cfg = with_option(group, option)
        assert cfg[group] is not None or (group, option) == ("logger", "none")
        OmegaConf.to_container(cfg, resolve=True)


def extended(tmp_path: Path, group: str, body: str) -> Path:
    """A copy of conf/ with `conf/<group>/typo.yaml` = the group's first option + `body`."""
    conf = tmp_path / "conf"
    shutil.copytree(CONF, conf)
    base = "perturbed" if group == "model" else options(group)[0]  # emage's native: its name
    (conf / group / "typo.yaml").write_text(f"defaults:\n  - {base}\n  - _self_\n\n{body}\n")
    return conf


@pytest.mark.parametrize("group", GROUPS)
def test_typo_in_a_config_file_fails_at_compose_time(tmp_path, group):
    """Every group has a schema: a key it does not know, in any option's file, is refused (in a
    metrics preset: in a metric's entry, each typed by its metric's schema)."""
    body = "composite:\n  mistyped_key: 1" if group == "metrics" else "mistyped_key: 1"
    conf = extended(tmp_path, group, body)
    register_configs()
    with (
        initialize_config_dir(config_dir=str(conf), version_base="1.3"),
        pytest.raises(ConfigCompositionException, match="mistyped_key"),
    ):
        compose(config_name="config", overrides=[f"{group}=typo", *NEEDS.get(group, ())])


def test_typo_in_an_override_fails_at_once():
    with pytest.raises(ConfigCompositionException, match="splt"):
        composed("dataset.splt=test")
    with pytest.raises(ConfigCompositionException, match="resum"):
        composed("resum=false")
    with pytest.raises(ConfigCompositionException, match="latent_dims"):
        composed("encoder.latent_dims=3")
    with pytest.raises(ConfigCompositionException, match="attempt"):
        composed("task=annotate", "task.retry.attempt=3")
    with pytest.raises(ConfigCompositionException, match="levle"):
        composed("model=perturbed", "model.levle=0.1")
    with pytest.raises(ConfigCompositionException, match="sigmaa"):
        composed("metrics.bc.sigmaa=1")
    with pytest.raises(ConfigCompositionException, match="weights"):  # not emage's outputs option
        composed("model=emage", "model/source=outputs", "model.weights=/w")


@pytest.mark.parametrize(
    "override",
    [
        "max_length_gap=soon",
        "trainer.num_nodes=two",
        "encoder.window=wide",
        "body_model.chunk_size=big",
        "annotator.camera.size=large",
        "study.analysis.bootstrap=many",
        "metrics.fgd.encoder=emag",
        "metrics.density.encoder=motionae",
        "metrics.bc.threshold_frame=onset",
        "model=gesturelsm model.variant=shortcut2",
        # enumerated options, checked at compose time (no check at build time any more)
        "dataset.size=huge",
        "metrics.sgp.valid_from=gemini",
        "metrics.diversity.global_orient=random",
        "metrics.diversity.joints=fingers",
        "metrics.diversity.weighting=heavy",
        "metrics.fgd.sqrt_check=scipy",
        "metrics.srgr.sem_frames=floor",
        "metrics.bc.global_orient=random",
        "length_policy=pad",
        "task=annotate task.source=models",
        "task=review task.source=store",
        "task=study_server task.design.mode=ranking",
        "task=render task.conditions=[muted,loud]",
    ],
)
def test_wrong_type_fails_at_once(override):
    with pytest.raises(ConfigCompositionException):
        composed(*override.split())


@pytest.mark.parametrize(
    ("overrides", "encoder"),
    [
        (("metrics=paper",), "motion_ae"),
        (("metrics=paper", "dataset=beat2"), "emage"),
        (("metrics=paper", "dataset=beat2_speaker2"), "emage"),
        (("task=analyze", "study=synthetic", "dataset=beat2"), "emage"),
        (("metrics=emage2024",), "emage"),  # pinned: EMAGE's own evaluation
    ],
)
def test_learned_metrics_take_the_encoder_of_the_dataset_or_their_preset(overrides, encoder):
    """FGD's encoder is a value of the preset, or the dataset's `feature_encoder` it names; a
    dataset's name chooses nothing."""
    metrics = resolved(composed(*overrides, "dataset.root=/d").metrics)
    node = metrics["fgd"].get("metric", metrics["fgd"])
    assert node["encoder"] == encoder


def test_trainer_option_without_code_reaches_the_trainer():
    cfg = composed("+trainer.limit_test_batches=2", "+trainer.max_epochs=3")
    trainer = build(cfg.trainer, logger=False)
    assert trainer.limit_test_batches == 2 and trainer.max_epochs == 3


def test_mandatory_value_left_unset_is_one_line(capsys):
    cfg = composed("dataset=beat2", "metrics=none")
    with pytest.raises(SystemExit) as exit_:
        cli.run_task(cfg)
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err == "error: dataset.root is not set: add dataset.root=... to the command line"


@pytest.mark.parametrize("mode", [RunMode.RUN, RunMode.MULTIRUN])
def test_an_unexpected_exception_is_one_line_and_a_recorded_failure(
    mode, tmp_path, monkeypatch, capsys
):
    """A single run exits 1 at once; a multirun job returns (the sweep goes on); both leave
    error.json and the traceback file beside it."""
    register_configs()
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        cfg = compose(config_name="config", return_hydra_config=True)
    cfg.hydra.runtime.output_dir, cfg.hydra.mode = str(tmp_path), mode
    monkeypatch.setattr(cli, "build", lambda node: np.random.default_rng([-1]))
    previous = HydraConfig.instance().cfg
    HydraConfig.instance().set_config(cfg)
    try:
        with status.opened() as launched:
            if mode == RunMode.RUN:
                with pytest.raises(SystemExit) as exit_:
                    cli.run_task(cfg)
                assert exit_.value.code == 1
            else:
                assert cli.run_task(cfg) is None and launched.code == 1
    finally:
        HydraConfig.instance().cfg = previous
    assert capsys.readouterr().err.splitlines() == [
        "error: unexpected ValueError: expected non-negative integer"
        f" (traceback: {tmp_path / 'traceback.txt'})"
    ]
    error = json.loads((tmp_path / "error.json").read_text())
    assert error["error_type"] == "ValueError" and error["traceback_file"] == "traceback.txt"
    assert "default_rng" in (tmp_path / "traceback.txt").read_text()


# --- every `_target_` of every group builds -------------------------------------------------------


def test_tasks_build(tmp_path):
    for option in options("task"):
        node = with_option("task", option).task
        # a task's mandatory inputs (e.g. the study server's manifest) given a placeholder
        mandatory = tuple(f"task.{k}={tmp_path}" for k in node if OmegaConf.is_missing(node, k))
        task = build(with_option("task", option, *mandatory).task)
        assert task.name == option and callable(task)


def test_datasets_build():
    for option in options("dataset"):
        source = build(with_option("dataset", option).dataset)
        assert source.name == option


def sources(model: str) -> list[str]:
    """The `model/source` options `model` offers (none: it has no such group)."""
    choices = with_option("model", model, hydra=True).hydra.runtime.choices
    if "model/source" not in choices:
        return []
    offered = options("model/source")
    return [
        s
        for s in offered
        if s != "native" or (CONF / "model" / "native" / f"{model}.yaml").exists()
    ]


def test_models_build(tmp_path):
    (tmp_path / "seq.npz").touch()  # an outputs folder, as the outputs sources want at construction
    for option in options("model"):
        outputs = ("model/source=outputs",) if sources(option) else ()  # emage: not native
        node = with_option("model", option, *outputs).model
        if "dir" in node:
            node.dir = str(tmp_path)
        assert build_model(node).name


def binds(options: Any, **run_time: Any) -> None:
    """Every `_target_` of the plain config `options` resolves and takes its arguments (`run_time`:
    those given when it is built; a `_partial_` one: some of them), without building anything."""
    if isinstance(options, list):
        for value in options:
            binds(value)
    if not isinstance(options, dict):
        return
    for value in options.values():
        binds(value)
    if options.get("_target_", "???") != "???":  # "???": the user's (model/source=module's network)
        target = get_object(options["_target_"])
        arguments = {k: v for k, v in options.items() if not k.startswith("_")}
        if isinstance(target, type) and issubclass(target, GestureModel):
            arguments = {k: v for k, v in arguments.items() if k not in MODEL_KEYS_NAMES}
        signature = inspect.signature(target)
        bind = signature.bind_partial if options.get("_partial_") else signature.bind
        bind(**{**run_time, **arguments})


#: what a group's object is given when it is built, beside its config
RUN_TIME = {"logger": {"save_dir": "/tmp", "name": "run"}}


def every_option() -> Iterator[tuple[str, tuple[str, ...]]]:
    """(group, overrides) of every option of every group, and of each model with each source."""
    for group in GROUPS:
        for option in options(group):
            yield group, (f"{group}={option}",)
            if group == "model":
                for source in sources(option):
                    yield group, (f"model={option}", f"model/source={source}")


def test_every_option_of_every_group_composes_and_binds():
    """Each option (each model with each of its sources, each metric of each metrics preset)
    composes against its schema, and each of its `_target_`s takes the arguments it is given: a
    mistyped key or `_target_` fails here."""
    seen = set()
    for group, overrides in every_option():
        option = overrides[0].split("=")[1]
        node = with_option(group, option, *overrides[1:])[group]  # composed once, shared
        plain = OmegaConf.to_container(node, resolve=True, enum_to_str=True) if node else None
        binds(plain, **RUN_TIME.get(group, {}))
        seen.add(overrides)
    assert ("model=emage", "model/source=native") in seen
    assert ("model=semtalk", "model/source=module") in seen
    assert ("model=semtalk", "model/source=native") not in seen  # SemTalk is not run natively


def test_a_mistyped_key_or_target_fails_the_binding_check():
    with pytest.raises(TypeError, match="levle"):
        binds(
            {
                "_target_": "gesturebench.models.perturbed.Perturbed",
                "perturbation": {"_target_": "gesturebench.models.perturbed.Jitter"},
                "levle": 1,
            }
        )
    with pytest.raises(ImportError):
        binds({"_target_": "gesturebench.models.perturbed.Perturbd", "name": "p"})


@pytest.mark.parametrize(
    "kind, level",
    [
        ("rotation_noise", -1.0),
        ("jitter", -0.1),
        ("freeze", 1.5),
        ("beat_collapse", -0.5),
        ("time_shift", "nan"),
    ],
)
def test_perturbed_level_outside_its_range_is_refused(kind, level):
    node = composed("model=perturbed", f"model/perturbation={kind}", f"model.level={level}").model
    with pytest.raises(
        ConfigError, match=rf"^model.level={level} for model/perturbation={kind}: must be"
    ):
        build_model(node)


def test_perturbed_levels_inside_their_range_build():
    for kind, level in (("rotation_noise", 0), ("time_shift", -0.5), ("freeze", 1)):
        node = composed("model=perturbed", f"model/perturbation={kind}", f"model.level={level}")
        assert build_model(node.model).level == level


def test_dataset_fps_is_not_a_setting():
    """Motion carries its own frame rate (`mocap_frame_rate`); a dataset-wide fps is refused."""
    with pytest.raises(ConfigCompositionException, match="fps"):
        composed("dataset.fps=60")
    with pytest.raises(ConfigError, match=r"Beat2Source.*unexpected keyword argument 'fps'"):
        build(composed("+dataset.fps=60").dataset)


def test_an_enumerated_option_interpolates_as_its_value():
    """mini-BEAT2's default folder is named after its size's value (`Choice.default` once)."""
    cfg = composed("paths.data=/d")
    assert resolved(cfg)["dataset"]["root"] == "/d/mini_beat2_default"
    standard = composed("paths.data=/d", "dataset.size=standard")
    assert resolved(standard)["dataset"]["root"] == "/d/mini_beat2_standard"


def test_mini_beat2_is_not_generated_into_a_mistyped_root(config, tmp_path):
    typo = tmp_path / "mini_beat2_defualt"
    with pytest.raises(DataError, match=r"does not exist.*task=make_data dataset=mini_beat2"):
        Run.of(config(f"dataset.root={typo}"), Job())
    assert not typo.exists()


def test_metrics_build():
    """Every metric of every preset builds from its node and from what results.json and
    composites.json record of it (`resolved`: task=analyze rebuilds the composites' metrics from
    that; an enum option recorded as `Choice.auto` failed there)."""
    for option in options("metrics"):
        cfg = with_option("metrics", option)
        for name, node in metric_nodes(cfg.metrics).items():
            if name == "composite":  # fitted by task=analyze first: its path is not set
                with pytest.raises(ConfigError, match="metric composite needs path="):
                    build(node)
                continue
            assert build(node).name == name, (option, name)
            recorded = json.loads(json.dumps(resolved(node), default=str))
            assert build(recorded).name == name, (option, name, recorded)


@pytest.mark.parametrize(("preset", "offset"), [("emage2024", 0.0), ("emage2025", 1e-6)])
def test_emage_presets_pin_each_convention(preset, offset):
    metrics = {
        n: build(node) for n, node in metric_nodes(with_option("metrics", preset).metrics).items()
    }
    assert set(metrics) == {"fgd", "bc", "diversity", "div_sample"}
    assert metrics["fgd"].encoder_name == "emage" and metrics["fgd"].covariance_offset == offset
    assert metrics["bc"].options()["audio_segment"] == preset
    diversity = metrics["diversity"].options()
    assert (diversity["joints"], diversity["weighting"]) == ("all", "frames")
    # the 2025 code runs the body with zero global orientation for L1div too, the 2024 code does not
    assert diversity["global_orient"] == ("zero" if preset == "emage2025" else "keep")
    assert metrics["fgd"].sqrt_check == ("emage2024" if preset == "emage2024" else "none")


def test_body_model_builds(tmp_path):
    for option in options("body_model"):
        body_model = build(with_option("body_model", option).body_model, device="cpu")
        assert isinstance(body_model, torch.nn.Module)


def test_encoders_build():
    for option in options("encoder"):
        encoder = build(with_option("encoder", option).encoder)
        assert encoder.name == option
        assert encoder.checkpoint_path("/c", "d") == Path(f"/c/encoders/{option}-d.pt")


def test_annotators_build():
    for option in options("annotator"):
        annotator = build(with_option("annotator", option).annotator)
        assert annotator.name in (option, "gemini")  # replay answers as the annotator it replays


def test_studies_build():
    for option in options("study"):
        study = with_option("study", option).study
        analysis = build(study.analysis)
        assert callable(build(study.analyze))
        if isinstance(analysis, PairwiseOptions):  # comparisons from a file: nothing else
            continue
        assert analysis.reference_source == study.reference_source
        if study.generator is not None:
            assert build(study.generator).clips_per_participant > 0
        for node in study.sources.values():
            build(node)


def test_trainers_build():
    for option in options("trainer"):
        cfg = with_option("trainer", option)
        if cfg.trainer.accelerator == "gpu" and not torch.cuda.is_available():
            continue
        assert build(cfg.trainer, logger=False).num_devices == cfg.trainer.devices


def test_loggers_build(tmp_path):
    for option in options("logger"):
        node = with_option("logger", option).logger
        if node is None:
            assert option == "none"
            continue
        logger = build(node, save_dir=str(tmp_path), name="run")
        assert logger.name == "run" or option == "wandb"


def test_slurm_launcher_config_for_lightning():
    """`hydra/launcher=slurm` extends the plugin's `submitit_slurm` through its defaults list: no
    schema matched by name, which Hydra warns is deprecated."""
    register_configs()
    with (
        warnings.catch_warnings(),
        initialize_config_dir(config_dir=str(CONF), version_base="1.3"),
    ):
        warnings.simplefilter("error")
        cfg = compose(
            config_name="config",
            overrides=["hydra/launcher=slurm", "hydra.launcher.gpus_per_node=4"],
            return_hydra_config=True,
        )
    launcher = cfg.hydra.launcher
    assert launcher.signal_delay_s == 120 and launcher.partition is None  # the plugin's defaults
    assert launcher._target_.endswith("SlurmLauncher")
    assert launcher.tasks_per_node == launcher.gpus_per_node == 4  # one Lightning process per GPU
    pytest.importorskip("hydra_plugins.hydra_submitit_launcher")
    assert type(build(launcher)).__name__ == "SlurmLauncher"


def test_job_dirname_is_short_deterministic_and_distinct():
    assert job_dirname("model=emage") == "model=emage" and job_dirname("") == "default"
    long_a, long_b = "x" * 300 + "a", "x" * 300 + "b"
    assert len(job_dirname(long_a)) == 120 and job_dirname(long_a) == job_dirname(long_a)
    assert job_dirname(long_a) != job_dirname(long_b)


# --- packaging ------------------------------------------------------------------------------------


@pytest.mark.slow
def test_installed_wheel_runs_from_any_folder(tmp_path, sandbox, mini_beat2):
    """A non-editable install (the wheel, into a fresh target folder, reusing this environment's
    dependencies) runs `gesturebench` from a folder outside the checkout, with its packaged
    configs."""
    source, dist, target, work = (tmp_path / name for name in ("source", "dist", "site", "work"))
    for name in ("src", "conf"):  # a copy: building writes into the source folder
        shutil.copytree(REPO / name, source / name, ignore=shutil.ignore_patterns("*.egg-info"))
    for name in ("setup.py", "pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    work.mkdir()
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    # no network; without this checkout's src/ on PYTHONPATH (its package data would be missed)
    offline = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"PIP_NO_INDEX": "1"}
    subprocess.run(
        [*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", str(dist), str(source)],
        check=True,
        env=offline,
        cwd=tmp_path,
    )
    wheel = next(dist.glob("gesturebench-*.whl"))
    subprocess.run(
        [*pip, "install", "--no-deps", "--target", str(target), str(wheel)],
        check=True,
        env=offline,
        cwd=tmp_path,
    )
    env = {k: v for k, v in os.environ.items() if k != "HYDRA_FULL_ERROR"}
    env.update(PYTHONPATH=str(target), WANDB_MODE="offline", WANDB_SILENT="true")

    def gesturebench(*args: str) -> subprocess.CompletedProcess:
        """The installed console script, run from `work`."""
        command = [str(target / "bin" / "gesturebench"), *args]
        return subprocess.run(
            command, cwd=work, env=env, capture_output=True, text=True, timeout=600
        )

    shown = gesturebench("task=make_data", "--cfg", "job")
    assert shown.returncode == 0, shown.stderr[-3000:]
    cfg = OmegaConf.to_container(OmegaConf.create(shown.stdout))
    assert cfg["task"]["name"] == "make_data" and cfg["paths"]["root"] == "${gb_cwd:}"
    # a small evaluation: the session's mini-BEAT2, body model and caches, everything else in `work`
    run = gesturebench(
        "metrics=fast",
        "logger=none",
        "dataset.max_sequences=1",
        "task.render_clips=0",
        "trainer.enable_progress_bar=false",
        *sandbox.overrides,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    (results,) = (work / "outputs" / "evaluate").glob("*/*/results.json")
    document = json.loads(results.read_text())
    assert document["metrics"]["mjd"] == 0.0
    assert document["config"]["paths"]["root"] == str(work)  # the folder the command ran from
    import_path = subprocess.run(
        [sys.executable, "-c", "import gesturebench; print(gesturebench.__file__)"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert import_path.startswith(str(target))


def test_genea_preset_builds_the_leaderboards_metrics():
    metrics = {
        k: build(node) for k, node in metric_nodes(with_option("metrics", "genea").metrics).items()
    }
    leaderboard = ["fgd", "fd_g", "fd_k", "ba_a2m", "ba_m2a", "srgr", "div_pose", "div_k"]
    assert list(metrics) == [*leaderboard, "div_sample"]
    assert all(m.name == k for k, m in metrics.items())
    assert metrics["ba_a2m"].options()["direction"] == "audio_to_motion"
    assert metrics["ba_m2a"].options()["direction"] == "motion_to_audio"
    assert metrics["srgr"].options()["weight_scale"] == 0.1672
    assert metrics["div_pose"].options()["global_orient"] == "zero"


class _FrozenClock(datetime.datetime):
    """`datetime` whose `now()` is always the same second (two launches in the same second)."""

    @classmethod
    def now(cls, tz=None):
        return cls(2026, 1, 2, 3, 4, 5)


def run_folder(*overrides: str) -> Path:
    """The run folder a single run composed with `overrides` gets (resolved as Hydra does)."""
    register_configs()
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        cfg = compose(config_name="config", overrides=list(overrides), return_hydra_config=True)
    return Path(cfg.hydra.run.dir)


def test_runs_started_in_the_same_second_get_their_own_folders(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("hydra.core.utils.datetime", _FrozenClock)
    first, second, third = (run_folder() for _ in range(3))
    assert first == Path("outputs/evaluate/2026-01-02/03-04-05")
    assert second == first.with_name("03-04-05-1") and third == first.with_name("03-04-05-2")
    assert all(p.is_dir() for p in (first, second, third))


def test_a_run_folder_given_on_purpose_is_reused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert run_folder("hydra.run.dir=mine") == run_folder("hydra.run.dir=mine") == Path("mine")


def test_schemas_are_not_offered_as_group_options():
    register_configs()
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        loader = GlobalHydra.instance().config_loader()
        for group in GROUPS:
            assert loader.get_group_options(group) == options(group)


def test_a_config_group_set_as_a_key_names_the_group():
    """The old spelling ``model.source=outputs`` (a key then, a config group now) is one line
    naming the new one (exit 2, as a mistyped option)."""
    reason = cli.unknown_option(str(CONF), ["model=emage", "model.source=outputs"])
    assert reason == (
        "model.source=outputs: model/source is a config group, choose its option with "
        "model/source=outputs"
    )
    assert cli.unknown_option(str(CONF), ["model=emage", "model/source=outputs"]) is None
    reason = cli.unknown_option(str(CONF), ["model=emage", "model/source=comand"])
    assert reason is not None and "(did you mean command?)" in reason


def test_a_mistyped_group_option_names_the_closest():
    reason = cli.unknown_option(str(CONF), ["-m", "model=grond_truth,mean_pose", "seed=1"])
    assert reason is not None and reason.startswith("model=grond_truth is not an option of model")
    assert "(did you mean ground_truth?)" in reason and "_schema" not in reason
    assert cli.unknown_option(str(CONF), ["model=mean_pose", "hydra/launcher=joblib"]) is None


def test_a_mistyped_group_option_is_one_line_and_exit_2(monkeypatch, capsys):
    """`python launch.py model=grond_truth`, run in this process (`launch.py` runs `cli.launch`
    with the checkout's configs; the refusal comes before Hydra starts)."""
    monkeypatch.setattr(sys, "argv", [str(REPO / "launch.py"), "model=grond_truth"])
    with pytest.raises(SystemExit) as stop:
        cli.launch(str(CONF))
    err = capsys.readouterr().err
    assert stop.value.code == 2, err
    assert err.strip().splitlines() == [
        "error: model=grond_truth is not an option of model (did you mean ground_truth?); "
        f"options: {', '.join(options('model'))}"
    ]


def test_a_mistyped_group_option_is_refused_before_torch_is_imported(tmp_path):
    """The real process: `launch.py model=grond_truth` exits 2 with its line having imported
    neither torch nor Lightning (the command line imports them only where a run uses them), so a
    typo is answered in half a second, not after their seconds of imports."""
    probe = (
        "import atexit, runpy, sys; sys.argv = [sys.argv[1], 'model=grond_truth']\n"
        "atexit.register(lambda: print([m for m in ('torch', 'pytorch_lightning') if m in"
        " sys.modules]))\n"
        "runpy.run_path(sys.argv[0], run_name='__main__')"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(REPO / "launch.py")],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert (done.returncode, done.stdout.strip()) == (2, "[]"), done.stderr[-2000:]
    assert done.stderr.startswith("error: model=grond_truth is not an option of model")


def test_a_model_argument_of_the_wrong_type_fails_at_once():
    with pytest.raises(ConfigCompositionException, match="level"):
        composed("model=perturbed", "model.level=abc")


def test_the_saved_study_server_config_refuses_a_mode_outside_its_literal(tmp_path):
    """The restart entry reads server.yaml with the same check as the composed config: a mode
    that is neither rating nor pairwise is one line naming the file and key."""
    from gesturebench.study.server.serve import ServerOptions, load_config, save_config

    save_config(tmp_path, ServerOptions(manifest="m.csv"), "sqlite:///s.db")
    options, url = load_config(tmp_path, ["task.design.mode=pairwise", "task.port=8001"])
    assert (options.design.mode, options.port, url) == ("pairwise", 8001, "sqlite:///s.db")
    assert type(options) is ServerOptions  # the dataclass itself, not its checked copy
    refused = r"server\.yaml: task\.design\.mode: Invalid value 'ranking'"
    with pytest.raises(DataError, match=refused):
        load_config(tmp_path, ["task.design.mode=ranking"])
