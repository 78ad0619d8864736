"""The command line's boundary, in this process (fast tier): a mistyped key, a bad value, a user's
YAML file with a tag or a syntax error, a read-only run folder and a full disk each end in one
`error:` line and exit 2, without a traceback; random valid and invalid overrides either compose or
end so (hypothesis). `--cfg job` composes and prints the config without running a task."""

from __future__ import annotations

import errno
import os
import string
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import strategies as st
from omegaconf import OmegaConf

from gesturebench import cli
from gesturebench.api import run_job
from tests.helpers import CONF, composed
from tests.launch import Stop, error_line, isolated
from tests.support.fuzz import tiers


def launched(capsys: pytest.CaptureFixture, *args: str) -> Stop:
    """`python launch.py ARGS` in this process (`cli.launch`, which `launch.py`'s `launch_process`
    runs): its exit status and output."""
    capsys.readouterr()
    argv = ["launch.py", *args]
    with isolated(), mock.patch.object(sys, "argv", argv), pytest.raises(SystemExit) as stop:
        cli.launch(str(CONF))
    out, err = capsys.readouterr()
    return Stop(stop.value.code, out, err)


def composes(capsys: pytest.CaptureFixture, *overrides: str) -> Stop:
    return launched(capsys, "--cfg", "job", *overrides)


def test_a_mistyped_key_names_the_closest_keys(capsys):
    line = error_line(composes(capsys, "metrics.fgd.encoderr=x"))
    assert "metrics.fgd.encoderr=x: metrics.fgd has no key encoderr" in line
    assert "did you mean encoder" in line and "+metrics" not in line
    line = error_line(composes(capsys, "model=precomputed", "model.dirr=/tmp"))
    assert "model has no key dirr (did you mean dir?)" in line
    # a missing node on the way: the closest keys of the deepest node that exists
    assert "metrics has no key fgdd (did you mean fgd?)" in error_line(
        composes(capsys, "metrics.fgdd.encoder=x")
    )


def test_a_bad_value_or_override_is_one_line(capsys):
    assert "seed=abc" in error_line(composes(capsys, "seed=abc"))
    assert "model.samples=[1:" in error_line(composes(capsys, "model.samples=[1"))
    assert "already at 'seed'" in error_line(composes(capsys, "+seed=1"))


@pytest.fixture
def user_configs(tmp_path) -> Path:
    """A user's config folder (`--config-dir`) with a model option holding a `!!python` tag (which
    would run `touch` if it were constructed) and one that is not valid YAML."""
    (tmp_path / "model").mkdir()
    ran = tmp_path / "ran"
    (tmp_path / "model" / "tagged.yaml").write_text(
        f'name: tagged\nx: !!python/object/apply:os.system ["touch {ran}"]\n'
    )
    (tmp_path / "model" / "broken.yaml").write_text("name: broken\nx: [1, 2\n")
    return tmp_path


def test_a_user_yaml_with_a_tag_or_a_syntax_error_is_one_line(user_configs, capsys):
    folder = str(user_configs)
    line = error_line(composes(capsys, "--config-dir", folder, "model=tagged"))
    assert f"{user_configs / 'model' / 'tagged.yaml'}, line 2" in line and "tag" in line
    assert not (user_configs / "ran").exists()
    line = error_line(composes(capsys, "--config-dir", folder, "model=broken"))
    assert f"{user_configs / 'model' / 'broken.yaml'}, line 3" in line


@pytest.fixture
def read_only(tmp_path) -> Iterator[Path]:
    """A folder this process cannot write to: read-only permissions, or for root (who ignores
    them) a read-only tmpfs mount; skipped where neither is possible."""
    folder = tmp_path / "read_only"
    folder.mkdir()
    if os.geteuid() != 0:
        folder.chmod(0o555)
        yield folder
        folder.chmod(0o755)
        return
    mount = ["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", str(folder)]
    if subprocess.run(mount, capture_output=True).returncode != 0:
        pytest.skip("root, and no read-only tmpfs can be mounted here")
    yield folder
    subprocess.run(["umount", "--lazy", str(folder)], check=True)


