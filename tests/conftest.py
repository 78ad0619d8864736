"""Shared fixtures: the session's sandbox (temporary data, cache and checkpoints folders; no test
writes into the checkout), mini-BEAT2 generated there once, a config composed against it, and the
real BEAT2 sample folder and EMAGE's files (skipped with a reason where absent, failed under CI)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.support.requires import BEAT2_SAMPLE, EMAGE_DIR, require_shared

if TYPE_CHECKING:
    from omegaconf import DictConfig

    from tests.launch import Sandbox

# The package and the run helpers (`tests.launch`: gesturebench.cli, pytorch_lightning, ~8 CPU-s of
# imports) are imported in the fixtures, which run in the workers: pytest-xdist's controller loads
# this file too, before it starts them, and needs none of it.


@pytest.fixture(scope="session", autouse=True)
def sandbox(tmp_path_factory) -> Iterator[Sandbox]:
    """The session's temporary `paths.*` folders; every `tests.launch` run uses them (and trains
    mini-BEAT2's encoders there on its first call). Tests never reach the Hugging Face Hub: it is
    offline, with an empty cache of the session's own (here and in launched runs)."""
    from huggingface_hub import constants

    import tests.launch

    tests.launch.SANDBOX = tests.launch.Sandbox(tmp_path_factory.mktemp("sandbox"))
    hf_cache = str(tmp_path_factory.mktemp("hf_cache"))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.setenv("HF_HUB_CACHE", hf_cache)
        mp.setattr(constants, "HF_HUB_OFFLINE", True)
        mp.setattr(constants, "HF_HUB_CACHE", hf_cache)
        yield tests.launch.SANDBOX
    tests.launch.SANDBOX = None


@pytest.fixture(scope="session")
def mini_beat2(sandbox) -> Path:
    """mini-BEAT2 (default size), generated once into the sandbox."""
    from gesturebench.synthesis.mini.dataset import ensure_mini_beat2

    return ensure_mini_beat2(sandbox.data / "mini_beat2_default")


@pytest.fixture(scope="session")
def config(sandbox) -> Callable[..., DictConfig]:
    """`composed(*overrides)` with the sandbox's folders."""
    from tests.helpers import composed

    return lambda *overrides: composed(*sandbox.overrides, *overrides)


@pytest.fixture(scope="session")
def beat2_sample() -> Path:
    """The real BEAT2 sample's folder (`tests.support.requires`: skipped where absent, a failure
    under CI)."""
    require_shared(BEAT2_SAMPLE / "2_scott_0_1_1.npz")
    return BEAT2_SAMPLE


@pytest.fixture(scope="session")
def emage_mean_speed() -> Path:
    """EMAGE's released BC speed normaliser (`tests.support.requires`: skipped where absent, a
    failure under CI)."""
    from gesturebench.metrics.bc import EMAGE_MEAN_SPEED

    return require_shared(EMAGE_DIR / EMAGE_MEAN_SPEED)


@pytest.fixture
def in_process() -> Iterator[Callable[..., Any]]:
    """`tests.launch.run`, with what a run changes process-wide put back afterwards
    (`tests.launch.isolated`), so that the next test starts as a fresh process would."""
    from tests.launch import isolated, run

    with isolated():
        yield run


# A three-model sweep with the basic launcher, shared by the sweep/resume and parallel-launcher
# tests.
SWEEP_MODELS = "model=ground_truth,mean_pose,random_clip"
SWEEP_ARGS = (
    "~metrics.chamfer",
    "~metrics.hausdorff",
    "~metrics.foot_contact",
    "~metrics.bc",
    "~metrics.sc",
    "~metrics.sgp",
    "logger=none",
    "dataset.max_sequences=2",
    "task.render_clips=0",
)


@pytest.fixture(scope="session")
def basic_sweep(tmp_path_factory):
    """(sweep folder, completed process) of `launch.py -m SWEEP_MODELS SWEEP_ARGS`."""
    from tests.launch import launch

    sweep = tmp_path_factory.mktemp("basic") / "sweep"
    return sweep, launch("-m", SWEEP_MODELS, *SWEEP_ARGS, f"hydra.sweep.dir={sweep}", timeout=1200)


