"""The Z3 verification engine: encoding, incremental queries, three-valued proofs."""

from ._bruteforce import BruteForceResult, brute_force_differs
from ._checks import Checker, Evidence
from ._encoding import GOAL_DIFFERS, GOAL_TWO_ELIGIBLE, TaskEncoding, pin_literal, slot_var
from ._engine import QueryResult, TaskSolver
from ._factory import (
    DEFAULT_BUDGET,
    SolverBudget,
    SolverContext,
    check_assumptions,
    make_solver,
    shared_context,
)
from ._model_reader import ModelReader
from ._status import CheckKind, CheckResult, Verdict, combine
from ._verify import TaskProof, VerificationReport, prove_task, verify_spec

__all__ = [
    "DEFAULT_BUDGET",
    "GOAL_DIFFERS",
    "GOAL_TWO_ELIGIBLE",
    "BruteForceResult",
    "CheckKind",
    "CheckResult",
    "Checker",
    "Evidence",
    "ModelReader",
    "QueryResult",
    "SolverBudget",
    "SolverContext",
    "TaskEncoding",
    "TaskProof",
    "TaskSolver",
    "Verdict",
    "VerificationReport",
    "brute_force_differs",
    "check_assumptions",
    "combine",
    "make_solver",
    "pin_literal",
    "prove_task",
    "shared_context",
    "slot_var",
    "verify_spec",
]
