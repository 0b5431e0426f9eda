"""The report as a person sees it: Debian's chromium, driven by Playwright, opens the
report of a small built-in run. Every section is there and not empty, nothing is logged as
an error, nothing from the run executes, and the trace viewer filters, pages, opens a sample
and shows its rounds. Screenshots are kept as test artifacts (``UNCOBENCH_TEST_ARTIFACTS``,
default ``test-artifacts/``).

Skipped, with the reason, where Playwright or chromium is missing (``.ci/run`` installs
chromium with apt-get; Playwright's own browser downloads are never used).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from uncobench_z3.report import PAPER_SECTIONS, write_report

from .report_runs import EVIL_AGENT, EVIL_ANSWER

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = os.environ.get("UNCOBENCH_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed "
                               "(pip install -e '.[test]')")  # fmt: skip
if not (Path(CHROMIUM).is_file() or shutil.which(CHROMIUM)):
    pytest.skip(f"chromium not found at {CHROMIUM} (apt-get install chromium)",
                allow_module_level=True)  # fmt: skip


def artifacts() -> Path:
    folder = Path(os.environ.get("UNCOBENCH_TEST_ARTIFACTS", ROOT / "test-artifacts"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="module")
def page_url(report_runs: Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    out = tmp_path_factory.mktemp("browser-report")
    files = write_report(report_runs, out)
    return files.html.resolve().as_uri()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as playwright:
        try:
            launched = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        except Exception as exc:  # a chromium that cannot start here: say why, do not fail
            pytest.skip(f"chromium at {CHROMIUM} does not start: {str(exc).splitlines()[0]}")
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Any, page_url: str) -> Iterator[tuple[Any, list[str]]]:
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    opened = context.new_page()
    problems: list[str] = []
    opened.on("console", lambda m: problems.append(f"console {m.type}: {m.text}")
              if m.type in ("error", "warning") else None)  # fmt: skip
    opened.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    opened.on("dialog", lambda d: (problems.append(f"dialog: {d.message}"), d.dismiss()))
    opened.on("request", lambda r: problems.append(f"request: {r.url}")
              if not r.url.startswith(("file:", "data:")) else None)  # fmt: skip
    opened.goto(page_url)
    opened.wait_for_selector("#viewer[data-ready=true]", timeout=30_000)
    yield opened, problems
    context.close()


def _rows(page: Any) -> list[list[str]]:
    return [[cell.strip() for cell in row.split("\t")]
            for row in page.locator("#viewer-rows tr").all_inner_texts()]  # fmt: skip


def test_every_section_is_there_in_order_and_shows_something(page: tuple[Any, list[str]]) -> None:
    opened, problems = page
    ids = opened.eval_on_selector_all("main > section", "nodes => nodes.map(n => n.id)")
    assert ids == ["runs", *PAPER_SECTIONS]
    for section_id in ids:
        text = opened.inner_text(f"#{section_id}")
        assert len(text.split()) > 5, section_id
    for section_id in ("main-results", "interventions", "dataset"):
        size = opened.eval_on_selector(f"#{section_id} figure img",
                                       "img => [img.naturalWidth, img.complete]")  # fmt: skip
        assert size[0] > 100 and size[1], section_id  # the SVG decoded and has a size
    opened.screenshot(path=artifacts() / "report.png", full_page=True)
    assert problems == []


def test_the_viewer_filters_pages_and_opens_a_sample(page: tuple[Any, list[str]]) -> None:
    opened, problems = page
    everything = opened.inner_text("#viewer-page")
    assert everything.startswith(tuple("123456789")) and "page 1 of 2" in everything
    opened.click("#viewer-next")
    assert "page 2 of 2" in opened.inner_text("#viewer-page")
    agent = opened.locator("select[data-filter=agent] option", has_text="builtin/careful")
    opened.select_option("select[data-filter=agent]", agent.get_attribute("value"))
    setting = opened.locator("select[data-filter=setting] option", has_text="misaligned")
    opened.select_option("select[data-filter=setting]", setting.get_attribute("value"))
    rows = _rows(opened)
    assert rows and all(r[0] == "builtin/careful" and r[1] == "misaligned" for r in rows)
    assert {r[2] for r in rows} == {"none", "existence", "action"}
    opened.fill("input[data-filter=group]", "nurse")
    assert _rows(opened) and all("nurse" in r[4] for r in _rows(opened))
    opened.fill("input[data-filter=group]", "")
    opened.click("#viewer-rows tr >> nth=0")
    opened.wait_for_selector("#viewer-detail .round")
    detail = opened.locator("#viewer-detail")
    assert detail.locator(".round").count() == int(rows[0][7])
    assert detail.locator(".reply.defective").count() >= 1
    assert "defective reply: misaligned" in detail.inner_text()
    notes = detail.locator(".solver").all_inner_texts()
    assert notes and "not determined yet" in notes[0] and "Still open" in notes[0]
    assert "determines the answer" in notes[-1]
    assert "gold" in detail.inner_text() and "✓ decision" in detail.inner_text()
    assert opened.url.endswith("#trace-" + opened.get_attribute(
        "#viewer-rows tr[aria-selected=true]", "data-sample"))  # fmt: skip
    detail.screenshot(path=artifacts() / "viewer.png")
    assert problems == []


def test_text_from_a_run_is_shown_never_run(page: tuple[Any, list[str]]) -> None:
    opened, problems = page
    agent = opened.locator("select[data-filter=agent] option", has_text="evil/")
    opened.select_option("select[data-filter=agent]", agent.get_attribute("value"))
    assert all(r[0] == EVIL_AGENT for r in _rows(opened))
    opened.click("#viewer-rows tr >> nth=0")
    opened.wait_for_selector("#viewer-detail .round")
    answer = opened.inner_text("#viewer-detail .answer")
    assert answer == EVIL_ANSWER
    assert opened.locator("#viewer-detail img, #viewer-detail script").count() == 0
    assert "Marcus <script>alert(1)</script> Vance" in opened.inner_text("#main-results") or \
        "Marcus <script>alert(1)</script> Vance" in opened.inner_text("#attribution")  # fmt: skip
    assert problems == []  # no dialog opened, nothing fetched, no error


def test_a_link_to_a_sample_opens_it(page: tuple[Any, list[str]], page_url: str) -> None:
    opened, problems = page
    opened.goto(page_url + "#trace-3")
    opened.reload()
    opened.wait_for_selector("#viewer-detail .round")
    assert opened.get_attribute("#viewer-rows tr[aria-selected=true]", "data-sample") == "3"
    assert problems == []
