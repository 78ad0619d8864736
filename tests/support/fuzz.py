"""Property tests in two tiers: the fast tier tries a few of each property's cases, the slow tier
(`slow` marker) many more, so that the suite's slow run tries well over a thousand generated
inputs while the fast tier stays fast.

    test_reader, test_reader_many = tiers(motion_files(), fast=40, slow=400)(reader_property)

Both share `BASE`: no deadline (the machine is shared), derandomized (a failure in CI is the
same failure here), function-scoped fixtures allowed (each case resets what it uses)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

BASE = settings(
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def tiers(*strategies: Any, fast: int, slow: int, **named: Any) -> Callable:
    """A decorator turning the property `body` (its arguments drawn from `strategies`, `named`,
    as `hypothesis.given` takes them) into (the fast tier's test of `fast` cases, the slow tier's
    of `slow`)."""

    def decorate(body: Callable) -> tuple[Callable, Callable]:
        quick = settings(BASE, max_examples=fast)(given(*strategies, **named)(body))
        many = settings(BASE, max_examples=slow)(given(*strategies, **named)(body))
        return quick, pytest.mark.slow(many)

    return decorate
