"""Every metric class through one harness (tests/metrics/tester.py: `compute` equals the functional
twin, two-process DDP equals one process, the bootstrap interval holds the value), a class list
that makes a new metric class join it, and several metrics at once (docs/metrics.md): identical
motion scores perfectly, CPU equals CUDA, the real BEAT2 sample."""

from __future__ import annotations

import importlib
import itertools
import math
import pkgutil

import numpy as np
import pytest
import torch

import gesturebench.metrics as metrics_package
from gesturebench.body.output import BodyOutput
from gesturebench.data.records import Motion
from gesturebench.metrics.base import GestureMetric, SequenceMetric, SequenceValues
from gesturebench.metrics.chamfer import Chamfer
from gesturebench.metrics.composite import CompositeRatings, DerivedMetric, PerSequence
from gesturebench.metrics.dice import Dice
from gesturebench.metrics.diversity import Diversity
from gesturebench.metrics.foot_contact import FootContact
from gesturebench.metrics.functional.dice import bone_raster, dice
from gesturebench.metrics.functional.diversity import l1_diversity
from gesturebench.metrics.hausdorff import Hausdorff
from gesturebench.metrics.ldlj_rel import LDLJRel
from gesturebench.metrics.motion_features import MotionFeatureMetric
from gesturebench.metrics.neighbour import NeighbourMetric
from gesturebench.metrics.sgp import SemanticGesturePreservation
from gesturebench.metrics.surface import SurfaceMetric
from tests.distributed import run_distributed
from tests.metrics.bodies import make_pair, synthetic_body, synthetic_pair
from tests.metrics.tester import (
    CASES,
    SLOW,
    check_ddp,
    check_interval,
    check_twin,
    on_rank,
)

pytestmark = pytest.mark.usefixtures("one_thread")


def all_metrics():
    return [Diversity(), Chamfer(), Hausdorff(), Dice(), FootContact(), LDLJRel()]


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_all_metrics_agree_between_cpu_and_cuda():
    pair = synthetic_pair(3, t=300)
    cuda_pair = make_pair(
        3, *(BodyOutput(b.joints.cuda(), b.vertices.cuda()) for b in (pair.gen_body, pair.ref_body))
    )
    for metric in all_metrics():
        cpu_value = metric.__class__()
        cpu_value.update(pair)
        metric.to("cuda").update(cuda_pair)
        for name, value in cpu_value.compute().items():
            assert metric.compute()[name] == pytest.approx(value, rel=1e-6, abs=1e-12), name


# ---------------------------------------------------------------- metric classes


def test_identical_motion_scores_perfectly():
    body = synthetic_body(20, 9)
    copy = BodyOutput(body.joints.clone(), body.vertices.clone())
    values = {}
    for m in all_metrics():
        m.update(make_pair(0, copy, body))
        values.update(m.compute())
    assert values["chamfer"] == 0.0 and values["hausdorff"] == 0.0
    assert values["dice"] == 1.0 and values["foot_contact"] == 0.0 and values["ldlj_rel"] == 0.0
    assert values["diversity"] == values["diversity_ref"] > 0
    assert 0 < values["contact_rate_gen"] < 1  # the synthetic feet step on and off the floor


def diversity_loop(joints: np.ndarray) -> float:
    p = joints[:, [*range(1, 22), *range(25, 55)]] - joints[:, :1]  # body+hands, root excluded
    mean = p.mean(axis=0)
    return float(np.mean([np.abs(p[t] - mean).sum() for t in range(p.shape[0])]))


def test_functional_layer_equals_plain_loops_and_options_are_recorded():
    """The harness checks the classes against the functional layer; here the functional values
    against loops, on sequences whose Dice all differ, and the options the classes record."""
    pairs = [synthetic_pair(i, t=8 + i) for i in (4, 1, 7)]
    for pair in pairs:
        for body in (pair.gen_body, pair.ref_body):
            assert l1_diversity(body.joints) == pytest.approx(
                diversity_loop(body.joints.double().numpy()), rel=1e-9
            )
    dices = [
        float(dice(bone_raster(p.ref_body.joints), bone_raster(p.gen_body.joints))) for p in pairs
    ]
    assert len(set(dices)) == 3 and all(0 < d < 1 for d in dices)
    assert LDLJRel().options() == {
        "window_s": 4.0,
        "hop_s": 2.0,
        "savgol_window": None,
        "savgol_order": 3,
        "min_path": 1e-3,
    }
    assert FootContact().options() == {
        "height": 0.03,
        "speed": 0.10,
        "percentile": 1.0,
        "min_points": 2,
    }
    assert Dice().options() == {"cell": 0.005, "extent": 2.0}


# ---------------------------------------------------------------- every metric class: the harness

