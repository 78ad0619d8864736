"""The reference k-NN balls of Density and Coverage (functional/neighbour.py): hand-worked radii."""

from __future__ import annotations

import pytest
import torch

from gesturebench.metrics.functional.neighbour import knn_radii

pytestmark = pytest.mark.usefixtures("one_thread")


def test_knn_radii_hand_worked_and_too_few_points():
    x = torch.tensor([[0.0], [1.0], [3.0], [7.0]])
    assert knn_radii(x, 1, chunk_size=3).tolist() == [1.0, 1.0, 2.0, 4.0]
    assert knn_radii(x, 2, chunk_size=3).tolist() == [3.0, 2.0, 3.0, 6.0]
    with pytest.raises(ValueError, match="more than 4"):
        knn_radii(x, 4)
