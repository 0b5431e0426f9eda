"""The report: every text from records and models is escaped; the HTML is self-contained."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest

from uncobench_z3.errors import ConfigError
from uncobench_z3.evaluation import (
    Action,
    Agent,
    AnswerAction,
    Conversation,
    evaluate,
    make_agent,
    make_config,
    write_benchmark,
)
from uncobench_z3.report import (
    METRICS_FILE,
    _plots,
    load_report_data,
    md_text,
    read_metrics,
    write_report,
)
from uncobench_z3.settings import perturb
from uncobench_z3.spec import TaskSpec

ROOT = Path(__file__).resolve().parent.parent
EVIL_NAME = "Marcus <script>alert(1)</script> Vance"
EVIL_AGENT = "evil/<img src=x onerror=alert(2)>"
EVIL_ANSWER = "</td><script>alert(3)</script> | ** Appoint"


class EvilAgent:
    """Answers in free text full of markup."""

    async def act(self, conversation: Conversation) -> Action:
        return AnswerAction(text=EVIL_ANSWER)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A benchmark whose candidate name is a script tag, evaluated by three agents."""
    data = json.loads((ROOT / "examples" / "mining_supervisor.json").read_text())
    for candidate in data["candidates"]:
        if candidate["id"] == "vance":
            candidate["name"] = EVIL_NAME
    group = perturb(TaskSpec.model_validate(data), seed=0).group
    assert group is not None
    root = tmp_path_factory.mktemp("report")
    bench = write_benchmark(
        root / "bench",
        [group],
        {"groups": 1, "<b>domains</b>": {"<i>mining</i>": {"groups": 1, "percent": 100.0}}},
    )
    groups = [group]
    agents = ["builtin/naive", "builtin/careful", EVIL_AGENT]

    def maker(name: str, seed: int) -> Agent:
        return EvilAgent() if name == EVIL_AGENT else make_agent(name, seed)

    config = make_config(str(bench), groups, agents)
    evaluate(groups, config, root / "runs" / "first", agents=maker)
    return root / "runs"


@pytest.fixture(scope="module")
def report(runs: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str, Path]:
    out = tmp_path_factory.mktemp("out")
    files = write_report(runs, out)
    return files.html.read_text(), files.markdown.read_text(), out


def test_html_escapes_names_answers_and_agent_names(report: tuple[str, str, Path]) -> None:
    page, _, _ = report
    assert "<script" not in page.lower()
    assert "onerror=alert(2)>" not in page and "<img src=x" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page  # the candidate, shown as text
    assert "&lt;/td&gt;&lt;script&gt;alert(3)" in page  # the evil answer, shown as text
    assert "evil/&lt;img src=x onerror=alert(2)&gt;" in page
    assert "&lt;b&gt;domains&lt;/b&gt;" in page  # manifest keys too


def test_html_is_self_contained(report: tuple[str, str, Path]) -> None:
    page, _, _ = report
    sources = re.findall(r'(?:src|href)="([^"]*)"', page)
    assert sources and all(s.startswith("data:image/png;base64,") for s in sources)
    assert "http://" not in page and "https://" not in page
    assert page.count("<img ") == 3  # accuracy, attribution, rounds


def test_markdown_escapes_too(report: tuple[str, str, Path]) -> None:
    _, markdown, out = report
    assert "<script" not in markdown.lower() and "<img" not in markdown
    assert "&lt;script&gt;" in markdown
    assert "\\|" in markdown  # the pipe inside the evil answer does not split the table
    for link in re.findall(r"\]\((plots/[^)]+)\)", markdown):
        assert (out / link).is_file()


def test_the_report_has_every_section(report: tuple[str, str, Path]) -> None:
    page, markdown, _ = report
    for title in (
        "Accuracy by setting",
        "Drop from Reliable and retention",
        "Rounds, waits and redundant contacts",
        "Behaviour after a defect",
        "Error attribution",
        "Wrong answers",
        "Benchmark statistics",
        "Mixed (stress test)",
        "Justified accuracy",
        "Paired comparisons",
    ):
        assert title in markdown and title in page
    assert "misled" in markdown and "integration_error" in markdown


def test_metrics_json_holds_every_cell_and_every_pair_exactly(
    report: tuple[str, str, Path],
) -> None:
    _, _, out = report
    raw = json.loads((out / METRICS_FILE).read_text())
    assert (raw["schema"], raw["schema_version"]) == ("uncobench-metrics", 1)
    document = read_metrics(out / METRICS_FILE)
    cells = {(m.agent, m.setting, m.arm) for m in document.results}
    agents = ["builtin/naive", "builtin/careful", EVIL_AGENT]
    settings = ["reliable", "misaligned", "incomplete", "missed", "mixed"]
    assert cells == {(a, s, "none") for a in agents for s in settings}
    pairs = {(c.a, c.b) for c in document.comparisons}
    assert pairs == {(agents[0], agents[1]), (agents[0], agents[2]), (agents[1], agents[2])}
    assert len(document.comparisons) == 3 * len(settings)
    careful = next(m for m in raw["results"] if m["agent"] == "builtin/careful" and
                   m["setting"] == "misaligned")  # fmt: skip
    for key in ("n_groups", "epochs", "accuracy", "accuracy_ci", "pass_hat_k", "pass_at_k",
                "justified_accuracy", "drop", "drop_ci", "retention", "retention_ci",
                "mean_rounds", "errors"):  # fmt: skip
        assert key in careful
    # exact numbers are strings Fraction reads back
    assert careful["accuracy"] == "1" and careful["pass_hat_k"] == {"1": "1"}
    assert all(isinstance(x, str) for x in careful["accuracy_ci"])
    naive = next(m for m in document.results if m.agent == "builtin/naive" and
                 m.setting == "misaligned")  # fmt: skip
    assert isinstance(naive.drop, Fraction) and naive.drop == 1


def test_md_text_keeps_one_line() -> None:
    assert md_text("a|b\n<c>") == "a\\|b &lt;c&gt;"


def test_runs_are_found_below_a_folder_and_counted_once(runs: Path) -> None:
    data = load_report_data(runs)
    assert len(data.runs) == 1 and data.manifest_stats is not None
    assert len(data.samples) == 3 * 5
    assert load_report_data(runs / "first").samples == data.samples


def test_no_runs_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no evaluation run"):
        write_report(tmp_path, tmp_path / "out")


def test_without_matplotlib_the_report_says_so(
    runs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def missing(width: float, height: float) -> object:
        raise _plots.PlottingUnavailable("plots need matplotlib")

    monkeypatch.setattr(_plots, "_figure", missing)
    files = write_report(runs, tmp_path)
    assert files.plots == [] and files.note == "plots need matplotlib"
    page = files.html.read_text()
    assert "<img" not in page and "Plots omitted: plots need matplotlib" in page


def test_importing_the_report_does_not_import_matplotlib() -> None:
    code = (
        "import sys, uncobench_z3.report, uncobench_z3.evaluation;"
        "print('matplotlib' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_a_failing_plot_is_noted_not_fatal(
    runs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(metrics: object) -> bytes:
        raise ValueError("bad data")

    monkeypatch.setitem(_plots.PLOTS, "rounds", ("Rounds", broken))
    files = write_report(runs, tmp_path)
    assert [p.name for p in files.plots] == ["accuracy.png", "attribution.png"]
    assert files.note == "the rounds plot failed (ValueError: bad data)"
    assert "the rounds plot failed" in files.html.read_text()
