"""The documentation promises only what exists: the MkDocs site builds strictly (broken links,
anchors and pages missing from the nav fail), every ``uncobench`` command and option shown in
README.md and docs/*.md exists in the CLI (and in its ``--help``), README links resolve, no
page keeps a placeholder, and the README stays a short front door with its screenshot."""

from __future__ import annotations

import importlib.util
import re
import shlex
import subprocess
import sys
import typing
from dataclasses import dataclass
from pathlib import Path

import click
import pytest

from tests.cli_helpers import run_cli
from uncobench_z3.cli import cli
from uncobench_z3.cli._app import _register
from uncobench_z3.report import MetricsDocument

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
README_MAX_BYTES = 15_000
PERFORMANCE_MAX_BYTES = 25_000
FENCE = re.compile(r"^(?P<indent> *)```[^\n]*\n(?P<body>.*?)^(?P=indent)```", re.M | re.S)
INLINE = re.compile(r"(?<!`)`(uncobench [^`\n]+)`(?!`)")


PENDING: dict[tuple[str, str], str] = {}
"""options the docs describe that an open issue is adding; each entry must go (the test
below fails) once the option exists"""


@dataclass(frozen=True)
class ShownCommand:
    where: str
    argv: tuple[str, ...]
    """the words after ``uncobench``"""


def _commands_in(text: str) -> list[str]:
    """``uncobench ...`` invocations in a shell snippet: continuations joined, comments and
    redirections dropped, split at ``&&``, ``||``, ``;`` and ``|``."""
    joined = re.sub(r"\\\n\s*", " ", text)
    found = []
    for line in joined.splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        try:
            words = list(lexer)
        except ValueError:  # not shell (a JSON or Python block that mentions uncobench)
            continue
        current: list[str] = []
        redirected = False
        for word in [*words, ";"]:
            if redirected:
                redirected = False
            elif word in (">", ">>", "<", "2>"):
                redirected = True
            elif word in ("&&", "||", ";", "|", "&"):
                if current:
                    found.append(current)
                current = []
            else:
                current.append(word)
    commands = []
    for words in found:
        # the CLI by name or path (.venv/bin/uncobench), not inspect's task uncobench_z3/uncobench
        starts = [i for i, w in enumerate(words) if w == "uncobench" or w.endswith("bin/uncobench")]
        if starts:
            commands.append(shlex.join(words[starts[0] + 1 :]))
    return commands


def shown_commands() -> list[ShownCommand]:
    shown = []
    for path in [README, *DOCS]:
        text = path.read_text(encoding="utf-8")
        snippets = [m.group("body") for m in FENCE.finditer(text)]
        snippets += [m.group(1) for m in INLINE.finditer(FENCE.sub("", text))]
        for snippet in snippets:
            for command in _commands_in(snippet):
                shown.append(
                    ShownCommand(path.relative_to(ROOT).as_posix(), tuple(shlex.split(command)))
                )
    return shown


def resolve(argv: tuple[str, ...]) -> tuple[list[str], click.Command, list[str]]:
    """The command path, the click command and the remaining words."""
    _register()
    command: click.Command = cli
    path: list[str] = []
    words = list(argv)
    while isinstance(command, click.Group) and words and not words[0].startswith("-"):
        sub = command.get_command(click.Context(command), words[0])
        assert sub is not None, f"no command `uncobench {' '.join([*path, words[0]])}`"
        command, path = sub, [*path, words.pop(0)]
    return path, command, words


def _without(words: list[str], options: set[str]) -> list[str]:
    """``words`` less the given options and their values."""
    kept, skip = [], False
    for word in words:
        if skip:
            skip = False
        elif word.split("=")[0] in options:
            skip = "=" not in word
        else:
            kept.append(word)
    return kept


