"""Names in group files, run logs and manifests that the task does not have are refused
where they are read: one line, exit 2, never a proof of a group that names nothing and never
a crash deeper down."""

from __future__ import annotations

import copy
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from uncobench_z3.construct import MANIFEST_FILE, build_benchmark, load_groups
from uncobench_z3.errors import SpecReadError
from uncobench_z3.evaluation import SAMPLES_FILE, example_benchmark

from .cli_helpers import one_line, reliable_run, run_cli

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
GROUP = EXAMPLES / "groups" / "mining_supervisor.group.json"


def _incomplete(group: dict[str, Any]) -> dict[str, Any]:
    setting = next(s for s in group["settings"] if s["name"] == "incomplete")
    return setting["defects"][0]  # type: ignore[no-any-return]


def _signs(group: dict[str, Any], kind: str) -> dict[str, Any]:
    defect = _incomplete(group)
    return next(
        sign
        for clause in defect["targeted_follow_up"]["all_of"]
        for sign in clause["any_of"]
        if sign["sign"] == kind
    )


def _no_form(group: dict[str, Any]) -> None:
    for key in ("options", "low", "high"):
        _incomplete(group)["first_reply"][0].pop(key, None)


EDITS: dict[str, Callable[[dict[str, Any]], object]] = {
    "fact": lambda g: _incomplete(g).update(fact="nosuchfact"),
    "role": lambda g: _incomplete(g).update(role="nosuchrole"),
    "fact-of-another-role": lambda g: _incomplete(g).update(role=g["spec"]["roles"][0]["id"]),
    "candidate": lambda g: _incomplete(g).update(candidates=["nobody"]),
    "stated-fact": lambda g: _incomplete(g)["first_reply"][0].update(fact="nosuchfact"),
    "stated-candidate": lambda g: _incomplete(g)["first_reply"][0].update(candidate="nobody"),
    "stated-context": lambda g: _incomplete(g)["first_reply"][0].update(context="May 1999"),
    "stated-no-form": _no_form,
    "stated-two-forms": lambda g: _incomplete(g)["first_reply"][0].update(value="passed"),
    "stated-not-a-member": lambda g: _incomplete(g)["first_reply"][1].update(value="maybe"),
    "resolved-fact": lambda g: _incomplete(g)["resolved_reply"][0].update(fact="nosuchfact"),
    "sign-fact": lambda g: _signs(g, "fact").update(fact="nosuchfact"),
    "sign-candidate": lambda g: _signs(g, "candidate").update(candidates=["nobody"]),
    "twice": lambda g: g["settings"].append(copy.deepcopy(g["settings"][2])),
}


@pytest.fixture(scope="module")
def group_data() -> dict[str, Any]:
    return json.loads(GROUP.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_a_group_naming_what_its_task_lacks_is_refused_when_read(
    group_data: dict[str, Any], tmp_path: Path, edit: str
) -> None:
    data = copy.deepcopy(group_data)
    if edit == "fact-of-another-role":
        assert _incomplete(data)["role"] != data["spec"]["roles"][0]["id"]
    EDITS[edit](data)
    path = tmp_path / "group.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(SpecReadError) as raised:
        load_groups(path)
    assert raised.value.json_path is not None and raised.value.json_path.startswith("$.settings[")


def test_the_example_groups_name_only_what_their_tasks_have() -> None:
    for path in sorted((EXAMPLES / "groups").glob("*.group.json")):
        assert load_groups(path)


@pytest.mark.parametrize("edit", ["fact", "stated-no-form"])
def test_verify_eval_and_followup_refuse_such_a_group(
    group_data: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: str
) -> None:
    data = copy.deepcopy(group_data)
    EDITS[edit](data)
    path = tmp_path / "group.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    verified = run_cli(capsys, "verify", str(path))
    assert verified.code == 2 and "$.settings[" in verified.err
    assert "settings[" in one_line(
        run_cli(capsys, "followup", str(path), "--setting", "incomplete", "--message", "hi")
    )
    out = tmp_path / "run"
    line = one_line(run_cli(capsys, "eval", str(path), "--agent", "builtin/naive", "--out",
                            str(out), "--no-progress"))  # fmt: skip
    assert "settings[" in line and not out.exists()


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    bench = example_benchmark(tmp_path_factory.mktemp("refs") / "bench", groups=1)
    return reliable_run(bench, tmp_path_factory.mktemp("refs-run") / "run")


def _edit_first_statement(run: Path, target: Path, **changes: object) -> None:
    shutil.copytree(run, target)
    log = target / SAMPLES_FILE
    lines = log.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[0])
    stated = next(r for t in record["trace"] for r in t["replies"] if r["stated"])["stated"]
    stated[0].update(changes)
    lines[0] = json.dumps(record)
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.mark.parametrize(
    "changes", [{"fact": "nosuchfact"}, {"candidate": "nobody"}, {"value": None}]
)
def test_a_run_log_stating_what_the_task_lacks_is_refused_by_its_readers(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], changes: dict[str, object]
) -> None:
    edited = tmp_path / "run"
    _edit_first_statement(run, edited, **changes)
    for command in (
        ["report", str(edited), "--out", str(tmp_path / "rep"), "--no-plots"],
        ["judge", str(edited)],
        ["view", str(edited), "--no-browser"],
    ):
        line = one_line(run_cli(capsys, *command))
        assert f"{SAMPLES_FILE}:1:" in line and "stated[0]" in line, line


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("refs-build") / "bench"
    build_benchmark(out, groups=2, seed=3, workers=1)
    return out


@pytest.mark.parametrize(
    ("path", "junk"),
    [
        (("pass_rates",), []),
        (("pass_rates", "rejected"), None),
        (("domains", "x"), 3),
        (("validity", "targets"), {"a": 1}),
        (("validity", "gold_chances", "max"), None),
        (("naturalness", "examples"), []),
        (("defects_by_role",), "x"),
        (("pass_rates", "retained_percent"), "NaN"),
    ],
)
def test_stats_refuses_a_manifest_whose_statistics_were_damaged(
    built: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    path: tuple[str, ...],
    junk: object,
) -> None:
    copy_ = tmp_path / "bench"
    shutil.copytree(built, copy_)
    manifest = json.loads((copy_ / MANIFEST_FILE).read_text(encoding="utf-8"))
    node = manifest["stats"]
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = junk
    (copy_ / MANIFEST_FILE).write_text(json.dumps(manifest), encoding="utf-8")
    line = one_line(run_cli(capsys, "stats", str(copy_)))
    assert "manifest.json: $.stats." in line


def test_stats_reads_the_statistics_a_build_writes(
    built: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli(capsys, "stats", str(built)).code == 0


def test_judge_refuses_a_benchmark_that_is_not_the_runs(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = one_line(run_cli(capsys, "judge", str(run), "--bench", str(GROUP)))
    assert "is not the benchmark" in line
    assert run_cli(capsys, "judge", str(run)).code == 0
