"""Reading values out of a solver's model through Z3's C API.

z3py's ``ModelRef.eval`` wraps every term it touches in Python objects and was the slow part
of a satisfiable query; here each wanted constant costs two C calls, and only the constants
a caller names are read.
"""

from __future__ import annotations

from collections.abc import Sequence

import z3

from ..errors import ConsistencyError


class ModelReader:
    """Values of named constants (``Int`` or ``Bool``) in the current model of ``solver``."""

    def __init__(self, solver: z3.Solver) -> None:
        self.solver = solver
        self._ctx = solver.ctx.ref()
        self._sorts = {True: z3.BoolSort(solver.ctx), False: z3.IntSort(solver.ctx)}
        self._terms: dict[tuple[str, bool], z3.ExprRef] = {}  # keep each declaration alive
        self._decls: dict[tuple[str, bool], z3.FuncDecl] = {}

    def _decl(self, name: str, is_bool: bool) -> z3.FuncDecl:
        key = (name, is_bool)
        decl = self._decls.get(key)
        if decl is None:
            symbol = z3.Z3_mk_string_symbol(self._ctx, name)
            term = z3.Z3_mk_const(self._ctx, symbol, self._sorts[is_bool].ast)
            self._terms[key] = z3.ExprRef(term, self.solver.ctx)
            decl = self._decls[key] = z3.Z3_get_app_decl(self._ctx, term)
        return decl

    def read(self, names: Sequence[tuple[str, bool]]) -> list[int | bool]:
        """The values of ``(name, is_bool)`` constants after a satisfiable check.

        A constant the model leaves free gets the value model completion would give it
        (false, 0).
        """
        ctx = self._ctx
        model = z3.Z3_solver_get_model(ctx, self.solver.solver)
        z3.Z3_model_inc_ref(ctx, model)
        try:
            return [self._value(model, name, is_bool) for name, is_bool in names]
        finally:
            z3.Z3_model_dec_ref(ctx, model)

    def _value(self, model: z3.Model, name: str, is_bool: bool) -> int | bool:
        ctx = self._ctx
        ast = z3.Z3_model_get_const_interp(ctx, model, self._decl(name, is_bool))
        if not ast:  # a null pointer: the model leaves the constant free
            return False if is_bool else 0
        if is_bool:
            value = z3.Z3_get_bool_value(ctx, ast)
            if value != z3.Z3_L_UNDEF:
                return bool(value == z3.Z3_L_TRUE)
        elif z3.Z3_get_ast_kind(ctx, ast) == z3.Z3_NUMERAL_AST:
            return int(z3.Z3_get_numeral_string(ctx, ast))
        raise ConsistencyError(f"the solver's model gives {name} no value")
