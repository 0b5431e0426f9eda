"""``uncobench verify`` / ``schema``: exit codes, JSON output, certificates, bad input."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.cli_helpers import run_cli

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "mining_supervisor.json"


def test_verify_proves_an_example(capsys: pytest.CaptureFixture[str]) -> None:
    result = run_cli(capsys, "verify", str(EXAMPLE))
    assert result.code == 0
    assert "Appoint Marcus Vance: 60,000 AUD" in result.out
    assert "necessity-security" in result.out


def test_verify_json_shape(capsys: pytest.CaptureFixture[str]) -> None:
    result = run_cli(capsys, "verify", str(EXAMPLE), "--json")
    assert result.code == 0
    top = json.loads(result.out)
    assert top["verdict"] == "proved" and top["documents"] == 1 and top["unreadable"] == []
    (doc,) = top["reports"]
    assert doc["gold"]["decision"] == "Appoint" and doc["gold"]["number"] == "60000"
    assert doc["verdict"] == "proved"
    kinds = {c["kind"] for c in doc["checks"]}
    assert {"structure", "uniqueness", "necessity"} <= kinds
    necessity = [c for c in doc["checks"] if c["kind"] == "necessity"]
    assert all(c["role"] and c["verdict"] == "proved" and c["witness"] for c in necessity)


def test_refuted_exit_code_and_core_in_json(capsys: pytest.CaptureFixture[str]) -> None:
    result = run_cli(
        capsys, "verify", str(ROOT / "examples/invalid/unnecessary_role.json"), "--json"
    )
    assert result.code == 1
    (doc,) = json.loads(result.out)["reports"]
    refuted = [c for c in doc["checks"] if c["verdict"] == "refuted"]
    assert refuted[0]["core"]


def test_structural_failure_lists_paths(capsys: pytest.CaptureFixture[str]) -> None:
    result = run_cli(capsys, "verify", str(ROOT / "examples/invalid/unknown_fact.json"))
    assert result.code == 1
    assert "$.conditions[0].fact" in result.out


def test_unknown_exit_code(capsys: pytest.CaptureFixture[str]) -> None:
    result = run_cli(capsys, "verify", str(EXAMPLE), "--rlimit", "1")
    assert result.code == 3


def test_several_files_and_globs_print_a_summary(capsys: pytest.CaptureFixture[str]) -> None:
    result = run_cli(capsys, "verify", str(ROOT / "examples" / "*.json"))
    assert result.code == 0
    assert "verification summary" in result.out
    mixed = run_cli(
        capsys, "verify", str(EXAMPLE), str(ROOT / "examples/invalid/two_eligible.json")
    )
    assert mixed.code == 1


def test_unreadable_input_exit_2_without_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"id": "x", "candidates": 3}')
    result = run_cli(capsys, "verify", str(bad))
    assert result.code == 2
    assert str(bad) in result.err and "$." in result.err
    assert "Traceback" not in result.err + result.out
    missing = run_cli(capsys, "verify", str(tmp_path / "missing.json"))
    assert missing.code == 2 and "no such file" in missing.err
    notjson = tmp_path / "notjson.json"
    notjson.write_text("{not json")
    assert run_cli(capsys, "verify", str(notjson)).code == 2
    nomatch = run_cli(capsys, "verify", str(tmp_path / "*.nothing"))
    assert nomatch.code == 2


def test_emit_smt2_writes_one_file_per_query(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result = run_cli(capsys, "verify", str(EXAMPLE), "--emit-smt2", str(tmp_path))
    assert result.code == 0
    files = sorted(p.name for p in (tmp_path / "mining_supervisor").iterdir())
    assert "uniqueness.smt2" in files and "gold.smt2" in files
    assert sum(name.startswith("necessity-") for name in files) == 6
    text = (tmp_path / "mining_supervisor" / "uniqueness.smt2").read_text()
    assert "; expected: unsat" in text and "(check-sat)" in text
    assert f"{len(files)} certificate file(s) written under {tmp_path}" in result.out


def test_emit_smt2_keeps_every_certificate_of_inputs_sharing_a_task_id(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a group and its spec share a task id and their common queries: the folder holds both
    group = ROOT / "examples" / "groups" / "mining_supervisor.group.json"
    out = tmp_path / "both"
    result = run_cli(capsys, "verify", str(group), str(EXAMPLE), "--emit-smt2", str(out))
    alone = tmp_path / "group"
    assert run_cli(capsys, "verify", str(group), "--emit-smt2", str(alone)).code == 0
    assert result.code == 0
    names = sorted(p.name for p in (alone / "mining_supervisor").iterdir())
    assert sorted(p.name for p in (out / "mining_supervisor").iterdir()) == names
    # another task under the same id would replace the first one's certificates: refused
    data = json.loads(EXAMPLE.read_text())
    data["records"][0]["value"] += 1  # another instance, still inside its domain
    twin = tmp_path / "twin.json"
    twin.write_text(json.dumps(data))
    out = tmp_path / "twins"
    result = run_cli(capsys, "verify", str(EXAMPLE), str(twin), "--emit-smt2", str(out))
    assert result.code == 2 and "no certificate written" in result.out
    assert "task id 'mining_supervisor' is also that of" in result.err
    assert not out.exists()


def test_emit_smt2_into_a_folder_used_before_keeps_only_the_new_certificates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the group's 15 certificates, then its spec edited (8 queries): the group's other 7
    # (its settings' validity) were left beside the new 8, of another instance
    group = ROOT / "examples" / "groups" / "mining_supervisor.group.json"
    out = tmp_path / "certificates"
    assert run_cli(capsys, "verify", str(group), "--emit-smt2", str(out)).code == 0
    data = json.loads(EXAMPLE.read_text())
    data["records"][0]["value"] += 1
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(data))
    fresh = tmp_path / "fresh"
    assert run_cli(capsys, "verify", str(edited), "--emit-smt2", str(fresh)).code == 0
    assert run_cli(capsys, "verify", str(edited), "--emit-smt2", str(out)).code == 0
    task = "mining_supervisor"
    assert {p.name: p.read_text() for p in (out / task).iterdir()} == {
        p.name: p.read_text() for p in (fresh / task).iterdir()
    }


def test_emit_smt2_of_an_unreadable_input_claims_no_certificate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    out = tmp_path / "certs"
    result = run_cli(capsys, "verify", str(broken), "--emit-smt2", str(out))
    assert result.code == 2 and "no certificate written" in result.out
    assert "written under" not in result.out and not out.exists()


def test_schema_command(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    result = run_cli(capsys, "schema")
    schema = json.loads(result.out)
    assert result.code == 0
    assert {"candidates", "roles", "facts", "conditions", "rule"} <= set(schema["properties"])
    out = tmp_path / "schema.json"
    assert run_cli(capsys, "schema", "--out", str(out)).code == 0
    assert json.loads(out.read_text()) == schema


BASE: dict[str, Any] = json.loads(EXAMPLE.read_text())
junk = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)


@st.composite
def mutated_specs(draw: st.DrawFn) -> Any:
    doc: Any = copy.deepcopy(BASE)
    for _ in range(draw(st.integers(1, 3))):
        node = doc
        path = []
        while isinstance(node, dict | list) and node and draw(st.booleans()):
            key = draw(
                st.sampled_from(sorted(node))
                if isinstance(node, dict)
                else st.integers(0, len(node) - 1)
            )
            path.append(key)
            parent, node = node, node[key]
        if not path:
            doc = draw(junk) if draw(st.integers(0, 9)) == 0 else doc
            continue
        action = draw(st.sampled_from(["replace", "delete"]))
        if action == "delete" and isinstance(parent, dict):
            del parent[path[-1]]
        elif action == "delete" and isinstance(parent, list):
            parent.pop(path[-1])
        else:
            parent[path[-1]] = draw(junk)
    return doc


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(mutated_specs())
def test_malformed_specs_never_crash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], doc: Any
) -> None:
    path = tmp_path / "mutant.json"
    path.write_text(json.dumps(doc))
    result = run_cli(capsys, "verify", str(path))
    assert result.code in (0, 1, 2, 3)
    assert "Traceback" not in result.err + result.out
    if result.code == 2:
        assert str(path) in result.err


@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=60))
def test_random_bytes_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], blob: bytes
) -> None:
    path = tmp_path / "blob.json"
    path.write_bytes(blob)
    result = run_cli(capsys, "verify", str(path))
    assert result.code == 2
    assert "Traceback" not in result.err


def test_emit_smt2_of_a_built_benchmark_writes_every_group_as_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A benchmark folder's certificates are each group's, whatever the workers, and the same
    files as verifying that group's own file writes (they used to be dropped: exit 0, none)."""
    from uncobench_z3.evaluation import example_benchmark

    bench = example_benchmark(tmp_path / "bench", groups=2)
    written: list[dict[str, str]] = []
    for workers in ("1", "2"):
        out = tmp_path / f"certs{workers}"
        result = run_cli(capsys, "verify", str(bench), "--emit-smt2", str(out),
                         "--workers", workers)  # fmt: skip
        assert result.code == 0, result.err
        files = {str(p.relative_to(out)): p.read_text() for p in out.rglob("*.smt2")}
        assert f"{len(files)} certificate file(s) written under {out}" in result.out
        written.append(files)
    assert written[0] == written[1]
    lines = (bench / "groups.jsonl").read_text().splitlines()
    assert {name.split("/")[0] for name in written[0]} == {json.loads(x)["id"] for x in lines}
    alone = tmp_path / "alone"
    group = json.loads(lines[0])
    (tmp_path / "group.json").write_text(json.dumps(group))
    assert run_cli(capsys, "verify", str(tmp_path / "group.json"), "--emit-smt2",
                   str(alone)).code == 0  # fmt: skip
    own = {str(p.relative_to(alone)): p.read_text() for p in alone.rglob("*.smt2")}
    assert own and own == {k: v for k, v in written[0].items() if k.startswith(group["id"] + "/")}