def test_a_read_only_run_folder_is_one_line(read_only, capsys):
    run_dir = read_only / "run"
    line = error_line(launched(capsys, f"hydra.run.dir={run_dir}", "logger=none"))
    assert str(run_dir) in line and ("read-only" in line or "permission denied" in line)


def test_a_full_disk_is_one_line_with_the_free_space(tmp_path, capsys, monkeypatch):
    """ENOSPC while the task writes, and again while the error record is written: one line naming
    the file and the free space of its folder, exit 2, no second traceback."""
    full = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def no_space(*args, **kwargs):
        raise full

    monkeypatch.setattr(cli, "build", no_space)  # the task is built, then run
    monkeypatch.setattr(cli, "write_atomic", no_space)
    cfg = composed(f"hydra.run.dir={tmp_path / 'run'}", "logger=none", hydra=True)
    capsys.readouterr()
    with isolated(), pytest.raises(SystemExit) as stop:
        run_job(cfg, cli.run_task)
    out, err = capsys.readouterr()
    line = error_line(Stop(stop.value.code, out, err))
    assert f"no space left on device: {tmp_path / 'run'} has " in line and "free" in line
    assert not list((tmp_path / "run").glob("error.json"))


# --- random overrides: either the config composes, or one line and exit 2 -----------------------


def _leaves(node: object, prefix: str = "") -> Iterator[tuple[str, object]]:
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _leaves(value, f"{prefix}{key}.")
    else:
        yield prefix[:-1], node


LEAVES = dict(_leaves(OmegaConf.to_container(composed(), resolve=False)))
GROUPS = sorted(p.name for p in CONF.iterdir() if p.is_dir() and not p.name.startswith("_"))
WORDS = st.text(string.ascii_lowercase + "_", min_size=1, max_size=8)


def _value(current: object) -> st.SearchStrategy[str]:
    """A value of the same kind as `current`, as command-line text."""
    if isinstance(current, bool):
        return st.sampled_from(["true", "false"])
    if isinstance(current, int):
        return st.integers(-5, 1000).map(str)
    if isinstance(current, float):
        return st.floats(-10, 10, allow_nan=False).map(repr)
    return WORDS


def _mutated(key: str) -> st.SearchStrategy[str]:
    """`key` with one letter inserted, removed or replaced."""
    return st.tuples(
        st.integers(0, len(key) - 1), st.sampled_from("abcdex_"), st.integers(0, 2)
    ).map(lambda t: key[: t[0]] + (t[1], t[1] + key[t[0]], "")[t[2]] + key[t[0] + 1 :])


_keys = st.sampled_from(sorted(LEAVES))
OVERRIDE = st.one_of(
    _keys.flatmap(lambda k: _value(LEAVES[k]).map(lambda v: f"{k}={v}")),  # valid kind
    _keys.flatmap(_mutated).map(lambda k: f"{k}=1"),  # a mistyped key
    _keys.flatmap(
        lambda k: st.sampled_from(["abc", "[1", "{a:", "1.5", "null"]).map(lambda v: f"{k}={v}")
    ),  # a value of another kind
    st.tuples(st.sampled_from(GROUPS) | WORDS, WORDS).map("=".join),  # unknown group or option
)


def overrides_property(capsys, overrides):
    """Up to three drawn overrides compose, or end in one line, exit 2, no traceback."""
    stop = composes(capsys, *overrides)
    assert "Traceback" not in stop.err + stop.out
    if stop.code != 0:
        error_line(stop)


(
    test_random_overrides_compose_or_are_one_line,
    test_random_overrides_compose_or_are_one_line_many,
) = tiers(st.lists(OVERRIDE, min_size=1, max_size=3), fast=8, slow=40)(overrides_property)
