"""Several metrics at once (docs/metrics.md): identical motion scores perfectly, the classes equal
the functional maths averaged over sequences, CPU equals CUDA, two-process DDP equals one process
(diversity and the geometry metrics; BC, SRGR and SC), and the real BEAT2 sample."""

from __future__ import annotations

import itertools
import math
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest
import torch

from gesturebench.body.joints import UPPER
from gesturebench.body.output import BodyOutput
from gesturebench.data.records import Motion, Word
from gesturebench.encoders.text_motion import TextMotionModel, save_text_motion, text_motion_path
from gesturebench.encoders.text_training import TextMotionConfig
from gesturebench.metrics.bc import BeatConsistency
from gesturebench.metrics.chamfer import Chamfer
from gesturebench.metrics.context import MetricContext
from gesturebench.metrics.dice import Dice
from gesturebench.metrics.diversity import Diversity
from gesturebench.metrics.foot_contact import FootContact
from gesturebench.metrics.functional.dice import bone_raster, dice
from gesturebench.metrics.functional.diversity import l1_diversity
from gesturebench.metrics.functional.foot_contact import contact_rate
from gesturebench.metrics.functional.ldlj_rel import windowed_ldlj
from gesturebench.metrics.functional.surface import chamfer_hausdorff
from gesturebench.metrics.hausdorff import Hausdorff
from gesturebench.metrics.ldlj_rel import LDLJRel
from gesturebench.metrics.pair import MotionPair
from gesturebench.metrics.sc import SemanticScore
from gesturebench.metrics.srgr import SemanticRelevanceRecall
from tests.distributed import run_distributed
from tests.metrics.bodies import FPS, make_pair, synthetic_body, synthetic_pair
from tests.metrics.speech import MEAN_SPEED, bc_pairs, srgr_pairs

pytestmark = pytest.mark.usefixtures("one_thread")


def all_metrics(num_points: int | None = None):
    surface = {"num_points": num_points}
    return [Diversity(), Chamfer(**surface), Hausdorff(**surface), Dice(), FootContact(), LDLJRel()]


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


def functional_values(pair: MotionPair) -> dict[str, float]:
    """Each metric's value for one pair, from the functional layer (checked above) and independent
    loops."""
    gen, ref = pair.gen_body, pair.ref_body
    chamfer, hausdorff = chamfer_hausdorff(
        ref.root_aligned_vertices(), gen.root_aligned_vertices(), "kdtree"
    )
    r_gen, r_ref = (float(contact_rate(body.vertices, FPS)) for body in (gen, ref))

    def upper(j):
        return j[:, list(UPPER)] - j[:, :1]

    l_gen, l_ref = (float(windowed_ldlj(upper(body.joints), FPS)) for body in (gen, ref))
    return {
        "diversity": diversity_loop(gen.joints.double().numpy()),
        "diversity_ref": diversity_loop(ref.joints.double().numpy()),
        "chamfer": float(chamfer.mean()),
        "hausdorff": float(hausdorff.mean()),
        "dice": float(dice(bone_raster(ref.joints), bone_raster(gen.joints))),
        "foot_contact": abs(r_ref - r_gen),
        "contact_rate_gen": r_gen,
        "contact_rate_ref": r_ref,
        "ldlj_rel": l_ref - l_gen,
        "ldlj_gen": l_gen,
        "ldlj_ref": l_ref,
    }


def test_metric_classes_mean_over_sequences():
    pairs = [synthetic_pair(i, t=8 + i) for i in (4, 1, 7)]
    metrics = all_metrics()
    for pair in pairs:
        for m in metrics:
            m.update(pair)
    expected = [functional_values(p) for p in pairs]
    for m in metrics:
        result = m.compute()
        assert set(result) == set(m.value_names)
        per_seq = m.per_sequence()
        assert sorted(per_seq) == [1, 4, 7]
        for name in m.value_names:
            assert result[name] == pytest.approx(
                np.mean([e[name] for e in expected]), rel=1e-6, abs=1e-12
            )
            assert per_seq[7][name] == pytest.approx(expected[2][name], rel=1e-6, abs=1e-12)
    assert l1_diversity(pairs[0].gen_body.joints) == pytest.approx(
        expected[0]["diversity"], rel=1e-9
    )
    assert len({e["dice"] for e in expected}) == 3 and all(0 < e["dice"] < 1 for e in expected)
    directions = {m.name: m.direction for m in metrics}
    assert directions == {
        "diversity": "higher",
        "chamfer": "lower",
        "hausdorff": "lower",
        "dice": "higher",
        "foot_contact": "lower",
        "ldlj_rel": "zero",
    }
    assert metrics[5].options() == {
        "window_s": 4.0,
        "hop_s": 2.0,
        "savgol_window": None,
        "savgol_order": 3,
        "min_path": 1e-3,
    }
    assert metrics[4].options() == {
        "height": 0.03,
        "speed": 0.10,
        "percentile": 1.0,
        "min_points": 2,
    }
    assert metrics[3].options() == {"cell": 0.005, "extent": 2.0}


