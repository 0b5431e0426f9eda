"""The ``local/`` server's lifecycle: one per process tree, stopped with its owner however the
owner ends (normal exit, SIGINT, SIGTERM, SIGHUP, SIGKILL). A stand-in server
(``fake_llama_server.py``) replaces llama.cpp, so these run without it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from uncobench_z3.models import llama_server
from uncobench_z3.models.providers import _local

FAKE = str(Path(__file__).with_name("fake_llama_server.py"))
STAND_IN = f"""
import faulthandler, os, signal, sys, time
from pathlib import Path
faulthandler.register(signal.SIGUSR1, all_threads=True)  # where it stands, if it hangs
signal.signal(signal.SIGHUP, signal.{{hangup}})
signal.signal(signal.SIGINT, signal.default_int_handler)  # (see cli_helpers.INTERRUPTIBLE)
from uncobench_z3.models.providers import _local
_local._requirements = lambda model: Path("stand-in.gguf")
_local.server_command = lambda model, gguf, port, owner: [
    sys.executable, {FAKE!r}, str(port), str(owner)
]
url = _local.start_local_server("smollm2", timeout=60)
print(_local._servers["smollm2"].pid, url, flush=True)
"""


def _exit_code(child: subprocess.Popen[str], timeout: float = 30.0) -> int:
    """``child``'s exit code; if it has not ended within ``timeout``, a failure that shows
    where each of its threads stands (it found an owner asleep 30 s after an ignored SIGHUP:
    see :func:`_owner`)."""
    try:
        return child.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        child.send_signal(signal.SIGUSR1)
        time.sleep(1)
        child.kill()
        _, stderr = child.communicate()
        pytest.fail(f"the owner still ran after {timeout} s; its threads:\n{stderr[-4000:]}")


def _gone(pid: int, within: float = 15.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not llama_server.process_alive(pid):
            return True
        time.sleep(0.1)
    return False


def _owner(
    script: str, registry: Path | None = None, hangup: str = "SIG_DFL"
) -> tuple[subprocess.Popen[str], int, str]:
    """A process that starts (or finds) the stand-in server, then runs ``script``; the server's
    pid and URL. ``registry``: a process tree of its own (default: this process's tree).
    ``hangup``: its SIGHUP disposition before it starts the server. The default is a
    terminal's, set explicitly: under ``nohup`` the tests' processes inherit an ignored
    SIGHUP (two CI runs started that way failed the SIGHUP test, the owner asleep 30 s on)."""
    environment = dict(os.environ)
    if registry is not None:
        environment[_local.REGISTRY_ENV] = str(registry)
    child = subprocess.Popen(
        [sys.executable, "-c", STAND_IN.format(hangup=hangup) + script],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment,
    )
    assert child.stdout is not None
    line = child.stdout.readline()
    assert line, child.stderr.read() if child.stderr else ""
    pid, url = line.split()
    return child, int(pid), url


@pytest.fixture
def stand_in(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """This process starts stand-in servers, in a registry of its own."""
    monkeypatch.setattr(_local, "_servers", {})
    monkeypatch.setattr(_local, "_created_registry", None)
    monkeypatch.setenv(_local.REGISTRY_ENV, str(tmp_path / "registry"))
    monkeypatch.setattr(_local, "_requirements", lambda model: Path("stand-in.gguf"))
    monkeypatch.setattr(
        _local,
        "server_command",
        lambda model, gguf, port, owner: [sys.executable, FAKE, str(port), str(owner)],
    )
    yield
    _local.stop_local_servers()


def test_a_server_is_stopped_when_its_owner_exits(tmp_path: Path) -> None:
    child, pid, _ = _owner("", tmp_path / "tree")
    assert _exit_code(child) == 0
    assert _gone(pid)


@pytest.mark.parametrize(
    ("signum", "code"),
    [(signal.SIGTERM, 128 + 15), (signal.SIGHUP, 128 + 1), (signal.SIGINT, -signal.SIGINT)],
)
def test_a_server_is_stopped_when_its_owner_is_signalled(
    signum: int, code: int, tmp_path: Path
) -> None:
    child, pid, _ = _owner("time.sleep(60)", tmp_path / "tree")
    assert llama_server.process_alive(pid)
    child.send_signal(signum)
    # SIGINT: KeyboardInterrupt, exit handlers, then Python dies of the signal as it should
    assert _exit_code(child) == code
    assert _gone(pid)


def test_an_owner_that_ignores_sighup_keeps_running_and_so_does_its_server(
    tmp_path: Path,
) -> None:
    # (``nohup uncobench eval ...``: the process chose to ignore SIGHUP, and the handler that
    # stops the servers is not installed for it)
    child, pid, _ = _owner("time.sleep(60)", tmp_path / "tree", hangup="SIG_IGN")
    try:
        child.send_signal(signal.SIGHUP)
        with pytest.raises(subprocess.TimeoutExpired):
            child.wait(timeout=1)
        assert llama_server.process_alive(pid)
    finally:
        child.terminate()
    assert _exit_code(child) == 128 + signal.SIGTERM
    assert _gone(pid)


def test_a_server_outlives_no_owner_even_one_killed_outright(tmp_path: Path) -> None:
    child, pid, _ = _owner("time.sleep(60)", tmp_path / "tree")
    child.kill()  # SIGKILL: no handler runs; the server notices its owner is gone
    child.wait(timeout=30)
    assert _gone(pid)


def test_the_server_runs_in_its_own_session(tmp_path: Path) -> None:
    child, pid, _ = _owner("time.sleep(60)", tmp_path / "tree")
    try:
        assert (
            os.getsid(pid) == pid != os.getsid(child.pid)
        )  # a terminal's ^C reaches the owner only
    finally:
        child.terminate()
        child.wait(timeout=30)
    assert _gone(pid)


def test_a_process_tree_shares_one_server(stand_in: None) -> None:
    url = _local.start_local_server("smollm2", timeout=60)
    pid = _local._servers["smollm2"].pid
    assert _local.start_local_server("smollm2") == url  # this process reuses it
    # a worker (any process that inherits the environment) finds it instead of starting one
    child, child_pid, child_url = _owner("")
    assert _exit_code(child) == 0
    assert (child_pid, child_url) == (pid, url)
    assert llama_server.process_alive(pid)  # the worker did not own it, so did not stop it
    _local.stop_local_servers()
    assert _gone(pid)
    assert not Path(os.environ[_local.REGISTRY_ENV]).exists()  # the registry is cleaned up


def test_a_dead_server_in_the_registry_is_replaced(stand_in: None) -> None:
    _local.start_local_server("smollm2", timeout=60)
    first = _local._servers["smollm2"]
    assert first.process is not None
    os.killpg(first.pid, signal.SIGKILL)
    first.process.wait()
    _local.start_local_server("smollm2", timeout=60)
    assert _local._servers["smollm2"].pid != first.pid


def test_stopping_ignores_servers_of_other_processes(stand_in: None) -> None:
    child, pid, url = _owner("time.sleep(60)")
    try:
        assert _local.start_local_server("smollm2") == url  # borrowed from the child
        _local.stop_local_servers()
        assert llama_server.process_alive(pid)
    finally:
        child.terminate()
        child.wait(timeout=30)
    assert _gone(pid)
