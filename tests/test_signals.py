"""The process boundary through real `launch.py` processes: a stopping signal mid-run (SIGTERM, or
SIGHUP mid-sweep) exits 128 + its number with error.json naming it, nothing half-written, and the
re-run completes (a sweep's finished job is resumed, not redone); a disk that fills mid-run is one
line with the free space; a mistyped key exits 2. A run is stopped while it provably works: at its
first batch, held there by `tests/stalled_launch.py`."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path

import pytest

from tests.helpers import REPO
from tests.launch import Stop, command, error_line, launch, results

pytestmark = pytest.mark.slow

#: a small quick evaluation (no trained encoder needed)
SMALL = ("metrics=fast", "logger=none", "dataset.max_sequences=2", "task.render_clips=0")


class Stalled:
    """`launch.py OVERRIDES` in a process whose `nth` evaluation stalls at its first batch."""

    def __init__(self, tmp_path: Path, *overrides: str, nth: int = 1):
        self.marker = tmp_path / "working"
        cmd, env = command(*overrides)
        cmd[1:2] = [str(REPO / "tests" / "stalled_launch.py"), str(self.marker), str(nth)]
        self.process = subprocess.Popen(
            cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )

    def working(self, timeout: float = 600) -> None:
        """Wait until the run stalls at its batch."""
        end = time.monotonic() + timeout
        while not self.marker.exists():
            assert self.process.poll() is None, self.process.communicate()[1][-3000:]
            assert time.monotonic() < end, "the run never reached its first batch"
            time.sleep(0.2)

    def stop(self, signum: int | None = None) -> Stop:
        """Send `signum` (or let the run go on), then wait for the process to end."""
        if signum is None:
            self.marker.unlink()
        else:
            self.process.send_signal(signum)
        out, err = self.process.communicate(timeout=600)
        return Stop(self.process.returncode, out, err)


def stopped_by(stop: Stop, signum: int, job: Path) -> None:
    """The run ended by `signum`: its exit status, one line, error.json naming it, and no results
    or temporary file in its folder `job`."""
    name = signal.Signals(signum).name
    assert stop.code == 128 + signum, stop.err[-3000:]
    assert "Traceback" not in stop.err
    lines = [line for line in stop.err.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and f"stopped by {name}" in lines[0], stop.err[-3000:]
    error = json.loads((job / "error.json").read_text())
    assert error["signal"] == name and error["exit_code"] == 128 + signum
    assert not (job / "results.json").exists()
    assert not [p for p in job.rglob("*") if ".tmp" in p.name]


def test_sigterm_mid_run_stops_it_and_the_rerun_completes(tmp_path):
    run_dir = tmp_path / "run"
    run = Stalled(tmp_path, *SMALL, f"hydra.run.dir={run_dir}")
    run.working()
    stopped_by(run.stop(signal.SIGTERM), signal.SIGTERM, run_dir)
    again = launch(*SMALL, f"hydra.run.dir={run_dir}", encoders=False)
    assert again.returncode == 0, again.stderr[-3000:]
    assert results(run_dir)["complete"]
    assert not (run_dir / "error.json").exists() and not (run_dir / "traceback.txt").exists()


def test_sighup_mid_sweep_stops_it_and_the_rerun_resumes(tmp_path):
    """Its first job finishes, the second is stopped; the re-run skips the first and completes the
    second."""
    sweep = tmp_path / "sweep"
    args = ("-m", "model=ground_truth,mean_pose", *SMALL, f"hydra.sweep.dir={sweep}")
    run = Stalled(tmp_path, *args, nth=2)
    run.working()
    stop = run.stop(signal.SIGHUP)
    (job,) = [p for p in sweep.iterdir() if "mean_pose" in p.name]
    stopped_by(stop, signal.SIGHUP, job)
    (done,) = [p for p in sweep.iterdir() if "ground_truth" in p.name]
    finished = (done / "per_sequence.csv").stat().st_mtime_ns
    again = launch(*args, encoders=False)
    assert again.returncode == 0, again.stderr[-3000:]
    assert (again.stdout + again.stderr).count("skipped (resume=true)") == 1
    assert (done / "per_sequence.csv").stat().st_mtime_ns == finished  # not scored again
    assert results(job)["complete"] and not (job / "error.json").exists()


@pytest.fixture
def small_disk(tmp_path) -> Iterator[Path]:
    """A 1 MiB tmpfs (root only; skipped elsewhere)."""
    folder = tmp_path / "disk"
    folder.mkdir()
    mount = ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(folder)]
    if subprocess.run(mount, capture_output=True).returncode != 0:
        pytest.skip("no tmpfs can be mounted here (needs root)")
    yield folder
    subprocess.run(["umount", "--lazy", str(folder)], check=True)


def test_a_disk_full_mid_run_is_one_line(tmp_path, small_disk):
    run_dir = small_disk / "run"
    run = Stalled(tmp_path, *SMALL, f"hydra.run.dir={run_dir}")
    run.working()
    with suppress(OSError), (small_disk / "filler").open("wb", buffering=0) as filler:
        while True:  # to the disk's last byte
            filler.write(b"\0" * 4096)
    line = error_line(run.stop())
    assert "no space left on device" in line and str(run_dir) in line and "free" in line
    assert not [p for p in run_dir.rglob("*") if ".tmp" in p.name]


def test_a_mistyped_key_exits_2_in_a_process():
    line = error_line(launch("metrics.fgd.encoderr=x", encoders=False))
    assert "did you mean encoder" in line
