"""Options that contradict each other, or a value read the wrong way, are refused in one line
(exit 2) before any work or file: repeated pins, --restart with --force, --json with another
--format, a messages file that is not UTF-8, a provider base URL that is not a URL."""

from __future__ import annotations

from pathlib import Path

import pytest

from uncobench_z3.errors import ModelConfigError
from uncobench_z3.evaluation import example_benchmark
from uncobench_z3.models.providers._anthropic import create_anthropic_provider
from uncobench_z3.models.providers._openai import (
    create_openai_api_provider,
    create_openai_provider,
)

from .cli_helpers import one_line, run_cli

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
SPEC = str(EXAMPLES / "mining_supervisor.json")
GROUP = str(EXAMPLES / "groups" / "mining_supervisor.group.json")


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return example_benchmark(tmp_path_factory.mktemp("contradict") / "bench", groups=1)


def test_a_messages_file_that_is_not_utf8(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    messages = tmp_path / "messages.txt"
    messages.write_bytes(b'"fine"\n"caf\xe9"\n')
    line = one_line(run_cli(capsys, "followup", GROUP, "--setting", "misaligned",
                            "--messages", str(messages)))  # fmt: skip
    assert "messages.txt:2" in line and "not UTF-8" in line


@pytest.mark.parametrize("kind", ["missed", "misaligned", "incomplete"])
def test_perturb_refuses_a_defect_pinned_twice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    pins = {
        "missed": ["hr", "security"],
        "misaligned": ["security.clearance@vance", "security.clearance@ruiz"],
        "incomplete": ["security.clearance@vance", "security.clearance@ruiz"],
    }[kind]
    out = tmp_path / "group.json"
    args = [arg for pin in pins for arg in (f"--{kind}", pin)]
    line = one_line(run_cli(capsys, "perturb", SPEC, "--out", str(out), *args))
    assert f"--{kind} given 2 times" in line and not out.exists()


def test_eval_refuses_restart_with_force(
    bench: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    line = one_line(run_cli(capsys, "eval", str(bench), "--agent", "builtin/naive", "--out",
                            str(out), "--restart", "--force"))  # fmt: skip
    assert "--restart" in line and "--force" in line and not out.exists()


@pytest.mark.parametrize("fmt", ["md", "plain", "rich"])
def test_json_with_another_format_is_refused(
    bench: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    line = one_line(run_cli(capsys, "verify", SPEC, "--json", "--format", fmt))
    assert "--json" in line and fmt in line


def test_json_with_format_json_is_one_request(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(capsys, "verify", SPEC, "--json", "--format", "json").code == 0


BAD_URLS = ["notaurl", "ftp://host/v1", "http://", "127.0.0.1:8080/v1", "https:///v1"]


@pytest.mark.parametrize("url", BAD_URLS)
def test_a_base_url_that_is_not_an_http_url_is_refused_when_the_model_is_made(
    monkeypatch: pytest.MonkeyPatch, url: str
) -> None:
    monkeypatch.setenv("NOSVC_BASE_URL", url)
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-key")
    with pytest.raises(ModelConfigError, match="NOSVC_BASE_URL") as raised:
        create_openai_api_provider("nosvc/m")
    assert "notaurl" not in str(raised.value)  # the value is never echoed (it may hold a password)
    with pytest.raises(ModelConfigError, match="OPENAI_BASE_URL"):
        create_openai_provider("m")
    with pytest.raises(ModelConfigError, match="ANTHROPIC_BASE_URL"):
        create_anthropic_provider("m")


def test_a_good_base_url_is_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NOSVC_BASE_URL", "http://127.0.0.1:9/v1")
    assert create_openai_api_provider("nosvc/m").base_url == "http://127.0.0.1:9/v1"


def test_eval_with_a_bad_base_url_writes_no_run_folder(
    bench: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NOSVC_BASE_URL", "notaurl")
    out = tmp_path / "run"
    line = one_line(run_cli(capsys, "eval", str(bench), "--agent", "openai-api/nosvc/m",
                            "--out", str(out), "--setting", "reliable"))  # fmt: skip
    assert "NOSVC_BASE_URL" in line and not out.exists()


@pytest.mark.parametrize("command", [["schema"], ["perturb", SPEC]])
def test_an_empty_out_is_one_line_naming_it_not_a_temporary_file(
    command: list[str], capsys: pytest.CaptureFixture[str], tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    monkeypatch.chdir(tmp_path)
    line = one_line(run_cli(capsys, *command, "--out", ""))
    assert "is a folder, not a file" in line and ".tmp" not in line
    assert list(tmp_path.iterdir()) == []
