"""`runtime.process_exit.exit_process`: a process ended by it has run its exit handlers, flushed
what it printed and logged, and exits with the status asked for; one with a non-daemon thread still
running exits the ordinary way (the thread finishes). Real processes: only a process shows this."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

PROGRAM = """
import atexit, logging, sys, threading, time
from pathlib import Path
from gesturebench.runtime.process_exit import exit_process

out = Path(sys.argv[1])
atexit.register(lambda: (out / "atexit").write_text("ran"))
logging.basicConfig(filename=out / "run.log", level=logging.INFO)
logging.getLogger("job").info("logged before the exit")
sys.stdout.write("printed without a newline")
if sys.argv[2] == "thread":
    threading.Thread(target=lambda: (time.sleep(0.5), (out / "thread").write_text("done"))).start()
code = sys.argv[3]
exit_process(None if code == "none" else int(code) if code.isdigit() else code)
"""


def run(tmp_path: Path, thread: str, code: str, **streams) -> subprocess.CompletedProcess:
    program = tmp_path / "program.py"
    program.write_text(textwrap.dedent(PROGRAM))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # stdout buffered
    return subprocess.run(
        [sys.executable, str(program), str(tmp_path), thread, code],
        **(streams or {"capture_output": True}),
        text=True,
        timeout=120,
        env=env,
    )


@pytest.mark.parametrize(("code", "status"), [("3", 3), ("0", 0), ("none", 0)])
def test_the_exit_handlers_ran_and_the_output_is_flushed(tmp_path, code, status):
    done = run(tmp_path, "no-thread", code)
    assert done.returncode == status, done.stderr
    assert done.stdout == "printed without a newline"
    assert (tmp_path / "atexit").read_text() == "ran"
    assert "logged before the exit" in (tmp_path / "run.log").read_text()


def test_a_live_thread_is_waited_for(tmp_path):
    done = run(tmp_path, "thread", "4")
    assert done.returncode == 4, done.stderr
    assert (tmp_path / "thread").read_text() == "done"
    assert (tmp_path / "atexit").read_text() == "ran"


def test_a_message_exits_1_with_it_on_stderr(tmp_path):
    done = run(tmp_path, "no-thread", "stopped: a message")
    assert done.returncode == 1
    assert done.stderr.strip() == "stopped: a message"


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize("code", ["0", "3"])
def test_output_that_cannot_be_written_exits_120_as_python_does(tmp_path, code):
    """stdout on a full device: the buffered line cannot be flushed; Python's own exit gives 120
    (and says so on stderr), and so does `exit_process`, whatever the status asked for."""
    with open("/dev/full", "w") as full:
        plain = subprocess.run(
            [sys.executable, "-c", f"import sys; sys.stdout.write('x'); sys.exit({code})"],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            env={k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"},
            timeout=120,
        )
        done = run(tmp_path, "no-thread", code, stdout=full, stderr=subprocess.PIPE)
    assert plain.returncode == done.returncode == 120, (plain.stderr, done.stderr)
    assert "No space left on device" in done.stderr
    assert (tmp_path / "atexit").read_text() == "ran"
