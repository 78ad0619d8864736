"""div_sample (the GENEA Leaderboard's Div_sample) against a brute-force loop written from its
definition: per input, the K samples' poses cut to the shortest, each of the T × 165 pose values'
population variance across the samples, averaged; then the plain mean over inputs."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gesturebench.metrics.functional.sample_diversity import sample_diversity
from gesturebench.metrics.sample_diversity import SampleDiversity
from gesturebench.stats.bootstrap import Resamples


def brute_force(samples: list[np.ndarray]) -> float:
    """The loop: for every frame and pose value, Σ (x_k − mean)² / K; the mean of those."""
    frames = min(len(s) for s in samples)
    k = len(samples)
    total, count = 0.0, 0
    for t in range(frames):
        for d in range(samples[0].shape[1]):
            xs = [float(s[t, d]) for s in samples]
            mean = sum(xs) / k
            total += sum((x - mean) ** 2 for x in xs) / k
            count += 1
    return total / count


def poses(seed: int, k: int, lengths: tuple[int, ...]) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(max(lengths), 165))
    return [
        (base + rng.normal(scale=0.1 * (i + 1), size=base.shape))[:n]
        for i, n in zip(range(k), lengths)
    ]


def test_functional_equals_the_loop_with_unequal_lengths():
    samples = poses(0, 3, (20, 17, 25))  # cut to 17 frames
    assert float(sample_diversity(samples)) == pytest.approx(brute_force(samples), rel=1e-12)
    assert float(sample_diversity([samples[0], samples[0]])) == 0.0
    with pytest.raises(ValueError, match="at least 2"):
        sample_diversity(samples[:1])


def test_metric_is_the_plain_mean_over_inputs_with_its_bootstrap():
    inputs = {index: poses(index, 4, (n,) * 4) for index, n in ((3, 12), (0, 30), (7, 8))}
    metric = SampleDiversity()
    for index, samples in inputs.items():
        metric.update(index, samples)
    per_input = {i: brute_force(s) for i, s in inputs.items()}
    assert metric.compute()["div_sample"] == pytest.approx(np.mean(list(per_input.values())))
    rows = metric.per_sequence()
    assert {i: r["div_sample"] for i, r in rows.items()} == pytest.approx(per_input)
    resamples = Resamples.draw(list(inputs), 20, seed=1)
    drawn = metric.bootstrap(resamples)["div_sample"]
    order = [per_input[i] for i in resamples.indices]
    expected = resamples.counts @ np.array(order) / resamples.counts.sum(1)
    assert drawn == pytest.approx(expected, rel=1e-12)
    assert metric.total.dtype == torch.float64 and not metric.full_state_update


def test_without_several_samples_it_is_skipped_with_its_reason():
    assert "model.samples > 1" in (SampleDiversity().skip_reason() or "")
