"""``uncobench demo``: the README's one command (build, verify, evaluate the built-in agents,
write a report) in one folder of its own."""

from __future__ import annotations

from pathlib import Path

import click
from rich.markup import escape

from .. import __version__
from .._outdir import check_output_folder, lock_output
from ..construct import build_benchmark, build_config, reusable_groups
from ..construct._pipeline import check_benchmark_folder
from ..errors import ConfigError, UncobenchError
from ..evaluation import EvalOptions, settings_stored_proofs
from ..solver import SolverBudget, Verdict
from ..spec import dump_json, write_text_atomic
from ._app import EXIT_OK, cli
from ._eval import EvalRequest, run_eval
from ._output import Output, progress_bar

DEMO_AGENTS = ("builtin/naive", "builtin/careful", "builtin/patient")
DEMO_SEED = 7
DEMO_MARKER = "demo.json"
"""written into the demo's folder before it builds: a benchmark there is the demo's own, so a
later demo may rebuild it without --force"""


def verify_demo_benchmark(bench: Path, progress: bool = True) -> int:
    """Re-prove every group of the demo benchmark; raises if one is not proved."""
    from ..construct import verify_benchmark

    with progress_bar("verifying", "groups", enabled=progress) as bar:
        reports = verify_benchmark(bench, SolverBudget(), progress=bar.update,
                                   minimum_rounds=settings_stored_proofs)  # fmt: skip
    for report in reports:
        if report.verdict != Verdict.PROVED:
            raise UncobenchError(
                f"demo benchmark {report.task_id} is {report.verdict.label}, not proved"
            )
    return sum(report.document != "manifest" for report in reports)


def prepare_demo_benchmark(out: Path, groups: int, force: bool, progress: bool) -> str:
    """Reuse a compatible benchmark in ``out/bench``, or build one; says which.

    Compatible: built by this version with the demo's configuration and at least ``groups``
    groups (its first ``groups`` are what a build of that size keeps). A benchmark the demo
    did not build (no marker) is replaced only with ``force``.
    """
    bench = out / "bench"
    wanted = build_config(groups, DEMO_SEED, minimum_rounds=True, decision_changes=True)
    held = None if force else reusable_groups(bench, wanted)
    if held is not None:
        used = f"; the demo uses the first {groups}" if held > groups else ""
        return f"[bold]1. reused[/] {escape(str(bench))} ({held} groups built earlier{used})"
    marker = out / DEMO_MARKER
    # every check before the marker: once written, it says bench/ is the demo's own
    check_benchmark_folder(bench)  # user files there are refused, even with --force
    if bench.is_dir() and any(bench.iterdir()) and not (force or marker.is_file()):
        raise ConfigError(
            f"{bench} holds a benchmark the demo did not build, with another configuration; "
            "use --force to replace it or choose another --out"
        )
    write_text_atomic(marker, dump_json({"kind": "uncobench-demo", "version": __version__}))
    with progress_bar("building", "groups kept", enabled=progress) as bar:

        def hook(candidates: int, retained: int, wanted: int) -> None:
            bar.update(retained, wanted, f"· {candidates} candidates")

        # force: whatever the folder holds is the demo's own (the marker says so) or the user
        # said --force; an interrupted build of the same configuration still resumes
        build_benchmark(bench, groups=groups, seed=DEMO_SEED, force=True, progress=hook,
                        minimum_rounds=settings_stored_proofs)  # fmt: skip
    return f"[bold]1. built[/] {escape(str(bench))} ({groups} group(s))"


@cli.command("demo")
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("demo"),
    show_default=True,
    help="Folder for the benchmark, the run and the report.",
)
@click.option("--groups", default=5, show_default=True, help="Task groups to evaluate.")
@click.option(
    "--force",
    is_flag=True,
    help="Rebuild the benchmark even if a compatible one exists, or one the demo did not build.",
)
@click.option("--no-progress", is_flag=True, help="No progress bar.")
def demo_command(out: Path, groups: int, force: bool, no_progress: bool) -> int:
    """Build a small benchmark, verify it, evaluate the built-in agents, write a report.

    A benchmark that an earlier demo built in OUT/bench is reused when it is compatible (same
    version and configuration, at least --groups groups) and rebuilt otherwise.
    """
    if groups < 1:
        raise ConfigError("--groups must be at least 1")
    # before any work: one demo at a time in OUT, which holds its bench/, run/ and report/
    # and nothing else (each is locked again by its own writer)
    with lock_output(out, "demo", check=lambda: _check_demo_folder(out)):
        return _demo(out, groups, force, no_progress)


def _check_demo_folder(out: Path) -> None:
    from ..evaluation._runner import check_run_folder
    from ..report._build import check_report_folder

    check_output_folder(out, (DEMO_MARKER,), "demo folder", allowed=("bench", "run", "report"))
    check_benchmark_folder(out / "bench")
    check_run_folder(out / "run")
    check_report_folder(out / "report")


def _demo(out: Path, groups: int, force: bool, no_progress: bool) -> int:
    output = Output()
    output.say(prepare_demo_benchmark(out, groups, force, not no_progress))
    bench = out / "bench"
    proved = verify_demo_benchmark(bench, not no_progress)
    output.say(f"[bold]2. verified[/] {proved} group(s): every check proved")
    output.say("[bold]3. evaluating[/] " + ", ".join(DEMO_AGENTS))
    # --force, not --restart: the log's samples that still apply are kept (a run again, after
    # Ctrl-C, or with fewer groups, whose configuration differs in its limit, plays none of
    # them again); a rebuilt benchmark's other groups' samples are set aside
    options = EvalOptions(force=True, progress=not no_progress)
    run_eval(EvalRequest(str(bench), DEMO_AGENTS, out / "run", limit=groups, options=options),
             output)  # fmt: skip
    from ..report import write_report

    files = write_report(out / "run", out / "report", title="uncobench demo report")
    output.say(f"[bold]4. report[/] {escape(str(files.html))}")
    return EXIT_OK
