"""The benchmark scripts still run (tiny sizes; their figures are not asserted)."""

from __future__ import annotations

import importlib.util
import json
import os
import runpy
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.cli_helpers import run_cli

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


@pytest.mark.parametrize(
    ("script", "args", "expected"),
    [
        (
            "verify_throughput.py",
            ["--specs", "4", "--brute-specs", "1", "--workers", "2"],
            "engine speed-up over fresh solver",
        ),
        (
            "build_throughput.py",
            ["--groups", "3", "--stage-sample", "2", "--workers", "1", "2"],
            "identical output for every worker count",
        ),
        (
            "eval_overhead.py",
            [
                "--copies",
                "1",
                "--concurrency",
                "4",
                "--workers",
                "1",
                "2",
                "--agents",
                "builtin/naive",
            ],
            "CPU per round, builtin/naive",
        ),
        (
            "soak.py",
            ["--kills", "1", "--build-kills", "0", "--model-kills", "0", "--groups", "2"],
            "0 lost, 0 duplicated, identical scores",
        ),
        ("report_scale.py", ["--groups", "1", "--samples", "20"], "baseline CPU s"),
        ("inspect_overhead.py", ["--groups", "1", "--setting", "reliable"], "ratio"),
    ],
)
def test_benchmark_script_runs(
    script: str,
    args: list[str],
    expected: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert expected in _run(script, args, monkeypatch, capsys)


@pytest.mark.parametrize(
    ("script", "args", "key"),
    [
        (
            "verify_throughput.py",
            ["--specs", "3", "--brute-specs", "1", "--brute-explore", "20000"],
            "engine_cpu",
        ),
        (
            "build_throughput.py",
            ["--groups", "2", "--stage-sample", "1", "--workers", "1", "2"],
            "runs",
        ),
    ],
)
def test_benchmark_script_prints_json(
    script: str,
    args: list[str],
    key: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    figures = json.loads(_run(script, [*args, "--json"], monkeypatch, capsys))
    assert key in figures
    assert figures.get("identical_output", True) is True


@pytest.mark.ray
def test_build_throughput_gives_rays_fixed_cost_beside_its_overhead(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("ray", reason='Ray is not installed (pip install "uncobench-z3[ray]")')
    # ``local``: a new local Ray for each, not a cluster another test left on this machine
    args = ["--groups", "2", "--stage-sample", "0", "--workers", "2", "--ray"]
    figures = json.loads(_run("build_throughput.py", [*args, "--ray-address", "local", "--json"],
                              monkeypatch, capsys))  # fmt: skip
    assert figures["identical_output"] is True
    overhead = figures["ray_overhead"]
    alone = overhead["ray_alone"]
    assert alone["wall_s"] > 0 and alone["cpu_s"] > 0  # a Ray started: its daemons counted
    assert figures["ray_cpu_counts"] == "process tree"
    ray_wall, local_wall = figures["runs"]["ray"]["wall_s"], figures["runs"]["2"]["wall_s"]
    assert overhead["wall_ratio_without_ray_alone"] == round(
        (ray_wall - alone["wall_s"]) / local_wall, 3
    )


def test_eval_overhead_json_has_the_fresh_first_pass_and_a_copy_per_slot(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--copies", "1", "--concurrency", "2", "--agents", "--breakdown", "--json"]
    figures = json.loads(_run("eval_overhead.py", args, monkeypatch, capsys))
    assert figures["groups"] == 5  # the per-round figures: --copies copies of the 5 examples
    assert figures["round_cpu_ms"] > 0 and figures["round_cpu_ms_fresh_process"] > 0
    # where the fresh first pass spends its CPU: every part measured, the rest what is left
    parts = figures["first_pass_breakdown"]
    assert len(parts) == 8 and all(part["cpu_ms_per_group"] >= 0 for part in parts.values())
    stored = parts["minimum rounds (stored in the group)"]
    readings = parts["colleagues' readings of the agent's messages"]
    # the groups store their minimum rounds, as a built benchmark's: read, not searched for
    assert readings["cpu_ms_per_group"] > stored["cpu_ms_per_group"] >= 0
    assert abs(sum(part["share"] for part in parts.values()) - 1) < 0.01
    assert figures["machine"]["additions_cpu_s"] > 0  # the machine's speed, to compare periods
    assert figures["workers_event_loop"] in ("asyncio", "uvloop")  # (_eventloop.py's choice)
    run = figures["concurrency"]["2"]
    assert run["groups"] == 10  # raised to a copy of the examples (5 groups) per slot
    assert run["samples"] > figures["samples"] and run["ratio"] > 0
    # the same schedule as sleeps alone: a baseline measured in the same run
    assert run["sleeps_alone_s"] > 0 and run["ratio_to_sleeps_alone"] > 0
    # the start (up to the agent's first call) and the driver's CPU, parts of what was measured
    assert 0 < run["first_call_s"] < run["measured_s"]
    assert 0 < run["driver_cpu_s"] <= run["cpu_s"]  # (one process here: the driver plays)


def test_eval_overhead_measures_every_builtin_agent_alike_in_a_fresh_process(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--copies", "1", "--concurrency", "--agents", "builtin/careful", "builtin/naive",
            "--json"]  # fmt: skip
    figures = json.loads(_run("eval_overhead.py", args, monkeypatch, capsys))
    agents = figures["builtin_agents"]
    assert list(agents) == ["builtin/careful", "builtin/naive"]
    for measured in agents.values():  # a first pass and the same samples again, each agent
        assert measured["rounds"] >= figures["samples"]
        assert measured["round_cpu_ms"] > 0 and measured["round_cpu_ms_again"] > 0
        assert measured["sample_cpu_ms"] >= measured["round_cpu_ms"]


def test_eval_overhead_plays_a_first_pass_over_a_built_benchmark(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    bench = tmp_path / "bench"
    assert run_cli(capsys, "build", "--groups", "4", "--seed", "3", "--out", str(bench)).code == 0
    args = ["--copies", "1", "--concurrency", "--agents", "--bench", str(bench),
            "--bench-passes", "2", "--memory-concurrency", "4", "--latency-ms", "1",
            "--breakdown", "--json"]  # fmt: skip
    figures = json.loads(_run("eval_overhead.py", args, monkeypatch, capsys))
    first = figures["bench_first_pass"]
    # the benchmark's first 5 x --copies groups (all 4 it has), every sample once
    assert first["groups"] == 4 and first["samples"] >= 4 and first["rounds"] >= first["samples"]
    # each pass in a fresh interpreter, the figure their median (of the runs as measured: each
    # run and the figure are rounded to 0.001 ms apart, so they agree within that)
    runs = first["round_cpu_ms_fresh_process_runs"]
    assert len(runs) == 2 and all(ms > 0 for ms in runs)
    assert abs(first["round_cpu_ms_fresh_process"] - statistics.median(runs)) <= 0.001 + 1e-9
    parts = first["breakdown"]
    assert len(parts) == 8 and abs(sum(part["share"] for part in parts.values()) - 1) < 0.01
    assert figures["memory"]["groups"] == 4 and figures["memory"]["exit_code"] == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--bench", "missing"], "--bench: "),
        (["--bench", "empty.jsonl"], "--bench: "),
        (["--copies", "0"], "argument --copies: at least 1, not 0"),
        (["--bench-passes", "0"], "argument --bench-passes: at least 1, not 0"),
        (["--concurrency", "0"], "argument --concurrency: at least 1, not 0"),
        (["--workers", "1", "0"], "argument --workers: at least 1, not 0"),
        (["--memory-concurrency", "0"], "argument --memory-concurrency: at least 1, not 0"),
        (["--latency-ms", "-5"], "argument --latency-ms: a finite number of at least 0"),
        (["--latency-ms", "nan"], "argument --latency-ms: a finite number of at least 0"),
    ],
)
def test_eval_overhead_refuses_bad_input_in_one_line_before_any_work(
    args: list[str],
    message: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "empty.jsonl").write_text("", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    last = _refused("eval_overhead.py", args, monkeypatch, capsys)
    assert last.startswith(f"eval_overhead.py: error: {message}")


@pytest.mark.parametrize("name", ["careful", "builtin/nobody", "mock/model"])
def test_eval_overhead_refuses_an_agent_it_cannot_measure_in_one_line(
    name: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    last = _refused("eval_overhead.py", ["--agents", name], monkeypatch, capsys)
    assert last.startswith("eval_overhead.py: error: --agents: ")


@pytest.mark.parametrize(
    ("script", "args", "message"),
    [
        ("verify_throughput.py", ["--specs", "0"], "argument --specs: at least 1, not 0"),
        ("verify_throughput.py", ["--workers", "0"], "argument --workers: at least 1, not 0"),
        ("verify_throughput.py", ["--brute-specs", "-1"], "argument --brute-specs: at least 0"),
        ("verify_throughput.py", ["--brute-explore", "0"], "argument --brute-explore: at least"),
        ("verify_throughput.py", ["--specs", "two"], "argument --specs: not a whole number"),
        ("verify_throughput.py", ["--bench", "missing"], "argument --bench: missing is not a"),
        ("build_throughput.py", ["--groups", "0"], "argument --groups: at least 1, not 0"),
        ("build_throughput.py", ["--workers", "2", "0"], "argument --workers: at least 1, not 0"),
        ("build_throughput.py", ["--keep", "full"], "--keep: full exists and is not an empty"),
        ("build_throughput.py", ["--keep", "file"], "--keep: file exists and is not an empty"),
        ("report_scale.py", ["--samples", "0"], "argument --samples: at least 1, not 0"),
        ("report_scale.py", ["--bench", "full"], "argument --bench: full is not a built"),
        ("soak.py", ["--fault-share", "1.5"], "argument --fault-share: a share from 0 to 1"),
        ("soak.py", ["--groups", "0"], "argument --groups: at least 1, not 0"),
        ("soak.py", ["--kills", "-1"], "argument --kills: at least 0, not -1"),
        ("local_prompt_cache.py", ["--repeat", "0"], "argument --repeat: at least 1, not 0"),
        ("followup_accuracy.py", ["--floor", "nan"], "argument --floor: a share from 0 to 1"),
        ("inspect_overhead.py", ["--setting", "reliable,sunny"], "--setting: not a setting: sunny"),
    ],
)
def test_benchmark_scripts_refuse_bad_numbers_and_folders_in_one_line_before_any_work(
    script: str,
    args: list[str],
    message: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "notes.txt").write_text("mine", encoding="utf-8")
    (tmp_path / "file").write_text("mine", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    last = _refused(script, args, monkeypatch, capsys)
    assert last.startswith(f"{script}: error: {message}")
    # nothing of the user's was touched (--keep used to empty its folder)
    assert (tmp_path / "full" / "notes.txt").read_text(encoding="utf-8") == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "full"]


def test_build_throughput_keeps_the_first_build_whole_in_a_new_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    keep = tmp_path / "kept"
    args = ["--groups", "2", "--stage-sample", "0", "--workers", "1", "--keep", str(keep)]
    assert "identical output" in _run("build_throughput.py", args, monkeypatch, capsys)
    assert (keep / "groups.jsonl").is_file() and (keep / "manifest.json").is_file()
    assert [p.name for p in tmp_path.iterdir()] == ["kept"]  # no partial copy left beside it


def _refused(
    script: str,
    args: list[str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> str:
    """The last line of what ``script`` said refusing ``args``: exit 2, nothing on stdout,
    no traceback."""
    monkeypatch.setattr(sys, "argv", [script, *args])
    with pytest.raises(SystemExit) as stopped:
        runpy.run_path(str(BENCHMARKS / script), run_name="__main__")
    assert stopped.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "Traceback" not in captured.err
    return captured.err.splitlines()[-1]


def _run(
    script: str,
    args: list[str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> str:
    monkeypatch.setattr(sys, "argv", [script, *args])
    try:
        runpy.run_path(str(BENCHMARKS / script), run_name="__main__")
    except SystemExit as stopped:
        assert stopped.code in (0, None)
    return capsys.readouterr().out


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc and uses PR_SET_CHILD_SUBREAPER")
def test_tree_cpu_counts_what_a_command_leaves_running() -> None:
    # the command exits at once; its orphaned child burns CPU after it (as Ray's daemons and
    # workers outlive `uncobench build --executor ray`): RUSAGE_CHILDREN would see none of it
    orphan = (
        "import subprocess, sys; subprocess.Popen([sys.executable, '-c', "
        "'import time\\nend = time.process_time() + 0.4\\nwhile time.process_time() < end: pass'])"
    )
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / "_common.py"), sys.executable, "-c", orphan],
        capture_output=True,
        text=True,
        check=True,
    )
    figures = json.loads(done.stdout.splitlines()[-1])
    assert figures["code"] == 0
    assert figures["cpu_s"] >= 0.3


@pytest.mark.skipif(
    not (BENCHMARKS.parent / ".git").exists(), reason="compares git revisions of a checkout"
)
def test_compare_versions_runs_both_versions_alternately_and_compares_their_output(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--before", "HEAD", "--runs", "2", "--json", "--", "build", "--groups", "2"]
    figures = json.loads(_run("compare_versions.py", args, monkeypatch, capsys))
    assert figures["command"] == ["build", "--groups", "2"]
    assert len(figures["cpu_s"]["before"]) == len(figures["cpu_s"]["after"]) == 2
    assert figures["every_run_succeeded"] and figures["same_output"]  # the same code twice
    assert figures["after_over_before_cpu"] > 0


@pytest.mark.skipif(
    not (BENCHMARKS.parent / ".git").exists(), reason="compares git revisions of a checkout"
)
def test_compare_versions_runs_both_versions_from_bytecode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # where Python writes no bytecode itself, an exported revision would compile every module
    # in every run, and its runs would look slower than this tree's by that much
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    script = runpy.run_path(str(BENCHMARKS / "compare_versions.py"))
    tree = script["export_revision"]("HEAD", tmp_path / "tree")
    script["compile_package"](tree)
    sources = sorted((tree / "uncobench_z3").rglob("*.py"))
    assert sources
    assert all(Path(importlib.util.cache_from_source(str(source))).is_file() for source in sources)


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["--before", "no-such-revision", "--", "verify", "x"], "is not a revision"),
        (["--before", "HEAD", "--", "audit", "x"], "must be one of verify, build, eval"),
        (["--before", "HEAD", "--", "build", "--out", "x"], "its own --out"),
        (["--before", "HEAD", "--runs", "0", "--", "build"], "at least 1"),
    ],
)
def test_compare_versions_refuses_bad_input_in_one_line_before_any_run(
    args: list[str],
    error: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    last = _refused("compare_versions.py", args, monkeypatch, capsys)
    assert last.startswith("compare_versions.py: error: ") and error in last


FAKE_VALGRIND = """#!/bin/sh
# valgrind's options dropped, the command run; counts as callgrind prints them, one line a
# process: 1,000 for a start (--help), 2,000 for the version before, 1,800 for this tree's
while [ "${1#--}" != "$1" ]; do shift; done
"$@"; code=$?
case "$* $PYTHONPATH" in
  *--help*) total=1000 ;;
  *before-tree*) total=2000 ;;
  *) total=1800 ;;
esac
echo "==11== Collected : $((total - 100))" >&2
echo "==12== Collected : 100" >&2
exit $code
"""


def test_compare_versions_counts_instructions_with_the_start_taken_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--instructions``: each run under valgrind (here a stand-in that runs the command and
    prints callgrind's per-process totals), the processes' counts added up, the start
    (``uncobench --help``) counted once a version and taken off."""
    folder = tmp_path / "bin"
    folder.mkdir()
    fake = folder / "valgrind"
    fake.write_text(FAKE_VALGRIND, encoding="utf-8")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}:{os.environ['PATH']}")
    args = ["--before", "HEAD", "--runs", "1", "--instructions", "--json", "--", "build",
            "--groups", "2"]  # fmt: skip
    figures = json.loads(_run("compare_versions.py", args, monkeypatch, capsys))
    assert figures["every_run_succeeded"] and figures["same_output"]
    assert figures["instructions"] == {"before": [2000], "after": [1800]}
    assert figures["start_instructions"] == {"before": 1000, "after": 1000}
    assert figures["after_over_before_instructions"] == 0.9
    assert figures["after_over_before_instructions_without_start"] == 0.8


def test_compare_versions_reads_callgrinds_totals() -> None:
    read = runpy.run_path(str(BENCHMARKS / "compare_versions.py"))["collected_instructions"]
    text = "==7== Callgrind\n==7== Collected : 5\nother\n==8== Collected : 1234 \n"
    assert read(text) == 1239
    assert read("==7== Events : Ir\n") is None


def test_compare_versions_refuses_instructions_without_valgrind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no valgrind there
    args = ["--before", "HEAD", "--instructions", "--", "build", "--groups", "2"]
    last = _refused("compare_versions.py", args, monkeypatch, capsys)
    assert last.startswith("compare_versions.py: error: --instructions needs valgrind")


def test_compare_versions_compares_samples_without_their_timing(tmp_path: Path) -> None:
    module = runpy.run_path(str(BENCHMARKS / "compare_versions.py"))
    first, second, third = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    samples = [{"key": "k2", "score": 1, "elapsed_seconds": 0.5},
               {"key": "k1", "score": 0, "elapsed_seconds": 0.1}]  # fmt: skip
    for folder, records in (
        (first, samples),
        (second, [{**samples[1], "elapsed_seconds": 9.0}, samples[0]]),  # another order, time
        (third, [samples[0], {**samples[1], "score": 1}]),  # another score
    ):
        folder.mkdir()
        text = "".join(json.dumps(record) + "\n" for record in records)
        (folder / "samples.jsonl").write_text(text, encoding="utf-8")
    normalised = module["_normalised_samples"]
    assert normalised(first) == normalised(second)
    assert normalised(first) != normalised(third)


def test_verify_throughput_gives_the_brute_force_ratio_for_each_explore_limit(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--specs", "4", "--brute-specs", "4", "--brute-explore", "20000", "30", "--json"]
    brute = json.loads(_run("verify_throughput.py", args, monkeypatch, capsys))["brute_force"]
    assert brute["explore_limit"] == 20000  # the largest limit runs
    tiers = brute["by_explore_limit"]
    assert [tier["explore_limit"] for tier in tiers] == [30, 20000]
    # a spec decided within a limit is decided within every larger one, and the largest
    # limit's tier is the overall figure
    assert tiers[0]["specs_timed"] <= tiers[1]["specs_timed"] == brute["specs_timed"]
    assert tiers[1]["speedup"] == brute["speedup"]
    decided = brute["specs_timed"]
    assert decided + len({r.split(":")[0] for r in brute["roles_skipped"]}) == 4
    if decided:
        per_spec = brute["speedup_per_spec"]
        assert 0 < per_spec["min"] <= per_spec["median"] <= per_spec["max"]


def test_eval_overhead_first_pass_lets_each_group_go_as_the_runner_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fresh first pass keeps alive what a run keeps: after a group's last sample, its
    prepared data and its vocabulary go, as the runner's Player lets them go (a pass that
    kept them gave the collector twice the objects to walk)."""
    import asyncio
    import gc
    import pickle
    import weakref

    from uncobench_z3.evaluation import PreparedGroup
    from uncobench_z3.settings import _vocabulary

    module = _eval_passes(monkeypatch)
    groups = module.pass_groups(1, None)
    jobs, _ = module.plan_jobs(groups, module.make_config("examples", groups, ["bench/replay"]))
    memo, _ = asyncio.run(module.record(jobs))
    memo_file = tmp_path / "memo.pickle"
    memo_file.write_bytes(pickle.dumps(memo))
    made: list[weakref.ref[PreparedGroup]] = []
    alive: list[int] = []  # prepared groups alive as each sample starts
    real_of, real_run_sample = PreparedGroup.of, module.run_sample

    def of(group: object, *args: object) -> PreparedGroup:
        prepared = real_of(group, *args)  # type: ignore[arg-type]
        made.append(weakref.ref(prepared))
        return prepared

    async def run_sample(*args: object) -> object:
        gc.collect()
        alive.append(sum(ref() is not None for ref in made))
        return await real_run_sample(*args)

    monkeypatch.setattr(PreparedGroup, "of", staticmethod(of))
    monkeypatch.setattr(module, "run_sample", run_sample)
    vocabularies_before = set(_vocabulary._RECENT)
    assert module._first_pass(1, str(memo_file)) > 0
    # (the minimum rounds' search prepares a group of its own for a moment)
    assert len(groups) > 1 and len(made) >= len(groups) and len(alive) == len(jobs)
    # every group alive at the start, one fewer after each group's last sample
    assert alive[0] == len(groups) and alive[-1] == 1
    assert alive == sorted(alive, reverse=True)
    assert set(_vocabulary._RECENT) <= vocabularies_before


def test_eval_overhead_replay_cursor_asks_the_memo_for_memo_keys_keys(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A sample's replay cursor keeps the replies seen so far instead of formatting every
    turn again, and asks the memo for exactly the key :func:`memo_key` gives at each call;
    one cursor handed another conversation reads it from its start."""
    import asyncio

    module = _eval_passes(monkeypatch)
    groups = module.pass_groups(1, None)
    jobs, _ = module.plan_jobs(groups, module.make_config("examples", groups, ["bench/replay"]))
    memo, rounds = asyncio.run(module.record(jobs))
    asked: list[object] = []

    class Asked(dict):  # type: ignore[type-arg]
        def __getitem__(self, key: object) -> object:
            asked.append(key)
            return super().__getitem__(key)

    replay = module.ReplayAgent(Asked(memo), 0.0)
    shared = replay.for_sample("bench/replay", 0)
    for cursors in ([replay.for_sample(job.agent, job.seed) for job in jobs], [shared] * len(jobs)):
        asked.clear()
        expected = []
        for job, cursor, recorded in zip(jobs, cursors, rounds, strict=True):
            env = module.Environment(job.group, job.setting, job.budget)
            while not env.finished:
                expected.append(module.memo_key(env.conversation))
                env.step(asyncio.run(cursor.act(env.conversation)))
            assert env.rounds == recorded
        assert asked == expected
    # a conversation of another sample as far on as the one followed: read from its start
    conversations = []
    for job in [job for job, recorded in zip(jobs, rounds, strict=True) if recorded > 1][:2]:
        env = module.Environment(job.group, job.setting, job.budget)
        seen = []
        while not env.finished:
            seen.append(env.conversation)
            env.step(memo[module.memo_key(env.conversation)])
        conversations.append(seen)
    (first, second), cursor = conversations, replay.for_sample("bench/replay", 0)
    for conversation in (first[0], first[1], second[1]):
        asyncio.run(cursor.act(conversation))
    assert asked[-1] == module.memo_key(second[1]) != module.memo_key(first[1])


def test_eval_overhead_agents_first_pass_lets_each_group_go_and_again_keeps_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The built-in agents' first pass lets each group go once, after its last sample, as a
    run does; their "again" pass plays groups kept (prepared afresh, played once first)."""
    module = _eval_passes(monkeypatch)
    let_go: list[str] = []
    real = module.let_group_go

    def counted(prepared: dict[int, object], group: Any, group_hash: str = "") -> None:
        assert id(group) in prepared
        let_go.append(group.id)
        real(prepared, group, group_hash)

    monkeypatch.setattr(module, "let_group_go", counted)
    first, again, rounds, samples = module._agent_passes(1, "builtin/naive")
    groups = module.example_groups(1)
    assert sorted(let_go) == sorted(group.id for group in groups)
    assert first > 0 and again > 0 and rounds >= samples > len(groups)


def _eval_passes(monkeypatch: pytest.MonkeyPatch) -> Any:
    """benchmarks/_eval_passes.py, eval_overhead.py's replayed passes, imported as that script
    imports it (its folder on the path; for this test only): the module whose names the passes
    look up, so the one to patch."""
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    return importlib.import_module("_eval_passes")


def test_cue_agents_score_only_by_luck_where_a_reply_is_defective(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # docs/build.md's figures for the defect-location cue: the agents that bet on it instead of
    # following a defective reply up are right often, but never with the evidence to be
    # (justified accuracy catches them), and where no reply is defective they are careful
    bench, out = tmp_path / "bench", tmp_path / "runs"
    assert run_cli(capsys, "build", "--groups", "4", "--seed", "7", "--out", str(bench),
                   "--workers", "1", "--no-progress").code == 0  # fmt: skip
    args = ["eval", str(bench), "--agent", "cue/bet", "--agent", "cue/flip", "--out", str(out)]
    assert "cue/flip" in _run("cue_shortcut.py", [*args, "--no-progress"], monkeypatch, capsys)
    samples = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    assert {s["agent"] for s in samples} == {"cue/bet", "cue/flip"}
    defective = [s for s in samples if s["setting"] in ("misaligned", "incomplete", "mixed")]
    assert any(s["correct"] for s in defective)
    assert all(s["justification"]["label"] != "justified" for s in defective if s["correct"])
    single = [s for s in defective if s["setting"] != "mixed"]  # (mixed has a silence, re-asked)
    assert all(s["behaviour"]["targeted_follow_ups"] == 0 for s in single)
    assert all(s["behaviour"]["generic_follow_ups"] == 0 for s in single)
    assert all(s["correct"] for s in samples if s["setting"] in ("reliable", "missed"))
