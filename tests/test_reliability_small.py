"""Item 9 of issue 12: workers die with a killed parent; cached answers are counted (marked)
after a resume; an edited cache entry is ignored and reported; stored text is capped with
its digest and length; report.md escapes names and model text (no raw links or images, no
autolinked URL or e-mail address)."""

from __future__ import annotations

import hashlib
import html as html_module
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from uncobench_z3._textcap import STORED_TEXT_LIMIT, cap_text, cut_info, one_line
from uncobench_z3.evaluation import SAMPLES_FILE, example_benchmark, read_log
from uncobench_z3.models.testing import Fault, FaultServer
from uncobench_z3.report import md_text

from .cli_helpers import run_cli

AGENT = "openai-api/fault/m"


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return example_benchmark(tmp_path_factory.mktemp("small") / "bench", groups=1)


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state != "Z"


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


POOL = """
import time
from uncobench_z3._workers import worker_pool
pool = worker_pool(2)
futures = [pool.submit(time.sleep, 60) for _ in range(2)]
print("started", flush=True)
time.sleep(60)
"""


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc (Linux)")
def test_pool_workers_die_when_their_parent_is_killed() -> None:
    parent = subprocess.Popen([sys.executable, "-c", POOL], stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None and parent.stdout.readline().strip() == "started"
    deadline = time.time() + 10
    while len(workers := children(parent.pid)) < 2 and time.time() < deadline:
        time.sleep(0.05)
    assert len(workers) >= 2
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait(timeout=10)
    deadline = time.time() + 5
    while any(alive(pid) for pid in workers) and time.time() < deadline:
        time.sleep(0.05)
    assert not any(alive(pid) for pid in workers)  # without it they would sleep 60 s


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc (Linux)")
def test_the_workers_of_a_killed_build_die_with_it(tmp_path: Path) -> None:
    command = [str(Path(sys.executable).parent / "uncobench"), "build", "--groups", "400",
               "--workers", "2", "--out", str(tmp_path / "bench")]  # fmt: skip
    build = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while len(workers := children(build.pid)) < 2 and time.time() < deadline:
        time.sleep(0.05)
    assert len(workers) >= 2, "the build started no workers"
    os.kill(build.pid, signal.SIGKILL)
    build.wait(timeout=10)
    deadline = time.time() + 5
    while any(alive(pid) for pid in workers) and time.time() < deadline:
        time.sleep(0.05)
    assert not any(alive(pid) for pid in workers)
    # and the killed build resumes: its lock was released with it
    again = subprocess.run([*command[:3], "4", *command[4:]], capture_output=True, text=True,
                           timeout=300)  # fmt: skip
    assert again.returncode in (0, 2), again.stderr  # 2: another configuration (fewer groups)
    assert "in use" not in again.stderr


# -- cached answers: counted after a resume, marked, and checked -------------------------------
def test_cached_answers_are_counted_marked_and_checked(
    bench: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("UNCOBENCH_CACHE_DIR", str(cache))
    with FaultServer() as server:
        monkeypatch.setenv("FAULT_BASE_URL", server.base_url)
        args = ["eval", str(bench), "--agent", AGENT, "--out", str(tmp_path / "run"),
                "--no-progress", "--setting", "reliable"]  # fmt: skip
        assert run_cli(capsys, *args).code == 0
        first, _ = read_log(tmp_path / "run" / SAMPLES_FILE)
        calls = len(server.requests)
        # a resumed (here: restarted) run answers from the cache: the usage is kept, marked
        assert run_cli(capsys, *args, "--restart").code == 0
        assert len(server.requests) == calls
        again, _ = read_log(tmp_path / "run" / SAMPLES_FILE)
        assert "agent" not in again[0].usage
        assert again[0].usage["agent_cached"] == first[0].usage["agent"]
        report = run_cli(capsys, "report", str(tmp_path / "run"), "--out",
                         str(tmp_path / "rep"), "--no-plots")  # fmt: skip
        assert report.code == 0
        text = (tmp_path / "rep" / "report.md").read_text(encoding="utf-8")
        assert "agent (cached)" in text
        # an edited entry is ignored (and said so), the answer fetched again
        entry = next(cache.rglob("*.json"))
        data = json.loads(entry.read_text(encoding="utf-8"))
        data["output"]["tool_calls"][0]["arguments"]["decision"] = "Appoint"
        entry.write_text(json.dumps(data), encoding="utf-8")
        result = run_cli(capsys, *args, "--restart")
        assert result.code == 0 and "does not match its digest" in caplog.text
        assert len(server.requests) == calls + 1
        third, _ = read_log(tmp_path / "run" / SAMPLES_FILE)
        assert [r.answer for r in third] == [r.answer for r in first]


# -- stored text is capped, with the whole text's digest and length --------------------------
def test_a_huge_tool_argument_is_stored_capped(
    bench: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with FaultServer([Fault("huge", size=10_000_000)]) as server:
        monkeypatch.setenv("FAULT_BASE_URL", server.base_url)
        out = tmp_path / "run"
        result = run_cli(capsys, "eval", str(bench), "--agent", f"{AGENT},cache=false", "--out",
                         str(out), "--no-progress", "--setting", "reliable")  # fmt: skip
    assert result.code == 0, result.err
    line = (out / SAMPLES_FILE).read_text(encoding="utf-8")
    assert len(line) < 10 * STORED_TEXT_LIMIT  # not 30 MB
    records, _ = read_log(out / SAMPLES_FILE)
    assert records[0].answer is not None and records[0].result == "wrong_answer"
    info = cut_info(records[0].answer.decision or "")
    assert info == (10_000_000, hashlib.sha256(b"x" * 10_000_000).hexdigest())


def test_cap_text_keeps_short_text_and_marks_long_text() -> None:
    assert cap_text("short") == "short" and cut_info("short") is None
    long = "é" * (STORED_TEXT_LIMIT + 5)
    capped = cap_text(long)
    assert capped.startswith("é" * STORED_TEXT_LIMIT) and len(capped) <= STORED_TEXT_LIMIT + 120
    assert cut_info(capped) == (len(long), hashlib.sha256(long.encode()).hexdigest())


# -- Markdown injection -------------------------------------------------------------------------
HOSTILE = [
    "[click me](http://evil.example/x)",
    "![tracker](http://evil.example/pixel.png)",
    "<img src=x onerror=alert(1)>",
    "<script>alert(1)</script>",
    "see http://evil.example and www.evil.example",
    "**bold** _it_ `code` ~~gone~~",
    "# heading",
    "- a list",
    "a | pipe",
    "[ref]: http://evil.example",
    "write to bob@example.com or a.b+c@mail.example.org",
    "mailto:bob@example.com",
    "ping @octocat",
]


def autolinking_renderers() -> list[Callable[[str], str]]:
    """Renderers that turn bare addresses into links: markdown-it as GitHub-flavoured Markdown
    (tables, strikethrough, autolinks of URLs and e-mail addresses; linkify-it's fuzzy links of
    bare domains, which GFM does not make, off) and Python-Markdown with pymdownx's
    magiclink (what MkDocs sites use)."""
    pytest.importorskip("linkify_it")
    markdown = pytest.importorskip("markdown")
    pytest.importorskip("pymdownx")
    gfm = MarkdownIt("gfm-like")
    gfm.linkify.set({"fuzzy_link": False})

    def magiclink(text: str) -> str:
        return str(markdown.markdown(text, extensions=["tables", "pymdownx.magiclink"]))

    return [gfm.render, magiclink]


@pytest.mark.parametrize("text", HOSTILE)
def test_md_text_leaves_no_markup(text: str) -> None:
    escaped = md_text(text)
    html = MarkdownIt("commonmark").enable("table").render(f"| a |\n|---|\n| {escaped} |\n")
    html += MarkdownIt("commonmark").render(escaped)
    for render in autolinking_renderers():
        html += render(f"| a |\n|---|\n| {escaped} |\n") + render(escaped)
    for tag in ("<a ", "<img", "<script", "<strong", "<em", "<h1", "<li", "<s>", "<del"):
        assert tag not in html, (text, escaped, html)
    outside_code = re.sub(r"(`+) .*? \1", "", escaped)
    assert "http://" not in outside_code and "www." not in outside_code  # URLs: code spans


PIECES = ["@", "bob@example.com", "a.b+c@mail.example.org", "mailto:", "www.", ".", "*", "_",
          "<", "&", "#", "1.", "|", "\\", "`", "[", "]", "(", ")", "!", ":", " "]  # fmt: skip


@given(
    st.lists(
        st.one_of(st.text(st.characters(exclude_characters="\x00"), max_size=8),
                  st.sampled_from(PIECES)),
        max_size=12,
    ).map("".join)
)  # fmt: skip
@example("\x1f")  # (a control character str.split takes for whitespace: shown escaped)
def test_md_text_of_any_text_links_nothing_and_shows_the_text(text: str) -> None:
    """Any text (NUL aside, which CommonMark shows as U+FFFD): no renderer makes a link of
    it, and GitHub-flavoured Markdown shows it as it was (its whitespace made single spaces,
    control characters shown as their escapes: ``one_line``) when it holds no URL (those
    show as code)."""
    escaped = md_text(text)
    gfm, *others = autolinking_renderers()
    assert all("<a " not in render(escaped) for render in [gfm, *others]), escaped
    flat = " ".join(one_line(text).split())
    if not re.search(r"://|www\.", flat):
        shown = html_module.unescape(re.sub(r"<[^>]+>", "", gfm(escaped))).strip()
        assert shown == flat, escaped


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("pass@3 and pass@k", "pass@3 and pass@k"),  # a metric's name stays readable
        ("bob@example.com", "bob&#64;example.com"),  # an e-mail domain has a dot
        ("ping @octocat", "ping &#64;octocat"),  # a mention follows no letter
        ("x@3.c", "x&#64;3.c"),
    ],
)
def test_md_text_writes_only_an_at_sign_that_could_link_as_an_entity(text: str, shown: str) -> None:
    assert md_text(text) == shown


def test_a_report_of_hostile_names_and_answers_has_no_links(
    bench: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with FaultServer(decision="[win](http://evil.example) ![x](http://evil.example/p.png)") as srv:
        monkeypatch.setenv("FAULT_BASE_URL", srv.base_url)
        out = tmp_path / "run"
        assert run_cli(capsys, "eval", str(bench), "--agent", f"{AGENT},cache=false", "--out",
                       str(out), "--no-progress", "--setting", "reliable").code == 0  # fmt: skip
    assert run_cli(capsys, "report", str(out), "--out", str(tmp_path / "rep"),
                   "--no-plots").code == 0  # fmt: skip
    text = (tmp_path / "rep" / "report.md").read_text(encoding="utf-8")
    html = MarkdownIt("commonmark").enable("table").render(text)
    assert "evil.example" in text and "<a " not in html and "<img" not in html


def test_fewer_collections_slows_the_young_and_middle_generations_and_restores_the_pace() -> None:
    import gc

    from uncobench_z3._gc import MIDDLE_GENERATION, YOUNG_GENERATION, fewer_collections

    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        with fewer_collections():
            assert gc.get_threshold() == (YOUNG_GENERATION, MIDDLE_GENERATION, 10)
        assert gc.get_threshold() == (700, 10, 10)
        slower = (2 * YOUNG_GENERATION, 2 * MIDDLE_GENERATION, 5)
        gc.set_threshold(*slower)  # a process that already collects less: left alone
        with fewer_collections():
            assert gc.get_threshold() == slower
        gc.set_threshold(2 * YOUNG_GENERATION, 5, 5)  # each generation on its own
        with fewer_collections():
            assert gc.get_threshold() == (2 * YOUNG_GENERATION, MIDDLE_GENERATION, 5)
        with pytest.raises(RuntimeError), fewer_collections():
            raise RuntimeError  # restored on the way out of an error too
        assert gc.get_threshold() == (2 * YOUNG_GENERATION, 5, 5)
    finally:
        gc.set_threshold(*before)


def test_long_lived_objects_are_made_without_collections_then_frozen() -> None:
    import gc

    from uncobench_z3._gc import long_lived

    collections: list[int] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collections.append(info["generation"])

    gc.callbacks.append(count)
    kept: list[object] = []  # (each pass's objects alive to the end: freed, they leave the count)
    try:
        for paused_before in (False, True):
            if paused_before:
                gc.disable()
            frozen = gc.get_freeze_count()
            with long_lived():
                collections.clear()
                made = [{"n": [i]} for i in range(30_000)]  # past any young threshold
                assert collections == [] and not gc.isenabled()  # no walk while made
            assert gc.get_freeze_count() >= frozen + 2 * len(made)  # each dict and list
            kept.append(made)
            assert gc.isenabled() is not paused_before  # the collector as it was
            gc.enable()
            # a block that raises freezes nothing, and leaves the collector as it was. (The
            # count of frozen objects only falls when a frozen object is freed - a module's
            # cache letting an entry go, say - and a freeze would add every object alive,
            # these 1,000 lists at least: so "not more than before", not "as many".)
            alive = [[i] for i in range(1000)]
            frozen = gc.get_freeze_count()
            with pytest.raises(ValueError), long_lived():
                raise ValueError(len(alive))
            assert gc.get_freeze_count() <= frozen and gc.isenabled()
            kept.append(alive)
    finally:
        gc.callbacks.remove(count)
        gc.enable()
        gc.unfreeze()  # (the frozen objects go back to the oldest generation)


# What a subprocess runs: the program (`run`) or `main` alone, then the collector's statistics
# are printed for every collection the shutdown makes (after run's own end)
_SHUTDOWN_SCRIPT = """
import gc, sys
from uncobench_z3.cli import main, run
mode, sys.argv = sys.argv[1], ["uncobench", *sys.argv[2:]]
try:
    run() if mode == "run" else main()
finally:
    gc.set_debug(gc.DEBUG_STATS)
"""


def _shutdown_collections(mode: str, *args: str) -> tuple[int, str, list[int]]:
    """(exit code, stdout, objects each full collection of the shutdown walked)."""
    done = subprocess.run([sys.executable, "-c", _SHUTDOWN_SCRIPT, mode, *args],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    walked, full = [], False
    for line in done.stderr.splitlines():
        if line.startswith("gc: collecting generation"):
            full = line.rstrip(".").endswith("2")
        elif full and line.startswith("gc: objects in each generation:"):
            walked.append(sum(int(n) for n in line.split(":")[2].split()))
    return done.returncode, done.stdout, walked


def test_the_program_ends_without_walking_the_heap_and_keeps_its_exit_code() -> None:
    """The installed `uncobench` is `cli.run`: the same exit code and output as `main`, but
    the interpreter's shutdown no longer walks every object still alive (it did, about four
    times, 0.2 s after any command: uncobench_z3/_gc.py)."""
    import tomllib

    pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
    scripts = tomllib.loads(pyproject.read_text())["project"]["scripts"]
    assert scripts["uncobench"] == "uncobench_z3.cli:run"
    for args, code in ((("--version",), 0), (("verify", "--no-such-option"), 2)):
        run_code, run_out, run_walked = _shutdown_collections("run", *args)
        main_code, main_out, main_walked = _shutdown_collections("main", *args)
        assert run_code == main_code == code and run_out == main_out
        # main's shutdown walks the imported modules' objects (tens of thousands)...
        assert main_walked and max(main_walked) > 20_000, main_walked
        # ...run's only what was made after it ended (none of the package's objects)
        assert max(run_walked, default=0) < 2_000, run_walked
