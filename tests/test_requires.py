"""What a test needs from outside the checkout (tests/support/requires.py): a skip with the reason
on a developer's machine, a failure under CI."""

from __future__ import annotations

import pytest

from tests.support.requires import require_binary, require_shared


@pytest.mark.parametrize(
    "ci, outcome", [("true", pytest.fail.Exception), (None, pytest.skip.Exception)]
)
def test_a_missing_need_skips_or_fails_under_ci(ci, outcome, tmp_path, monkeypatch):
    if ci is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", ci)
    with pytest.raises(outcome, match=r"absent\.npz not found"):
        require_shared(tmp_path / "absent.npz")
    with pytest.raises(
        outcome, match="no-such-program not on PATH: apt-get install no-such-package"
    ):
        require_binary("sh", "no-such-program", package="no-such-package")


def test_what_is_there_is_returned(tmp_path):
    assert require_shared(tmp_path) == tmp_path
    (sh,) = require_binary("sh", package="dash")
    assert sh.endswith("/sh")
