"""Connecting by address to a Ray head that requires a token (Ray 2.59 and later).

A head started by ``ray start --head`` where a token exists requires it; ``ray.init`` with an
address sends it only in token mode, so ``--ray-address`` (or ``RAY_ADDRESS``) failed with
``InvalidAuthToken`` unless the user also set ``RAY_AUTH_MODE=token``. Here a real head runs
in its own session, home and temporary folder (not the machine's ``/tmp/ray``, which other
tests' local Rays use), and a fresh interpreter with only the token file connects to it."""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from uncobench_z3.models.providers._local import _free_loopback_port

ray = pytest.importorskip("ray", reason='Ray is not installed (pip install "uncobench-z3[ray]")')
pytestmark = pytest.mark.ray

CONNECT_AND_RUN = """
import sys
import ray
from uncobench_z3._ray import connect

connect(sys.argv[1])
print(ray.get(ray.remote(lambda: 6 * 7).remote()))
"""


def _environment(home: Path, **more: str) -> dict[str, str]:
    kept = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    return {**kept, "HOME": str(home), **more}


@pytest.fixture
def head_requiring_a_token() -> Iterator[tuple[str, Path]]:
    """The head's address and the home whose ``.ray/auth_token`` it requires."""
    # (what the connection calls: Ray 2.59 and later)
    pytest.importorskip(
        "ray._private.authentication.authentication_token_setup",
        reason=f"Ray {ray.__version__} has no token authentication by default",
    )
    program = Path(sys.executable).with_name("ray")
    if not program.exists():
        pytest.skip(f"no ray program beside {sys.executable}")
    # (short: Ray's socket paths under it must stay within the 107 bytes a socket allows)
    root = Path(tempfile.mkdtemp(prefix="ubt", dir="/tmp"))
    home = root / "home"
    (home / ".ray").mkdir(parents=True)
    (home / ".ray" / "auth_token").write_text(secrets.token_hex(32))
    port = _free_loopback_port()
    command = [
        str(program), "start", "--head", "--block",
        f"--port={port}", "--num-cpus=1", "--include-dashboard=false",
        f"--temp-dir={root / 'r'}", "--disable-usage-stats",
    ]  # fmt: skip
    head = subprocess.Popen(
        command,
        env=_environment(home, RAY_AUTH_MODE="token"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # its processes are stopped as one group, and only they
    )
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if head.poll() is not None or time.monotonic() > deadline:
                    pytest.skip("a Ray head could not start here")
                time.sleep(0.2)
        yield f"127.0.0.1:{port}", home
    finally:
        # ``ray start --block`` stops its processes on a signal to it alone (about 1.5 s);
        # signalled with them, it waited for what was already gone
        head.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            head.wait(timeout=30)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(head.pid, signal.SIGKILL)
        head.wait()
        shutil.rmtree(root, ignore_errors=True)


def test_an_address_reaches_a_head_that_requires_the_token(
    head_requiring_a_token: tuple[str, Path],
) -> None:
    address, home = head_requiring_a_token
    run = subprocess.run(
        [sys.executable, "-c", CONNECT_AND_RUN, address],
        env=_environment(home),  # the token file, no RAY_AUTH_MODE
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split()[-1] == "42"
