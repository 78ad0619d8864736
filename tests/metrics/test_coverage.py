"""Coverage maths (functional/coverage.py) against the prdc package and on features equal to the
reference. The metric class is tested with FGD in test_motion_features.py."""

from __future__ import annotations

import pytest

from gesturebench.metrics.functional.coverage import coverage
from tests.metrics.prdc_reference import (
    PRDC_CASES,
    assert_matches_prdc,
    assert_one_on_the_reference,
)

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.mark.parametrize("seed,k,n,m", PRDC_CASES)
def test_coverage_matches_prdc_package(seed, k, n, m):
    assert_matches_prdc(coverage, "coverage", seed, k, n, m)


@pytest.mark.parametrize("seed", range(5))
def test_coverage_of_features_equal_to_the_reference_is_exactly_one(seed):
    assert_one_on_the_reference(coverage, seed)
