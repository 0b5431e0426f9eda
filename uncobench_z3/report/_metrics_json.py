"""``metrics.json``: every figure of a report, exact, in a documented and versioned schema.

The document (:class:`MetricsDocument`, schema ``uncobench-metrics`` version 1) holds one
entry per agent x setting x intervention arm (:class:`~uncobench_z3.evaluation.SettingMetrics`)
and a paired comparison for every pair of agents in every setting and arm they share
(:class:`~uncobench_z3.evaluation.Comparison`). Every non-integer number is an exact fraction
written as a string, ``"p/q"`` or ``"p"`` (``fractions.Fraction(text)`` reads it back);
intervals are two such strings, ``[low, high]``. Keys of ``pass_hat_k`` / ``pass_at_k`` and
``rounds_distribution`` are integers written as strings (JSON object keys). A new field is
added without changing the version; a field that changes meaning or goes away changes it.

Besides ``results`` and ``comparisons``, the figures of the report's other sections:
``interventions`` (each arm on the groups common to every arm, :mod:`._interventions`),
``validity`` (colleague x main agent, :mod:`._validity`) and ``dataset`` (the benchmark,
:mod:`._dataset`). Every number a figure or table of the report shows is one of these.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .. import __version__
from ..evaluation import ALPHA, Comparison, SettingMetrics
from ..spec import write_text_atomic
from ..stats import BootstrapConfig
from ._dataset import DatasetSummary
from ._interventions import InterventionPanel
from ._load import ReportData
from ._validity import ValidityCell

METRICS_FILE = "metrics.json"
METRICS_SCHEMA: Literal["uncobench-metrics"] = "uncobench-metrics"
METRICS_SCHEMA_VERSION: Literal[1] = 1


class BootstrapInfo(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    samples: int
    seed: int
    level: Fraction
    method: str = "percentile interval; groups resampled with replacement, all their epochs"


class RunEntry(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str
    config_hash: str
    agents: list[str]
    seed: int | None
    epochs: int
    samples: int
    planned: int


class MetricsDocument(BaseModel):
    """The whole of ``metrics.json`` (module docstring)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_name: Literal["uncobench-metrics"] = Field(METRICS_SCHEMA, alias="schema")
    schema_version: Literal[1] = METRICS_SCHEMA_VERSION
    generator: str = f"uncobench-z3 {__version__}"
    bootstrap: BootstrapInfo
    alpha: Fraction = ALPHA
    """the level below which a Holm-adjusted p-value marks a comparison significant"""
    runs: list[RunEntry]
    unavailable: dict[str, list[str]]
    results: list[SettingMetrics]
    comparisons: list[Comparison]
    interventions: list[InterventionPanel] = Field(default_factory=list)
    validity: list[ValidityCell] = Field(default_factory=list)
    dataset: DatasetSummary | None = None


def metrics_document(
    data: ReportData,
    metrics: list[SettingMetrics],
    comparisons: list[Comparison],
    config: BootstrapConfig,
    interventions: list[InterventionPanel] | None = None,
    validity: list[ValidityCell] | None = None,
    dataset: DatasetSummary | None = None,
) -> MetricsDocument:
    runs = [
        RunEntry(
            path=str(run.path),
            config_hash=run.config_hash,
            agents=[str(a) for a in run.config.get("agents", [])],
            seed=run.config.get("seed"),
            epochs=int(run.config.get("epochs", 1)),
            samples=run.samples,
            planned=run.planned,
        )
        for run in data.runs
    ]
    return MetricsDocument.model_validate(
        {
            "schema": METRICS_SCHEMA,
            "bootstrap": BootstrapInfo(
                samples=config.samples, seed=config.seed, level=config.level
            ),
            "runs": runs,
            "unavailable": data.unavailable,
            "results": metrics,
            "comparisons": comparisons,
            "interventions": interventions or [],
            "validity": validity or [],
            "dataset": dataset,
        }
    )


def write_metrics(path: Path, document: MetricsDocument) -> None:
    write_text_atomic(path, document.model_dump_json(by_alias=True, indent=1) + "\n")


def read_metrics(path: str | Path) -> MetricsDocument:
    """A ``metrics.json`` read back (exact fractions restored)."""
    return MetricsDocument.model_validate_json(Path(path).read_text(encoding="utf-8"))
