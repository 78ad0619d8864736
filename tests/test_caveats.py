"""Caveats of degenerate outputs (docs/metrics.md, "Degenerate motion"): a motionless output is
detected from the motion, the metric named really rewards it, and the evaluator records it."""

from __future__ import annotations

import numpy as np
import torch

from gesturebench.annotation.backends.kinematic import KinematicAnnotator
from gesturebench.data.records import Motion, SemInterval
from gesturebench.metrics.base import annotated
from gesturebench.metrics.caveats import MOTIONLESS_REWARDS, degenerate_caveats, is_motionless
from gesturebench.metrics.sgp import SemanticGesturePreservation
from gesturebench.run.evaluator import FrameLog
from tests.support.sgp import context, pair, still_motion


def test_motionless_is_read_from_the_motion():
    still = still_motion(30)
    assert is_motionless(still)
    pose = np.tile(np.random.default_rng(0).normal(size=165), (30, 1))  # held, not zero
    assert is_motionless(Motion(pose, np.ones((30, 3)), np.zeros(10), np.zeros((30, 100))))
    moved = pose.copy()
    moved[10, 3] += 1e-3
    assert not is_motionless(Motion(moved, np.ones((30, 3)), np.zeros(10), np.zeros((30, 100))))


def test_caveats_only_when_every_sequence_is_motionless_and_the_value_exists():
    values = {"sgp": 1.0, "mjd": 0.3}
    assert degenerate_caveats([True, True], values) == {"sgp": MOTIONLESS_REWARDS["sgp"]}
    assert degenerate_caveats([True], {"sgp": None}) == {}
    assert degenerate_caveats([True, False], values) == {}
    assert degenerate_caveats([], values) == {}


def test_sgp_gives_a_motionless_output_its_best_value(tmp_path):
    """A held body's semantic events read `none`, never `beat`: SGP 1, the best."""
    sgp = SemanticGesturePreservation(annotator=KinematicAnnotator(), store_root=str(tmp_path))
    sgp.prepare(context(tmp_path))
    sem = [SemInterval("iconic", 1.0, 2.0, 0.5, "big"), SemInterval("deictic", 4.0, 5.0, 0.5, "me")]
    motion, joints = still_motion(240), torch.zeros(240, 55, 3)
    sgp.update(annotated(pair(0, "s", motion, motion, joints, joints, sem), sgp))
    assert sgp.compute()["sgp"] == 1.0


def test_frame_log_records_whether_each_sequence_is_motionless():
    log = FrameLog()
    log.update(3, 100, 0, True)
    log.update(1, 90, 2, False)
    assert log.compute() == {
        3: {"frames": 100, "dropped_frames": 0, "motionless": 1},
        1: {"frames": 90, "dropped_frames": 2, "motionless": 0},
    }