def problems_of(argv: tuple[str, ...]) -> list[str]:
    """What the CLI would refuse in this invocation: unknown commands and options, option
    values outside a choice, more arguments than the command takes."""
    try:
        path, command, words = resolve(argv)
    except AssertionError as missing:
        return [str(missing)]
    pending = {option for (name, option) in PENDING if name == " ".join(path)}
    words = _without(words, pending)
    ctx = click.Context(command, info_name=" ".join(["uncobench", *path]))
    parser = command.make_parser(ctx)
    try:
        values, arguments, _ = parser.parse_args(list(words))
    except click.UsageError as error:
        return [error.format_message()]
    problems = []
    for param in command.params:
        value = values.get(param.name) if param.name else None
        if value is None or not isinstance(param.type, click.Choice):
            continue
        for item in value if isinstance(value, list | tuple) else [value]:
            if item not in param.type.choices:
                problems.append(f"{param.opts[0]} {item!r} is not one of {param.type.choices}")
    positional = [p for p in command.params if isinstance(p, click.Argument)]
    if all(p.nargs >= 0 for p in positional):
        taken = sum(p.nargs for p in positional)
        if len(arguments) > taken:
            problems.append(f"{len(arguments)} arguments given, the command takes {taken}")
    return problems


SHOWN = shown_commands()


def test_the_docs_show_commands() -> None:
    where = {c.where for c in SHOWN}
    assert "README.md" in where and "docs/build.md" in where
    assert len(SHOWN) >= 20


@pytest.mark.parametrize("shown", SHOWN, ids=lambda c: f"{c.where}: {' '.join(c.argv)[:60]}")
def test_every_shown_command_exists_in_the_cli(shown: ShownCommand) -> None:
    assert problems_of(shown.argv) == [], f"{shown.where}: uncobench {shlex.join(shown.argv)}"


def test_every_shown_option_is_in_the_commands_help(capsys: pytest.CaptureFixture[str]) -> None:
    by_command: dict[tuple[str, ...], set[str]] = {}
    for shown in SHOWN:
        path, _, words = resolve(shown.argv)
        options = {w.split("=")[0] for w in words if w.startswith("--")}
        options -= {option for (name, option) in PENDING if name == " ".join(path)}
        by_command.setdefault(tuple(path), set()).update(options)
    for path, options in by_command.items():
        result = run_cli(capsys, *path, "--help")
        assert result.code == 0, result.err
        for option in options:
            assert option in result.out, f"`uncobench {' '.join(path)} --help` lacks {option}"


@pytest.mark.parametrize(("name", "option"), sorted(PENDING))
def test_pending_options_are_still_pending(name: str, option: str) -> None:
    _, command, _ = resolve(tuple(name.split()))
    opts = {o for p in command.params for o in p.opts}
    assert option not in opts, (
        f"{option} exists now: remove it from PENDING ({PENDING[(name, option)]})"
    )


def test_the_checker_catches_what_the_cli_lacks() -> None:
    assert problems_of(("verify", "x.json", "--no-such-option"))
    assert problems_of(("no-such-command",))
    assert problems_of(("eval", "bench/", "--setting", "sometimes", "--agent", "a", "--out", "o"))
    assert problems_of(("schema", "extra"))
    assert problems_of(("demo", "--groups", "20", "--out", "demo/", "--force")) == []


def _commands(group: click.Group, path: tuple[str, ...] = ()) -> list[tuple[str, click.Command]]:
    """Every command under ``group``, by its path (``audit sample``), subcommands of groups."""
    found = []
    for name in sorted(group.list_commands(click.Context(group))):
        command = group.get_command(click.Context(group), name)
        assert command is not None
        if isinstance(command, click.Group):
            found += _commands(command, (*path, name))
        else:
            found.append((" ".join((*path, name)), command))
    return found


def _pages_text() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in [README, *DOCS])


def test_every_option_is_documented_somewhere() -> None:
    """An option only ``--help`` names is one a reader of the manual never learns of."""
    _register()
    text = _pages_text()
    missing = [
        f"uncobench {name} {opt}"
        for name, command in _commands(cli)
        for param in command.params
        if isinstance(param, click.Option)
        for opt in param.opts[:1]
        if opt.startswith("--")
        and opt != "--help"
        and not re.search(rf"{re.escape(opt)}(?![\w-])", text)
    ]
    assert missing == []


