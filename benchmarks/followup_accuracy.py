"""Precision and recall of the follow-up interpreter on the labelled corpus.

    python benchmarks/followup_accuracy.py                 # the held-out split
    python benchmarks/followup_accuracy.py --split dev     # the split the rules were tuned on
    python benchmarks/followup_accuracy.py --split all --json

Every line of ``tests/data/followups/<split>*.jsonl`` is a follow-up to a group of
``tests/data/followups/groups.jsonl`` in one setting, addressed to a role, with the label
``targeted``. The interpreter reads it exactly as a scripted colleague would (the designated
colleague has sent its first reply; the message is the next request), and the script prints
precision and recall of ``targeted``, per setting and style, and lists every false positive
and false negative. Exit code 1 when precision or recall is below ``--floor`` (0.97).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import share  # noqa: E402

from uncobench_z3.settings import TaskGroup, Vocabulary, decide, read_request  # noqa: E402
from uncobench_z3.spec import TypedTask, check_structure  # noqa: E402

CORPUS = ROOT / "tests" / "data" / "followups"
SPLITS = ("dev", "heldout")


@dataclass(frozen=True)
class Outcome:
    line: dict[str, object]
    predicted: bool
    why: str

    @property
    def expected(self) -> bool:
        return bool(self.line["targeted"])


def load_groups(path: Path = CORPUS / "groups.jsonl") -> dict[str, tuple[TaskGroup, TypedTask]]:
    groups = {}
    for text in path.read_text(encoding="utf-8").splitlines():
        group = TaskGroup.model_validate_json(text)
        task = check_structure(group.spec).task
        assert task is not None, group.id
        groups[group.id] = (group, task)
    return groups


def load_split(name: str) -> list[dict[str, object]]:
    names = SPLITS if name == "all" else (name,)
    return [
        json.loads(line)
        for split in names
        for path in sorted(CORPUS.glob(f"{split}*.jsonl"))
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]


def classify(
    lines: list[dict[str, object]], groups: dict[str, tuple[TaskGroup, TypedTask]]
) -> list[Outcome]:
    """Read every line as the designated colleague would, and decide."""
    out = []
    for line in lines:
        group, task = groups[str(line["group"])]
        setting = group.setting(line["setting"])  # type: ignore[arg-type]
        role = str(line["role"])
        focus = line.get("focus")
        if isinstance(focus, str):
            focus = next((c for c in task.candidates if task.candidate_name(c) == focus), focus)
        request = read_request(
            Vocabulary.of(task), str(line["message"]), role, focus if focus else None
        )
        defect = next((d for d in setting.defects if d.role == role), None)
        if defect is None:
            out.append(Outcome(line, False, "no defect on this role"))
            continue
        decision = decide(task, defect, request)
        out.append(Outcome(line, decision.targeted, decision.why()))
    return out


def scores(outcomes: list[Outcome]) -> dict[str, float | int]:
    tp = sum(o.predicted and o.expected for o in outcomes)
    fp = sum(o.predicted and not o.expected for o in outcomes)
    fn = sum(not o.predicted and o.expected for o in outcomes)
    tn = len(outcomes) - tp - fp - fn
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    return {"n": len(outcomes), "tp": tp, "fp": fp, "fn": fn, "tn": tn,
            "precision": precision, "recall": recall}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=[*SPLITS, "all"], default="heldout")
    parser.add_argument("--floor", type=share, default=0.97)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    groups = load_groups()
    lines = load_split(args.split)
    started, cpu = time.perf_counter(), time.process_time()
    outcomes = classify(lines, groups)
    elapsed, cpu_used = time.perf_counter() - started, time.process_time() - cpu
    total = scores(outcomes)
    by_setting = {
        s: scores([o for o in outcomes if o.line["setting"] == s])
        for s in sorted({str(o.line["setting"]) for o in outcomes})
    }
    styles = Counter(s for o in outcomes for s in o.line.get("styles", []))  # type: ignore[union-attr]
    by_style = {
        s: scores([o for o in outcomes if s in o.line.get("styles", [])])  # type: ignore[operator]
        for s in sorted(styles)
    }
    wrong = [o for o in outcomes if o.predicted != o.expected]
    if args.json:
        print(json.dumps({
            "split": args.split, **total, "by_setting": by_setting, "by_style": by_style,
            "groups": len({o.line["group"] for o in outcomes}),
            "cpu_seconds": round(cpu_used, 3),
            "errors": [{"kind": "false positive" if o.predicted else "false negative",
                        **o.line, "why": o.why} for o in wrong],
        }, ensure_ascii=False))  # fmt: skip
    else:
        print(
            f"{args.split}: {total['n']} follow-ups over "
            f"{len({o.line['group'] for o in outcomes})} groups, "
            f"{total['tp'] + total['fn']} targeted; precision {total['precision']:.4f}, "
            f"recall {total['recall']:.4f} (tp {total['tp']}, fp {total['fp']}, "
            f"fn {total['fn']}, tn {total['tn']}); "
            f"{1000 * cpu_used / max(1, len(outcomes)):.2f} ms CPU per message "
            f"({elapsed:.2f} s wall)"
        )
        for name, s in by_setting.items():
            print(f"  {name:<11} n={s['n']:<4} precision {s['precision']:.4f} "
                  f"recall {s['recall']:.4f}")  # fmt: skip
        for kind in ("false positive", "false negative"):
            chosen = [o for o in wrong if o.predicted == (kind == "false positive")]
            print(f"{kind}s: {len(chosen)}")
            for o in chosen:
                print(f"  [{o.line['group']} {o.line['setting']} -> {o.line['role']}] "
                      f"{o.line['message']!r}\n      {o.why}")  # fmt: skip
    low = min(total["precision"], total["recall"])
    return 0 if low >= args.floor else 1


if __name__ == "__main__":
    sys.exit(main())
