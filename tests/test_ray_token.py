"""Connecting by address to a Ray head that requires a token (Ray 2.59 and later), or not.

A head started by ``ray start --head`` where a token exists requires it; ``ray.init`` with an
address sends it only in token mode, so ``--ray-address`` (or ``RAY_ADDRESS``) failed with
``InvalidAuthToken`` unless the user also set ``RAY_AUTH_MODE=token``. Token mode also makes
the driver refuse the calls of a cluster without authentication: every actor's creation was
cancelled. Here a real head runs in its own session, home and temporary folder (not the
machine's ``/tmp/ray``, which other tests' local Rays use), and a fresh interpreter with only
the token file connects to it; an address where no Ray answers is refused in one line."""

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


@ray.remote(num_cpus=1)
class Answer:  # eval's shards are actors
    def get(self):
        return 42


print(ray.get(Answer.remote().get.remote(), timeout=60))
"""


def _environment(home: Path, **more: str) -> dict[str, str]:
    kept = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    return {**kept, "HOME": str(home), **more}


@contextlib.contextmanager
def _head(auth_mode: str) -> Iterator[tuple[str, Path]]:
    """A head started with ``RAY_AUTH_MODE=auth_mode`` where a token exists: its address and
    the home whose ``.ray/auth_token`` exists."""
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
        env=_environment(home, RAY_AUTH_MODE=auth_mode),
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


@pytest.fixture
def head_requiring_a_token() -> Iterator[tuple[str, Path]]:
    """The head's address and the home whose ``.ray/auth_token`` it requires."""
    with _head("token") as head:
        yield head


@pytest.fixture
def head_without_authentication() -> Iterator[tuple[str, Path]]:
    """The head's address and a home with a token, which the head does not ask for."""
    with _head("disabled") as head:
        yield head


def _connect_and_run(address: str, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", CONNECT_AND_RUN, address],
        env=_environment(home),  # the token file, no RAY_AUTH_MODE
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def test_an_address_reaches_a_head_that_requires_the_token(
    head_requiring_a_token: tuple[str, Path],
) -> None:
    run = _connect_and_run(*head_requiring_a_token)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split()[-2:] == ["42", "42"]


def test_a_head_that_requires_the_token_refuses_none_or_another_in_one_line(
    head_requiring_a_token: tuple[str, Path], tmp_path: Path
) -> None:
    # ray.init printed Ray's warning every second for 20 s, then "cannot start or reach Ray"
    address, _ = head_requiring_a_token
    build = ["build", "--groups", "2", "--out", str(tmp_path / "bench"), "--no-progress"]
    for more in ({}, {"RAY_AUTH_TOKEN": "0" * 64}):
        run = subprocess.run(
            [sys.executable, "-c", "from uncobench_z3.cli import run; run()", *build,
             "--executor", "ray", "--ray-address", address],
            env=_environment(tmp_path, **more),  # a home without the head's token
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )  # fmt: skip
        assert run.returncode == 2, run.stderr[-2000:]
        assert not (tmp_path / "bench").exists()
        said = [line for line in run.stderr.splitlines() if "WARNING" not in line]  # Ray's
        assert len(said) == 1, run.stderr[-2000:]
        assert said[0].startswith(f"error: the Ray cluster at {address} requires Ray's token")


def test_an_address_reaches_a_head_without_authentication_from_a_home_with_a_token(
    head_without_authentication: tuple[str, Path],
) -> None:
    # the driver in token mode refused the head's calls: the actor's creation was cancelled
    run = _connect_and_run(*head_without_authentication)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split()[-2:] == ["42", "42"]
    assert "Token authentication is enabled" not in run.stderr  # it is not


def test_an_address_where_no_ray_answers_is_refused_before_any_work(tmp_path: Path) -> None:
    # a port that accepts connections but is no Ray cluster (a mistyped port: another
    # service's); ray.init retried for minutes, printing Ray's warnings every few seconds
    listener = socket.create_server(("127.0.0.1", 0))
    address = f"127.0.0.1:{listener.getsockname()[1]}"
    build = ["build", "--groups", "2", "--out", str(tmp_path / "bench"), "--no-progress"]
    try:
        run = subprocess.run(
            [sys.executable, "-c", "from uncobench_z3.cli import run; run()", *build,
             "--executor", "ray", "--ray-address", address],
            env=_environment(tmp_path),
            capture_output=True,
            text=True,
            timeout=90,
            check=False,
        )  # fmt: skip
    finally:
        listener.close()
    assert run.returncode == 2, run.stderr[-2000:]
    assert run.stderr.splitlines()[-1].startswith(f"error: no Ray cluster answers at {address}")
    assert not (tmp_path / "bench").exists()
