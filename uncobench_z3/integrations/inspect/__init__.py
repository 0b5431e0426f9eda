"""UNCOBENCH as an inspect_ai Task (the ``[inspect]`` extra).

``pip install "uncobench-z3[inspect]"`` registers the task through inspect's entry point
(group ``inspect_ai``), so ``inspect eval uncobench_z3/uncobench --model ...`` finds it.
The environment, the colleagues and the scoring are the project's own
(:mod:`uncobench_z3.evaluation`); this package only connects them to inspect's samples,
tools, solvers, scorer and logs. :func:`import_inspect_logs` turns ``.eval`` logs into the
project's run format for ``uncobench report`` and ``compare``.

Importing this package imports inspect_ai; nothing else in uncobench-z3 does.
"""

from ._bench import (
    DEFAULT_BUILD_SEED,
    DEFAULT_GROUPS,
    cache_root,
    default_benchmark,
    default_benchmark_dir,
    default_build_config,
)
from ._episode import (
    COLLEAGUE_ROLE,
    STORE_KEY,
    Episode,
    EpisodeConfig,
    EpisodeLog,
    InspectPhraser,
    InspectPolicyColleague,
    episode_agent,
    episode_setup,
)
from ._import import ImportedLog, import_inspect_logs, read_inspect_log, write_imported
from ._scorer import RECORD_KEY, episode_metrics, uncobench_scorer
from ._task import TASK_METADATA_KEY, uncobench

__all__ = [
    "COLLEAGUE_ROLE",
    "DEFAULT_BUILD_SEED",
    "DEFAULT_GROUPS",
    "RECORD_KEY",
    "STORE_KEY",
    "TASK_METADATA_KEY",
    "Episode",
    "EpisodeConfig",
    "EpisodeLog",
    "ImportedLog",
    "InspectPhraser",
    "InspectPolicyColleague",
    "cache_root",
    "default_benchmark",
    "default_benchmark_dir",
    "default_build_config",
    "episode_agent",
    "episode_metrics",
    "episode_setup",
    "import_inspect_logs",
    "read_inspect_log",
    "uncobench",
    "uncobench_scorer",
    "write_imported",
]