@pytest.fixture(scope="session", autouse=True)
def session_one_thread() -> Iterator[None]:
    """One thread for torch and for every BLAS/OpenMP pool for the whole session, as a run's
    default `threads=1` sets them (a test or run may still set its own; runs in this process put
    the counts back afterwards): on the shared 2-core machine, two threads make torch's float64
    LAPACK calls (eigh, svd) up to a hundred times slower, the small ops of the in-process runs
    slower too, and a BLAS pool spins for a core the other worker holds."""
    from gesturebench.runtime.threads import thread_budget

    with thread_budget(1):
        yield


@pytest.fixture(scope="module")
def one_thread() -> Iterator[None]:
    """One thread per pool again for a module (`session_one_thread`), whatever an earlier test
    left."""
    from gesturebench.runtime.threads import thread_budget

    with thread_budget(1):
        yield


@pytest.fixture(scope="session")
def mini_records(mini_beat2) -> dict:
    """Mini-BEAT2's records by split (no audio)."""
    from gesturebench.data.beat2 import Beat2Dataset

    return {
        s: [d[i] for i in range(len(d))]
        for s in ("train", "val", "test")
        for d in [Beat2Dataset(mini_beat2, s, load_audio=False)]
    }


@pytest.fixture(scope="session")
def trained_sc(mini_records, tmp_path_factory):
    """SC with its text–motion model auto-trained on mini-BEAT2 once per session (as the evaluate
    task does without a checkpoint), and its context; one torch thread while training."""

    from gesturebench.metrics.context import MetricContext
    from gesturebench.metrics.sc import SemanticScore
    from gesturebench.runtime.threads import thread_budget

    ckpt_dir = tmp_path_factory.mktemp("checkpoints")
    ctx = MetricContext(
        "mini_beat2",
        mini_records.__getitem__,
        ckpt_dir / "cache",
        ckpt_dir,
        body_model=None,
        auto_train=True,
    )
    metric = SemanticScore()
    with thread_budget(1):
        metric.prepare(ctx)
    return metric, ctx


# The study windows of `rendered_stimuli`: task=analyze on the same overrides finds the same ones.
RENDERED_WINDOWS = ("study.windows.n=4", "study.windows.seconds=2")


@pytest.fixture(scope="session")
def rendered_stimuli(tmp_path_factory) -> Path:
    """`task=render` as `launch.py` runs it, in this process, small (the synthetic study's five
    sources on four windows of 2 s, both conditions, 48 px): its manifest.csv, rendered once per
    session."""
    from tests.launch import isolated, run

    out = tmp_path_factory.mktemp("render") / "run"
    with isolated():
        run(
            "task=render",
            "study=synthetic",
            *RENDERED_WINDOWS,
            "task.camera.size=48",
            "threads=1",
            "logger=none",
            f"hydra.run.dir={out}",
            encoders=False,
        )
    return out / "stimuli" / "manifest.csv"


@pytest.fixture(scope="module")
def metrics_table():
    """`tests.support.study_analysis.random_metrics_table`, once per module."""
    from tests.support.study_analysis import random_metrics_table

    return random_metrics_table()


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory) -> tuple[Path, str]:
    """(checkpoints folder, file) of `tests.support.feature_metrics.tiny_checkpoint`."""
    from tests.support.feature_metrics import tiny_checkpoint

    path = tmp_path_factory.mktemp("checkpoints")
    return path, tiny_checkpoint(path)


@pytest.fixture(scope="module")
def sc_checkpoint(tmp_path_factory) -> str:
    """An untrained (seeded) text–motion model: DDP equality and intervals do not need a good
    one."""
    from tests.metrics.tester import save_sc_checkpoint

    return save_sc_checkpoint(tmp_path_factory.mktemp("ckpt"))
