"""The report's statistics tables: pass^k / pass@k, justified accuracy, paired comparisons."""

from __future__ import annotations

from ..evaluation import ALPHA, Comparison, SettingMetrics
from ..settings import SETTING_NAMES
from ..stats import decimal_text, p_value_text
from ._tables import SETTING_TITLES, Table, interval_text, percent, plain, row_label


def pass_k_table(metrics: list[SettingMetrics]) -> Table | None:
    """pass^k and pass@k per agent and setting, for k = 1 .. the fewest epochs (None when
    every cell has one epoch: both equal accuracy then)."""
    rows = [m for m in plain(metrics) if len(m.pass_hat_k) > 1]
    if not rows:
        return None
    most = max(len(m.pass_hat_k) for m in rows)
    body = [
        [
            row_label(m),
            SETTING_TITLES.get(m.setting, m.setting),
            str(m.epochs),
            *(percent(m.pass_hat_k.get(k)) for k in range(1, most + 1)),
            *(percent(m.pass_at_k.get(k)) for k in range(1, most + 1)),
        ]
        for m in rows
    ]
    headers = ["agent", "setting", "epochs"]
    headers += [f"pass^{k}" for k in range(1, most + 1)]
    headers += [f"pass@{k}" for k in range(1, most + 1)]
    return Table(
        headers,
        body,
        "pass^k: the chance that k epochs of a group are all correct; pass@k: that at least "
        "one is (tau-bench's unbiased estimators, mean over groups).",
    )


def justified_table(metrics: list[SettingMetrics]) -> Table:
    body = [
        [
            row_label(m),
            SETTING_TITLES.get(m.setting, m.setting),
            percent(m.accuracy),
            f"{percent(m.justified_accuracy)} {interval_text(m.justified_accuracy_ci)}",
            "–"
            if m.accuracy is None or m.justified_accuracy is None
            else decimal_text(100 * (m.accuracy - m.justified_accuracy), 1),
            str(m.justified),
            str(m.lucky),
            str(m.justification_unknown),
        ]
        for m in plain(metrics)
    ]
    return Table(
        ["agent", "setting", "accuracy", "justified accuracy", "luck (pp)", "justified",
         "lucky", "undecided"],
        body,
        "A correct answer is justified when the evidence the agent had received (replies at "
        "face value) determined it, by solver; otherwise lucky. Luck: accuracy minus "
        "justified accuracy.",
    )  # fmt: skip


def _agents(comparisons: list[Comparison]) -> list[str]:
    names: dict[str, None] = {}
    for c in comparisons:
        names.setdefault(c.a)
        names.setdefault(c.b)
    return list(names)


def comparison_tables(comparisons: list[Comparison]) -> list[Table]:
    """One matrix per setting (arm none): the row agent minus the column agent."""
    plain_pairs = [c for c in comparisons if c.arm == "none"]
    agents = _agents(plain_pairs)
    tables = []
    for setting in SETTING_NAMES:
        found = {(c.a, c.b): c for c in plain_pairs if c.setting == setting}
        if not found:
            continue
        rows = []
        for row in agents:
            cells = [row]
            for column in agents:
                c = found.get((row, column))
                sign = 1
                if c is None and (column, row) in found:
                    c, sign = found[(column, row)], -1
                if c is None or c.difference is None:
                    cells.append("–")
                    continue
                interval = c.difference_ci
                if interval is not None and sign < 0:
                    interval = (-interval[1], -interval[0])
                mark = " *" if c.significant else ""
                cells.append(
                    f"{decimal_text(100 * sign * c.difference, 1, sign=True)} "
                    f"{interval_text(interval, 1, points=True)} p={p_value_text(c.p_holm)}"
                    f"{mark}"
                )
            rows.append(cells)
        tables.append(
            Table(
                ["row minus column", *agents],
                rows,
                f"{SETTING_TITLES.get(setting, setting)}: accuracy difference in points with "
                "a paired 95% bootstrap interval over common groups; p: exact McNemar on "
                "group majority outcomes, Holm-adjusted over settings "
                f"(* below {decimal_text(ALPHA, 2)}).",
            )
        )
    return tables


def statistics_tables(metrics: list[SettingMetrics], comparisons: list[Comparison]) -> list[Table]:
    """Justified accuracy, pass^k / pass@k (with several epochs) and the paired comparisons."""
    tables = [justified_table(metrics)]
    passk = pass_k_table(metrics)
    if passk is not None:
        tables.append(passk)
    return tables + comparison_tables(comparisons)
