"""Other programs writing to the store while a test reads it: the stand-in agent (``tests/agent.py``) and the
``oxmem`` command line, each run as a real process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def signals_as_at_a_terminal() -> None:
    """A ``preexec_fn`` for a child a test will signal: its signals handled by default and none blocked, as a shell
    at a terminal starts a program — not as the test runner was started. A job started with ``&`` from a script,
    ``nohup`` or ``trap "" INT`` ignores SIGINT, a child inherits an ignored signal, and Python then installs no
    KeyboardInterrupt for it: Ctrl-C sent to such a child does nothing."""
    for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(number, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, ())


def has_open(proc: subprocess.Popen, path: Path, seconds: float = 120) -> None:
    """Wait until the child ``proc`` holds ``path`` open (it is past its imports and into its work), or fail."""
    deadline = time.monotonic() + seconds
    fds = Path(f"/proc/{proc.pid}/fd")
    while proc.poll() is None and time.monotonic() < deadline:
        try:
            if any(os.readlink(fd) == str(path) for fd in fds.iterdir()):
                return
        except OSError:  # a descriptor closed while the folder was read
            pass
        time.sleep(0.01)
    raise AssertionError(f"{path.name} was never opened by the child (exit {proc.poll()})")


def start_agent(db: Path, *args: str, ready: Path | None = None) -> subprocess.Popen:
    """``python -m tests.agent DB …`` as its own process; with ``ready``, wait until it has begun writing."""
    extra = ["--ready", str(ready)] if ready else []
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.agent", str(db), *args, *extra],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    if ready is not None:
        deadline = time.monotonic() + 60
        while not ready.exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"agent did not start: {proc.communicate()}")
            time.sleep(0.01)
    return proc


def agent_report(proc: subprocess.Popen) -> dict:
    """The agent's one-line JSON report, once it has exited (successfully)."""
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1])


def agent(db: Path, *args: str) -> dict:
    """Run the agent to completion and return its report."""
    return agent_report(start_agent(db, *args))


def oxmem(*argv: str) -> subprocess.CompletedProcess:
    """The ``oxmem`` command line in its own process (deterministic embeddings)."""
    return subprocess.run(
        [sys.executable, "-c", "import sys; from oxmem_gui.cli import main; sys.exit(main())", *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "OXMEM_EMBEDDING": "deterministic"},
    )


def without_write_override() -> None:
    """In a child, before it runs Python: root without ``CAP_DAC_OVERRIDE`` (dropped from the bounding set, so the
    new program never gets it) cannot write a file of mode 0444, as any other user cannot — no ``chattr`` needed
    (a minimal Debian 13 has none)."""
    import ctypes

    pr_capbset_drop, cap_dac_override = 24, 1
    if ctypes.CDLL(None, use_errno=True).prctl(pr_capbset_drop, cap_dac_override, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP, CAP_DAC_OVERRIDE)")
