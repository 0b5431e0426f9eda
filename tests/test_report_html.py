"""The report: sections in the paper's order, the same numbers as metrics.json, every text
from records and models escaped, one self-contained HTML page, the viewer's data."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest

from uncobench_z3.errors import ConfigError
from uncobench_z3.evaluation import (
    BEHAVIOUR_CLASSES,
    ValidityCell,
    compute_metrics,
    configuration_of,
    pooled,
)
from uncobench_z3.report import (
    METRICS_FILE,
    PAPER_SECTIONS,
    load_report_data,
    md_text,
    read_metrics,
    render_figures,
    write_report,
)
from uncobench_z3.report import _plotting as plotting
from uncobench_z3.report._analysis_tables import mixed_table, single_defects_on_mixed_groups
from uncobench_z3.report._html import asset
from uncobench_z3.report._load import BenchmarkGroups
from uncobench_z3.report._tables import accuracy_table, interval_text, setting_title
from uncobench_z3.report._viewer import TraceViewer, decode
from uncobench_z3.stats import decimal_text, percent_text

from .report_runs import AGENTS, EVIL_AGENT, EVIL_ANSWER
from .test_eval_metrics import outcomes

SETTINGS = ["reliable", "misaligned", "incomplete", "missed", "mixed"]


@pytest.fixture(scope="module")
def report(report_runs: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str, Path]:
    out = tmp_path_factory.mktemp("out")
    files = write_report(report_runs, out)
    assert files.note is None
    return files.html.read_text(), files.markdown.read_text(), out


def _blocks(page: str) -> dict[str, str]:
    return dict(re.findall(r'<script type="application/octet-stream" id="([^"]+)">([^<]*)</script>',
                           page))  # fmt: skip


def _section(page: str, section_id: str) -> str:
    found = re.search(rf'<section id="{section_id}">(.*?)</section>', page, re.S)
    assert found, section_id
    return found.group(1)


def test_sections_come_in_the_papers_order_and_none_is_empty(
    report: tuple[str, str, Path],
) -> None:
    page, _, _ = report
    ids = re.findall(r'<section id="([^"]+)">', page)
    assert ids == ["runs", *PAPER_SECTIONS]
    for section_id in ids:
        body = _section(page, section_id)
        text = re.sub(r"<[^>]+>", " ", body.split("</h2>", 1)[1])
        assert text.split() or "<figure>" in body, section_id
    for section_id in ("main-results", "retention", "behaviour", "missed-cost", "mixed",
                       "interventions", "attribution", "dataset"):  # fmt: skip
        assert "<figure>" in _section(page, section_id), section_id
        assert "n = " in _section(page, section_id) or "n per bar" in _section(page, section_id)


def test_every_figure_is_written_as_png_and_svg(report: tuple[str, str, Path]) -> None:
    _, markdown, out = report
    names = {p.stem for p in (out / "figures").iterdir()}
    assert names == {"main-results", "retention", "behaviour", "missed-cost", "mixed",
                     "interventions", "attribution", "dataset"}  # fmt: skip
    for name in names:
        assert (out / "figures" / f"{name}.png").read_bytes().startswith(b"\x89PNG")
        assert b"<svg" in (out / "figures" / f"{name}.svg").read_bytes()[:400]
        assert f"(figures/{name}.png)" in markdown


def test_figures_are_deterministic(report: tuple[str, str, Path]) -> None:
    _, _, out = report
    again = render_figures(read_metrics(out / METRICS_FILE))
    for name, rendered in again.rendered.items():
        assert rendered.png == (out / "figures" / f"{name}.png").read_bytes()
        assert rendered.svg == (out / "figures" / f"{name}.svg").read_bytes()


def test_html_escapes_names_answers_and_agent_names(report: tuple[str, str, Path]) -> None:
    page, _, _ = report
    own = page.count("<script")
    assert own == 1 + len(_blocks(page))  # the viewer's code and its data blocks, nothing else
    assert "onerror=alert(2)>" not in page and "<img src=x" not in page
    assert "alert(1)</script>" not in page and "alert(3)</script>" not in page
    assert "&lt;/td&gt;&lt;script&gt;alert(3)" in page  # the evil answer, shown as text
    assert "evil/&lt;img src=x onerror=alert(2)&gt;" in page
    assert "&lt;b&gt;domains&lt;/b&gt;" in page  # manifest keys too


def test_html_is_self_contained_and_only_its_own_code_may_run(
    report: tuple[str, str, Path],
) -> None:
    page, _, _ = report
    sources = re.findall(r'(?:src|href)="([^"]*)"', page)
    assert all(s.startswith(("data:image/svg+xml;base64,", "#")) or s == "data:," for s in sources)
    assert "http://" not in page and "https://" not in page
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)
    assert policy is not None
    script = re.search(r"<script>(.*)</script>", page, re.S)
    style = re.search(r"<style>(.*?)</style>", page, re.S)
    assert script is not None and style is not None
    for source in (script.group(1), style.group(1)):
        digest = base64.b64encode(hashlib.sha256(source.encode()).digest()).decode()
        assert f"'sha256-{digest}'" in policy.group(1)
    assert "default-src 'none'" in policy.group(1) and "unsafe-inline" not in policy.group(1)
    assert script.group(1) == asset("viewer.js")


def test_markdown_carries_the_same_tables_escaped(report: tuple[str, str, Path]) -> None:
    page, markdown, _ = report
    assert "<script" not in markdown.lower() and "<img" not in markdown
    assert "&lt;script&gt;" in markdown
    assert "\\|" in markdown  # the pipe inside the evil answer does not split the table
    for caption in re.findall(r"<caption>([^<]+)</caption>", page):
        assert md_text(caption.replace("&#x27;", "'").replace("&quot;", '"')
                       .replace("&lt;", "<").replace("&gt;", ">")
                       .replace("&amp;", "&")) in markdown  # fmt: skip


def test_tables_show_the_numbers_of_metrics_json(report: tuple[str, str, Path]) -> None:
    page, _, out = report
    document = read_metrics(out / METRICS_FILE)
    main = _section(page, "main-results")
    for m in document.results:
        if m.arm == "none":
            assert f"{percent_text(m.accuracy)} [" in main
    validity = _section(page, "validity")
    by_agent: dict[str, list[ValidityCell]] = {}
    for cell in document.validity:
        by_agent.setdefault(cell.agent, []).append(cell)
    judged = {agent: sum(c.judged for c in cells) for agent, cells in by_agent.items()}
    assert [n > 0 for n in judged.values()] == [True, True, False]  # evil never asks
    for agent, cells in by_agent.items():
        fidelity, _ = pooled(cells)
        if judged[agent]:
            assert f"fidelity {percent_text(fidelity)}" in validity
            assert f"n={judged[agent]}" in validity
        for cell in cells:  # the details table: each setting's figure with its interval
            assert f"{percent_text(cell.fidelity)} {interval_text(cell.fidelity_ci)}" in validity
    behaviour = _section(page, "behaviour")
    for m in document.results:
        if m.setting != "reliable" and m.arm == "none":
            assert sum(m.behaviour_classes.values()) == m.samples
            assert list(m.behaviour_classes) == list(BEHAVIOUR_CLASSES)
    assert "recovered correct" in behaviour


def test_metrics_json_holds_every_cell_and_every_pair_exactly(
    report: tuple[str, str, Path],
) -> None:
    _, _, out = report
    raw = json.loads((out / METRICS_FILE).read_text())
    assert (raw["schema"], raw["schema_version"]) == ("uncobench-metrics", 1)
    document = read_metrics(out / METRICS_FILE)
    plain = {(m.agent, m.setting) for m in document.results if m.arm == "none"}
    assert plain == {(a, s) for a in AGENTS for s in SETTINGS}
    arms = {(m.agent, m.arm) for m in document.results if m.arm != "none"}
    assert arms == {(a, arm) for a in AGENTS[:2] for arm in ("existence", "action")}
    pairs = {(c.a, c.b) for c in document.comparisons if c.arm == "none"}
    assert pairs == {(AGENTS[0], AGENTS[1]), (AGENTS[0], AGENTS[2]), (AGENTS[1], AGENTS[2])}
    careful = next(m for m in raw["results"] if m["agent"] == "builtin/careful" and
                   m["setting"] == "misaligned" and m["arm"] == "none")  # fmt: skip
    assert careful["accuracy"] == "1" and careful["pass_hat_k"] == {"1": "1", "2": "1"}
    assert all(isinstance(x, str) for x in careful["accuracy_ci"])
    assert raw["validity"] and raw["dataset"]["groups"] == 2
    naive = next(m for m in document.results if m.agent == "builtin/naive" and
                 m.setting == "misaligned" and m.arm == "none")  # fmt: skip
    assert isinstance(naive.drop, Fraction)


def test_interventions_compare_arms_on_the_groups_common_to_all(
    report: tuple[str, str, Path], report_runs: Path
) -> None:
    """The plain arm ran on two groups, the others on one: every arm is measured on that one."""
    _, _, out = report
    document = read_metrics(out / METRICS_FILE)
    panel = next(p for p in document.interventions if p.agent == "builtin/naive")
    assert (panel.setting, panel.arms) == ("misaligned", ["none", "existence", "action"])
    assert (panel.common_groups, panel.dropped_groups) == (1, 1)
    plain = next(m for m in document.results if m.agent == "builtin/naive" and
                 m.setting == "misaligned" and m.arm == "none")  # fmt: skip
    assert plain.n_groups == 2 and panel.cells[0].n_groups == 1
    # the same definitions as every cell, on the restricted samples
    data = load_report_data(report_runs)
    common = {s.group_id for s in data.samples if s.intervention == "action"}
    chosen = [s for s in data.samples if s.agent == "builtin/naive" and s.group_id in common
              and s.setting in ("reliable", "misaligned")
              and (s.setting == "misaligned" or s.intervention == "none")]  # fmt: skip
    again = {(m.setting, m.arm): m for m in compute_metrics(chosen)}
    assert panel.reliable == again[("reliable", "none")]
    assert panel.cells == [again[("misaligned", arm)] for arm in panel.arms]


def test_mixed_is_set_against_the_single_defects_on_its_own_groups(report_runs: Path) -> None:
    """The healthcare group has no Mixed setting: the single defects beside Mixed are measured
    on the mining group only (the cells' own definition, on the restricted samples), and so
    are the hardest of them and the gap. Before, they were the cells over both groups."""
    singles = ("misaligned", "incomplete", "missed")
    samples = load_report_data(report_runs / "first").samples
    mixed_groups = {s.group_id for s in samples if s.setting == "mixed"}
    assert mixed_groups == {"mining_supervisor"}
    same = single_defects_on_mixed_groups(samples)
    kept = [s for s in samples if s.group_id in mixed_groups]
    again = {(m.agent, m.setting): m.accuracy for m in compute_metrics(kept)}
    assert same == {k: v for k, v in again.items() if k[1] in singles}
    assert len(same) == 3 * len(AGENTS)
    everything = compute_metrics(samples)
    assert any(m.accuracy != again[m.agent, m.setting] for m in everything if m.setting in singles)
    for row in mixed_table(everything, same).rows:
        hardest = min(singles, key=lambda s: same[row[0], s])
        mixed = again[row[0], "mixed"]
        assert mixed is not None
        gap = decimal_text(100 * (mixed - same[row[0], hardest]), 1, sign=True)
        assert row[5:7] == [setting_title(hardest), gap]


def test_the_viewer_holds_every_sample_with_rounds_and_solver_notes(
    report: tuple[str, str, Path],
) -> None:
    page, _, out = report
    blocks = _blocks(page)
    index = decode(blocks["viewer-index"])
    document = read_metrics(out / METRICS_FILE)
    assert len(index["rows"]) == sum(m.samples + m.errors for m in document.results)
    entries = [e for n in range(len(blocks) - 1) for e in decode(blocks[f"viewer-chunk-{n}"])]
    assert len(entries) == len(index["rows"])
    assert set(index["agents"]) == set(AGENTS)
    for row, entry in zip(index["rows"], entries, strict=True):
        assert len(entry["r"]) == row[7]  # one round each, as many as the sample played
        assert all(r["note"] is not None for r in entry["r"])
    careful = [e for row, e in zip(index["rows"], entries, strict=True)
               if index["agents"][row[0]] == "builtin/careful"
               and index["settings"][row[1]] == "misaligned"]  # fmt: skip
    rounds = careful[0]["r"]
    assert any("misaligned" in reply["d"] for reply in rounds[0]["q"])  # the defective reply
    assert rounds[0]["note"]["d"] is False and rounds[0]["note"]["o"]  # open after round 1
    assert rounds[-1]["note"]["d"] is True  # determined before the answer
    # open records named as people read them: "<candidate>: <record> (<context>)"
    assert all(re.fullmatch(r".+: .+ \(.+\)", label) for r in rounds for label in r["note"]["o"])
    evil = [e for row, e in zip(index["rows"], entries, strict=True)
            if index["agents"][row[0]] == EVIL_AGENT]  # fmt: skip
    assert evil[0]["ans"] == EVIL_ANSWER  # raw in the data, set as text by the page


def test_the_viewer_offers_the_configurations_the_tables_show(report_runs: Path) -> None:
    # an agent run with another budget is a row of its own in every table: the viewer's agent
    # filter must tell its samples apart too, not mix both runs under the bare name
    sample = next(s for s in load_report_data(report_runs / "first").samples)
    other = sample.model_copy(update={"budget": sample.budget + 7})
    viewer = TraceViewer(BenchmarkGroups())
    viewer(sample, [])
    viewer(other, [])
    index = decode(viewer.payload().index)
    assert set(index["agents"]) == {configuration_of(sample), configuration_of(other)}
    assert len(index["agents"]) == 2


def test_a_cell_whose_groups_ran_different_epochs_states_its_samples() -> None:
    # a run of another seed on some groups pooled with a run of all: 3 trials in all, but
    # g2 ran one of them; "n=2x3" would claim six samples where there are four
    table = accuracy_table(compute_metrics(outcomes("reliable", {"g1": "110", "g2": "1"})))
    assert table.rows[0][1].endswith("n=4 (2 groups, up to 3 epochs)")
    balanced = accuracy_table(compute_metrics(outcomes("reliable", {"g1": "110", "g2": "011"})))
    assert balanced.rows[0][1].endswith("n=2x3")


def test_markdown_links_figures_that_exist(report: tuple[str, str, Path]) -> None:
    _, markdown, out = report
    links = re.findall(r"\]\((figures/[^)]+)\)", markdown)
    assert links and all((out / link).is_file() for link in links)


def test_md_text_keeps_one_line() -> None:
    assert md_text("a|b\n<c>") == "a\\|b &lt;c&gt;"


def test_md_text_shows_control_characters_escaped() -> None:
    # `cat report.md` on a terminal would obey a model's escape sequences
    assert md_text("a\x1b[2J\x07b") == "a\\\\x1b\\[2J\\\\x07b"


def test_runs_are_found_below_a_folder_and_counted_once(report_runs: Path) -> None:
    data = load_report_data(report_runs)
    assert len(data.runs) == 2 and data.manifest_stats is not None
    first, arms = (load_report_data(report_runs / name) for name in ("first", "arms"))
    assert len(first.samples) == first.runs[0].planned
    # the arms run repeats plain samples of the first run: they count once
    keys = {s.key for s in first.samples} | {s.key for s in arms.samples}
    assert len(keys) < len(first.samples) + len(arms.samples)
    assert sorted(s.key for s in data.samples) == sorted(keys)
    assert all(not s.trace for s in data.samples)  # traces go to the visitors only


def test_no_runs_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no evaluation run"):
        write_report(tmp_path, tmp_path / "out")


def test_an_unreadable_log_is_one_error_and_writes_nothing(
    report_runs: Path, tmp_path: Path
) -> None:
    broken = tmp_path / "runs" / "broken"
    broken.mkdir(parents=True)
    (broken / "run.json").write_text((report_runs / "first" / "run.json").read_text())
    lines = (report_runs / "first" / "samples.jsonl").read_text().splitlines()
    (broken / "samples.jsonl").write_text("\n".join([lines[0], "{not json", lines[1]]) + "\n")
    with pytest.raises(Exception, match=r"line 2 is not a sample record") as caught:
        write_report(tmp_path / "runs", tmp_path / "out")
    assert "\n" not in str(caught.value)
    assert not (tmp_path / "out").exists()
    # a torn last line (a run cut off while writing) is skipped, not refused
    (broken / "samples.jsonl").write_text("\n".join(lines[:3]) + "\n" + lines[3][:40])
    assert len(load_report_data(tmp_path / "runs").samples) == 3


def test_without_matplotlib_the_report_says_so(
    report_runs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def missing(width: float, height: float) -> object:
        raise plotting.PlottingUnavailable("figures need matplotlib")

    monkeypatch.setattr(plotting, "_figure", missing)
    files = write_report(report_runs, tmp_path)
    assert files.figures == [] and files.note == "figures need matplotlib"
    page = files.html.read_text()
    assert "<img" not in page and "Figures omitted: figures need matplotlib" in page
    assert "Accuracy (decision, candidate and number all right) per agent" in page  # captions


def test_importing_the_report_does_not_import_matplotlib() -> None:
    code = (
        "import sys, uncobench_z3.report, uncobench_z3.evaluation;"
        "print('matplotlib' in sys.modules, 'numpy' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False False"


def test_a_failing_figure_is_noted_not_fatal(
    report: tuple[str, str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object, **kwargs: object) -> object:
        raise ValueError("bad data")

    monkeypatch.setattr(plotting, "heatmap", broken)
    _, _, out = report
    figures = render_figures(read_metrics(out / METRICS_FILE))
    assert "dataset" not in figures.rendered and "main-results" in figures.rendered
    assert figures.note == "the dataset figure failed (ValueError: bad data)"
