"""Report generation at scale, and how fast the page opens in a browser.

    python benchmarks/report_scale.py [--groups 40] [--samples 5000 50000]
                                      [--shape epochs|groups] [--browser] [--bench DIR]

1. **A real run.** A benchmark of ``--groups`` groups is built offline (or ``--bench`` is
   reused) and the built-in agents (naive, careful, patient) are evaluated on every setting:
   real traces, solver notes, attributions and justifications.
2. **Synthetic runs of N samples.** That run's samples are replicated with fresh keys, as
   further epochs of the same groups (``--shape epochs``) or as further groups
   (``--shape groups``: more groups per cell, the bootstrap's heavier case).
3. ``write_report`` on each: CPU time (``time.process_time``) and wall time, per stage.
   Baseline, measured in the same run: reading the log line by line and parsing every line
   as JSON, the least any report of it must do; the table gives report CPU / baseline CPU.
4. ``--browser``: Debian's chromium (Playwright, system binary) opens ``report.html``: the
   time until the viewer is ready, and until a sample of the last chunk is shown.

Timing is never asserted in tests; this script reports figures (docs/report.md cites them).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import at_least, benchmark_folder

from uncobench_z3.construct import build_benchmark, load_groups
from uncobench_z3.evaluation import evaluate, make_config
from uncobench_z3.report import write_report

AGENTS = ("builtin/naive", "builtin/careful", "builtin/patient")
BROWSER_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync"]  # fmt: skip


def real_run(bench: Path, out: Path) -> Path:
    groups = load_groups(bench)
    started = time.perf_counter()
    evaluate(groups, make_config(str(bench), groups, list(AGENTS)), out)
    print(f"real run: {len(groups)} groups x {len(AGENTS)} agents, "
          f"{time.perf_counter() - started:.1f} s wall")  # fmt: skip
    return out


def synthesize(source: Path, samples: int, shape: str, out: Path) -> Path:
    """``samples`` records from ``source``'s, replicated as epochs or as groups."""
    lines = (source / "samples.jsonl").read_text().splitlines()
    out.mkdir(parents=True, exist_ok=True)
    copies = -(-samples // len(lines))
    with (out / "samples.jsonl").open("w") as handle:
        written = 0
        for copy in range(copies):
            for line in lines:
                if written == samples:
                    break
                record = json.loads(line)
                if shape == "epochs":
                    record["epoch"] = copy + 1
                else:
                    record["group_id"] = f"{record['group_id']}_copy{copy}"
                record["key"] = hashlib.sha256(f"{record['key']}:{copy}".encode()).hexdigest()
                handle.write(json.dumps(record, separators=(",", ":")) + "\n")
                written += 1
    meta = json.loads((source / "run.json").read_text())
    meta["samples"] = samples
    meta["config"]["epochs"] = copies if shape == "epochs" else 1
    (out / "run.json").write_text(json.dumps(meta))
    return out


def baseline(run: Path) -> tuple[float, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    with (run / "samples.jsonl").open("rb") as handle:
        for line in handle:
            json.loads(line)
    return time.process_time() - cpu, time.perf_counter() - wall


def open_in_browser(html: Path) -> tuple[float, float]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=shutil.which("chromium")
                                             or "/usr/bin/chromium", args=BROWSER_ARGS)  # fmt: skip
        page = browser.new_page()
        started = time.perf_counter()
        page.goto(html.resolve().as_uri(), timeout=120_000)
        page.wait_for_selector("#viewer[data-ready=true]", timeout=120_000)
        ready = time.perf_counter() - started
        total = int(page.inner_text("#viewer-page").split()[0])
        started = time.perf_counter()
        page.goto(f"{html.resolve().as_uri()}#trace-{total - 1}")
        page.reload()
        page.wait_for_selector("#viewer-detail .round", timeout=120_000)
        shown = time.perf_counter() - started
        browser.close()
    return ready, shown


def main() -> None:
    parser = argparse.ArgumentParser(description="report generation at scale")
    parser.add_argument("--groups", type=at_least(1), default=40)
    parser.add_argument("--samples", type=at_least(1), nargs="+", default=[5000, 50000])
    parser.add_argument("--shape", choices=("epochs", "groups"), default="epochs")
    parser.add_argument(
        "--bench", type=benchmark_folder, default=None, help="reuse a built benchmark"
    )
    parser.add_argument("--browser", action="store_true", help="also open each report")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        bench = options.bench
        if bench is None:
            bench = root / "bench"
            build_benchmark(bench, groups=options.groups, seed=7, workers=1)
        source = real_run(bench, root / "runs" / "real")
        print(f"{'samples':>8} {'shape':>7} {'report CPU s':>13} {'wall s':>7} "
              f"{'baseline CPU s':>15} {'ratio':>6} {'HTML MB':>8}  stages (CPU s)")  # fmt: skip
        for count in options.samples:
            run = synthesize(source, count, options.shape, root / "runs" / f"n{count}")
            base_cpu, _ = baseline(run)
            cpu, wall = time.process_time(), time.perf_counter()
            files = write_report(run, root / f"report{count}")
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            stages = ", ".join(f"{k} {v:.2f}" for k, v in files.timings.items())
            size = files.html.stat().st_size / 1e6
            print(f"{count:>8} {options.shape:>7} {cpu:>13.2f} {wall:>7.2f} {base_cpu:>15.2f} "
                  f"{cpu / base_cpu:>6.1f} {size:>8.1f}  {stages}")  # fmt: skip
            if options.browser:
                ready, shown = open_in_browser(files.html)
                print(f"{'':>8} browser: viewer ready {ready:.2f} s, a sample of the last "
                      f"chunk shown {shown:.2f} s (wall)")  # fmt: skip
            shutil.rmtree(run)


if __name__ == "__main__":
    main()
