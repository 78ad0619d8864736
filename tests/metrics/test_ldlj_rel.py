"""LDLJ_rel (ldlj_rel.py, functional/ldlj_rel.py): the minimum-jerk closed form, windows, still
joints."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
import torch
from scipy.signal import savgol_filter

from gesturebench.body.joints import UPPER
from gesturebench.body.output import BodyOutput
from gesturebench.metrics.functional.ldlj_rel import ldlj, windowed_ldlj
from gesturebench.metrics.ldlj_rel import LDLJRel
from tests.metrics.bodies import FPS, make_pair, synthetic_body

pytestmark = pytest.mark.usefixtures("one_thread")


# ---------------------------------------------------------------- LDLJ


def minimum_jerk(n: int, direction=(0.3, 0.2, -0.1)) -> torch.Tensor:
    tau = torch.linspace(0, 1, n, dtype=torch.float64)[:, None]
    return (10 * tau**3 - 15 * tau**4 + 6 * tau**5) * torch.tensor(direction, dtype=torch.float64)


def test_ldlj_of_minimum_jerk_is_minus_ln_720():
    p = minimum_jerk(91)  # 3 s at 30 fps: one window
    value = windowed_ldlj(p[:, None], FPS)  # unfiltered by default
    assert value == pytest.approx(-math.log(720), rel=0.01)
    assert float(ldlj(minimum_jerk(121), FPS)[0]) == pytest.approx(-math.log(720), rel=0.001)
    assert float(ldlj(2.5 * minimum_jerk(121), FPS)[0]) == pytest.approx(
        float(ldlj(minimum_jerk(121), FPS)[0])
    )
    noisy = (
        p
        + torch.randn(p.shape, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
        * 0.002
    )
    assert windowed_ldlj(noisy[:, None], FPS) < value - 1.0
    smoothed = functools.partial(windowed_ldlj, fps=FPS, savgol_window=9)
    assert smoothed(noisy[:, None]) < smoothed(p[:, None])


def test_unfiltered_ldlj_rel_reacts_to_5_mm_jitter():
    """5 mm of jitter on smooth upper-body motion moves the default (unfiltered) LDLJ_rel by several
    log units, and the Savitzky–Golay filter hides part of it (docs/metrics.md)."""
    ref = synthetic_body(120, 3)  # 4 s: one window
    noise = torch.randn(ref.joints.shape, generator=torch.Generator().manual_seed(1))
    gen = BodyOutput(ref.joints + 0.005 * noise, None)
    values = {}
    for window in (None, 9):
        metric = LDLJRel(savgol_window=window)
        metric.update(make_pair(0, gen, ref))
        values[window] = metric.compute()["ldlj_rel"]
    assert values[None] > 2.0
    assert values[None] > values[9] + 0.3


def test_windowed_ldlj_averages_smoothed_windows():
    joints = synthetic_body(300, 5).joints  # 10 s: windows start at 0, 2, 4 and 6 s
    upper = (joints[:, list(UPPER)] - joints[:, :1]).double()
    smoothed = torch.from_numpy(savgol_filter(upper.numpy(), 9, 3, axis=0))
    for p, window in ((upper, None), (smoothed, 9)):
        expected = np.mean([ldlj(p[s : s + 120], FPS)[0].numpy() for s in (0, 60, 120, 180)])
        assert windowed_ldlj(upper, FPS, savgol_window=window) == pytest.approx(expected, rel=1e-9)


def test_ldlj_leaves_out_still_joints():
    p = torch.stack(
        [minimum_jerk(91), torch.zeros(91, 3, dtype=torch.float64)], dim=1
    )  # second joint still
    assert windowed_ldlj(p, FPS, savgol_window=None) == pytest.approx(
        float(windowed_ldlj(p[:, :1], FPS, savgol_window=None))
    )
    assert math.isnan(windowed_ldlj(p[:, 1:], FPS))
    still = BodyOutput(torch.zeros(40, 55, 3), None)
    m = LDLJRel()
    m.update(make_pair(0, still, synthetic_body(40, 1)))
    assert m.compute()["ldlj_rel"] is None and "does not move" in m.skip_reason()