def test_the_cli_page_names_every_command_with_format() -> None:
    """docs/cli.md lists the commands that take ``--format``: every one, and only those."""
    _register()
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    listed = re.search(r"is on every command that prints tables: (.+?);", text, re.S)
    assert listed is not None
    named = set(re.findall(r"`([a-z -]+)`", listed.group(1)))
    with_format = {
        name
        for name, command in _commands(cli)
        if any("--format" in p.opts for p in command.params)
    }
    assert named == with_format


def test_the_metrics_json_table_names_every_field() -> None:
    """docs/evaluation.md's metrics.json table: each key's row names every field its entries
    hold (a field left out is one a reader of the file cannot look up)."""
    text = (ROOT / "docs" / "evaluation.md").read_text(encoding="utf-8")
    missing = []
    for key, field in MetricsDocument.model_fields.items():
        row = re.search(rf"^\| `{key}` \|(.+)$", text, re.M)
        kinds = (field.annotation, *typing.get_args(field.annotation))  # X, list[X], X | None
        entry = next((a for a in kinds if hasattr(a, "model_fields")), None)
        if row is None or entry is None:
            continue
        named = set(re.findall(r"`([a-z_]+)`", row.group(1)))
        missing += [f"{key}.{name}" for name in entry.model_fields if name not in named]
    assert missing == []


def test_readme_is_a_short_front_door_with_a_screenshot() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.encode()) <= README_MAX_BYTES
    images = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text)
    assert images, "the README shows a screenshot of the report"
    for image in images:
        path = ROOT / image
        assert path.is_file() and path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", image
        assert path.stat().st_size <= 300_000, f"{image} is not small"


PLACEHOLDER = re.compile(r"^\s*[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\s*$|\b(?:TODO|FIXME)\b", re.M)
"""a line that is one all-caps token (``SMOLLM2_FIGURES``), or a TODO: something someone
meant to fill in (figures, a paragraph) and did not"""


@pytest.mark.parametrize("page", [README, *DOCS], ids=lambda p: p.name)
def test_no_page_keeps_a_placeholder(page: Path) -> None:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))  # code blocks may name constants
    assert not PLACEHOLDER.findall(text), f"{page.name}: {PLACEHOLDER.findall(text)}"


def test_readme_links_resolve() -> None:
    text = README.read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text):
        if not re.match(r"[a-z]+://", target):
            assert (ROOT / target).exists(), f"README links to missing {target}"


def _anchors(page: Path) -> set[str]:
    """The anchors of a page's headings, as MkDocs' ``toc`` extension makes them."""
    anchors = set()
    for heading in re.findall(r"^#{1,6} +(.+?) *$", FENCE.sub("", page.read_text("utf-8")), re.M):
        slug = re.sub(r"[^\w\s-]", "", heading).strip().lower()
        anchors.add(re.sub(r"[-\s]+", "-", slug))
    return anchors


def test_readme_anchors_into_the_docs_resolve() -> None:
    """MkDocs checks the anchors of links between docs pages; the README is not one of them."""
    text = README.read_text(encoding="utf-8")
    links = re.findall(r"\]\((docs/[^)#]+\.md)#([^)]+)\)", text)
    assert links
    for target, anchor in links:
        assert anchor in _anchors(ROOT / target), f"README: no {target}#{anchor}"


def test_the_performance_page_stays_readable() -> None:
    """docs/performance.md is the current state; each round's runs go in the journal. What a
    reader reads counts: its link definitions (``[r49]: performance-rounds.md#...``) do not."""
    text = (ROOT / "docs" / "performance.md").read_text(encoding="utf-8")
    read = [line for line in text.splitlines() if not re.match(r"\[[^\]]+\]: \S+$", line)]
    assert len("\n".join(read).encode()) <= PERFORMANCE_MAX_BYTES
    assert "the-rounds-newest-first" in _anchors(ROOT / "docs" / "performance-rounds.md")


@pytest.mark.skipif(
    any(importlib.util.find_spec(m) is None for m in ("mkdocs", "material", "mkdocstrings")),
    reason="MkDocs is not installed (pip install -e '.[docs]', or '.[test]' which includes it)",
)
def test_the_docs_site_builds_strictly(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={"NO_MKDOCS_2_WARNING": "1", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert (tmp_path / "index.html").is_file() and (tmp_path / "api" / "index.html").is_file()
