"""Task construction: scenario library, spec generation, solver-guided instantiation,
rendering, full-information validation and the build pipeline."""

from ._benchfile import GROUPS_FILE, MANIFEST_FILE, load_groups, rendered_of, verify_benchmark
from ._candidate import CandidateOutcome, process_candidate
from ._generate import Draft, DraftError, FactHint, SpecGenerator
from ._instantiate import InstantiationError, Instantiator, Plan, instantiate, make_plan
from ._library import (
    DomainFile,
    LibraryProblem,
    ScenarioLibrary,
    ScenarioTemplate,
    check_library,
    load_library,
)
from ._llm_stages import (
    ANSWER_TOOL,
    LLMStages,
    ModelRef,
    SpecRejected,
    answer_matches,
    generate_spec,
    render_with_llm,
    surviving_problems,
    validate_with_llm,
)
from ._pipeline import BuildConfig, BuildResult, build_benchmark, library_digest
from ._reader import (
    Catalog,
    KeyEntry,
    ReadError,
    ReadTask,
    Statement,
    parse_catalog,
    parse_statement,
    parse_task_text,
    read_full_information,
    validate_rendering,
)
from ._render import RenderedTask, RoleCard, render_task, statement_text
from ._text import Style

__all__ = [
    "ANSWER_TOOL",
    "GROUPS_FILE",
    "MANIFEST_FILE",
    "BuildConfig",
    "BuildResult",
    "CandidateOutcome",
    "Catalog",
    "DomainFile",
    "Draft",
    "DraftError",
    "FactHint",
    "InstantiationError",
    "Instantiator",
    "KeyEntry",
    "LLMStages",
    "LibraryProblem",
    "ModelRef",
    "Plan",
    "ReadError",
    "ReadTask",
    "RenderedTask",
    "RoleCard",
    "ScenarioLibrary",
    "ScenarioTemplate",
    "SpecGenerator",
    "SpecRejected",
    "Statement",
    "Style",
    "answer_matches",
    "build_benchmark",
    "check_library",
    "generate_spec",
    "instantiate",
    "library_digest",
    "load_groups",
    "load_library",
    "make_plan",
    "parse_catalog",
    "parse_statement",
    "parse_task_text",
    "process_candidate",
    "read_full_information",
    "render_task",
    "render_with_llm",
    "rendered_of",
    "statement_text",
    "surviving_problems",
    "validate_rendering",
    "validate_with_llm",
    "verify_benchmark",
]