#: Metric classes the harness leaves to their own tests, and why.
ELSEWHERE = {
    SemanticGesturePreservation: "reads the annotation stage's store (test_sgp.py, DDP included)",
    PerSequence: "wraps another metric (test_composite.py, DDP included)",
    CompositeRatings: "predicts from other metrics' values (test_composite.py, DDP included)",
}
#: Bases, not metrics.
BASES = {
    GestureMetric,
    SequenceValues,
    SequenceMetric,
    DerivedMetric,
    SurfaceMetric,
    NeighbourMetric,
    MotionFeatureMetric,
}
FAST = [name for name in CASES if name not in SLOW]
TWINS = [name for name, case in CASES.items() if case.sequence or case.pooled]


def metric_classes() -> set[type]:
    """Every `GestureMetric` class defined in a module of `gesturebench.metrics`."""
    found = set()
    for info in pkgutil.iter_modules(metrics_package.__path__, metrics_package.__name__ + "."):
        module = importlib.import_module(info.name)
        found |= {
            c
            for c in vars(module).values()
            if isinstance(c, type) and issubclass(c, GestureMetric) and c.__module__ == info.name
        }
    return found


def test_every_metric_class_has_a_case_or_a_reason():
    built = {type(CASES[name].build()) for name in FAST} | set(SLOW.values())
    assert metric_classes() - BASES == built | set(ELSEWHERE)
    assert not built & set(ELSEWHERE)


@pytest.mark.parametrize("name", TWINS)
def test_class_equals_its_functional_twin(name):
    check_twin(CASES[name])


@pytest.mark.parametrize("name", FAST)
def test_bootstrap_interval_holds_the_value(name):
    check_interval(CASES[name])


@pytest.fixture(scope="module")
def two_processes() -> dict[str, tuple]:
    """Every fast case on two gloo processes, in one call (the pool is spawned once a session)."""
    return run_distributed(on_rank, FAST)


@pytest.mark.slow  # two processes run every case, then one process each: over 15 s on 2 cores
@pytest.mark.parametrize("name", FAST)
def test_two_process_ddp_equals_one_process(name, two_processes):
    check_ddp(name, two_processes[name], on_rank(0, 1, [name])[name])


@pytest.mark.slow  # loads the sentence encoder in three processes
def test_sc_on_two_processes_and_its_interval():
    check_ddp("sc", run_distributed(on_rank, ["sc"])["sc"], on_rank(0, 1, ["sc"])["sc"])
    check_interval(CASES["sc"])


# ---------------------------------------------------------------- the real BEAT2 sample


@pytest.fixture(scope="module")
def beat2_body(beat2_sample):
    model = pytest.importorskip(
        "gesturebench.body.model", reason="the body model is not in the tree yet"
    )
    from gesturebench.data.beat2 import read_motion_npz

    return model.BodyModel(), read_motion_npz(beat2_sample / "2_scott_0_1_1.npz").frames(0, 300)


def perturbed(motion: Motion, level: float) -> Motion:
    poses = motion.poses.copy()
    noise = np.random.default_rng(0).normal(size=poses[:, 3:66].shape)
    poses[:, 3:66] += level * noise  # body joints only
    return Motion(poses, motion.trans, motion.betas, motion.expressions, motion.fps)


def test_real_sample_gives_finite_values(beat2_body):
    model, motion = beat2_body
    pair = make_pair(0, model(perturbed(motion, 0.05)), model(motion))
    metrics = [
        Diversity(),
        Chamfer(num_points=2000),
        Hausdorff(num_points=2000),
        Dice(),
        FootContact(),
        LDLJRel(),
    ]
    values = {}
    for m in metrics:
        m.update(pair)
        values.update(m.compute())
    assert all(v is not None and math.isfinite(v) for v in values.values()), values
    assert values["chamfer"] > 0 and 0 < values["dice"] < 1
    assert (
        values["ldlj_rel"] > 0
    )  # frame-wise noise makes the generated motion jerkier than the capture


def test_real_sample_worse_with_more_noise(beat2_body):
    model, motion = beat2_body
    strided = Motion(
        motion.poses[::10], motion.trans[::10], motion.betas, motion.expressions[::10], motion.fps
    )
    ref = model(strided)
    scores = []
    for level in (0.02, 0.08, 0.3):
        pair = make_pair(0, model(perturbed(strided, level)), ref)
        row = {}
        for m in (Chamfer(), Hausdorff(), Dice()):
            m.update(pair)
            row.update(m.compute())
        scores.append(row)
    for a, b in itertools.pairwise(scores):
        assert (
            b["chamfer"] > a["chamfer"]
            and b["hausdorff"] > a["hausdorff"]
            and b["dice"] < a["dice"]
        ), scores


def test_vertex_metrics_ask_for_vertices():
    from gesturebench.metrics.chamfer import Chamfer
    from gesturebench.metrics.foot_contact import FootContact
    from gesturebench.metrics.hausdorff import Hausdorff

    assert Chamfer.needs_vertices and Hausdorff.needs_vertices and FootContact.needs_vertices