def _ddp_worker(rank: int, world: int, n: int):
    torch.set_num_threads(1)
    metrics = all_metrics(num_points=1000)  # a subsample keeps two processes on two cores quick
    for i in range(rank, n, world):
        pair = synthetic_pair(i, t=12)
        for m in metrics:
            m.update(pair)
    out = {}
    for m in metrics:
        out.update(m.compute())
        with m.sync_context():
            out[m.name + "/per_sequence"] = m.per_sequence()
    return out


def test_distributed_equals_one_process():
    n = 5
    single = _ddp_worker(0, 1, n)
    ddp = run_distributed(_ddp_worker, n)
    assert set(ddp) == set(single)
    for key, value in single.items():
        if key.endswith("/per_sequence"):
            assert sorted(ddp[key]) == list(range(n))
            for i in range(n):
                assert ddp[key][i] == pytest.approx(value[i], rel=1e-12)
        else:
            assert ddp[key] == pytest.approx(value, rel=1e-12)


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


# ---------- DDP: BC, SRGR and SC in one two-process run (spawning processes is the slow part) ----


def sc_pairs(n):
    """Sequences of 5–9 s with words; generated motion = reference motion plus noise (SC ignores the
    body)."""
    rng = np.random.default_rng(5)
    body = BodyOutput(torch.zeros(1, 55, 3), None)
    pairs = []
    for i in range(n):
        t = 150 + 30 * i
        ref = Motion(
            rng.normal(0, 0.2, (t, 165)),
            rng.normal(0, 0.1, (t, 3)),
            np.zeros(10),
            np.zeros((t, 100)),
        )
        gen = Motion(
            ref.poses + rng.normal(0, 0.3, ref.poses.shape), ref.trans, ref.betas, ref.expressions
        )
        words = [
            Word(["there", "big", "idea", "really", "the"][k % 5], 0.6 * k, 0.6 * k + 0.4)
            for k in range(t // 18)
        ]
        pairs.append(MotionPair(i, f"s{i}", gen, ref, body, body, words=words))
    return pairs


def _metrics_and_pairs(n, sc_checkpoint):
    sc = SemanticScore(checkpoint=sc_checkpoint)
    sc.prepare(
        MetricContext(
            "toy", lambda split: [], Path(sc_checkpoint).parent, Path(sc_checkpoint).parent, None
        )
    )
    return [
        (BeatConsistency(mean_speed=MEAN_SPEED), bc_pairs(n)),
        (SemanticRelevanceRecall(), srgr_pairs(n)),
        (sc, sc_pairs(n)),
    ]


@pytest.fixture(scope="module")
def sc_checkpoint(tmp_path_factory):
    """An untrained (seeded) text–motion model: DDP equality does not need a good one."""
    torch.manual_seed(0)
    path = text_motion_path(tmp_path_factory.mktemp("ckpt"), "toy")
    save_text_motion(TextMotionModel(), path, asdict(TextMotionConfig()), {})
    return str(path)


def _ddp_speech(rank, world, n, sc_checkpoint):
    out = []
    for metric, pairs in _metrics_and_pairs(n, sc_checkpoint):
        for p in pairs[rank::world]:
            metric.update(p)
        value = metric.compute()
        with metric.sync_context():  # as the evaluator reads the per-sequence table
            out.append((value, metric.per_sequence()))
    return out


@pytest.mark.slow  # two gloo processes over every metric: about a minute
def test_ddp_with_odd_sequence_count_equals_single_process(sc_checkpoint):
    ddp = run_distributed(_ddp_speech, 5, sc_checkpoint)
    for (metric, pairs), (value, per_seq) in zip(_metrics_and_pairs(5, sc_checkpoint), ddp):
        tol = 1e-6 if isinstance(metric, SemanticScore) else 1e-12  # SC's encoder runs in float32
        for p in pairs:
            metric.update(p)
        assert value == pytest.approx(metric.compute(), abs=tol)
        expected = metric.per_sequence()
        assert sorted(per_seq) == list(range(5))
        for i, row in per_seq.items():
            assert row == pytest.approx(expected[i], abs=tol)
