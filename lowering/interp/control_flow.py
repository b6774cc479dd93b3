"""Control flow statements: a known predicate picks its branch, a known iterable unrolls;
a graph predicate is handed to `data_ifs` (an ONNX `If`), a graph trip count or condition
to `data_loops` (a `Loop`); the ternary likewise."""

from __future__ import annotations

from lowering.graph import Value
from lowering.interp.containers import _rows_of
from lowering.interp.guarded_items import guarded, run_for
from lowering.interp.values import MISSING, GraphRange


MAX_UNROLL = 10_000
_MAX_ATTEMPTS = 16  # a region is emitted again when a shape changes or a nonlocal name must be carried


def _is_python_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


class ControlFlow:
    def _stmt_If(self, s, frame):
        compared = len(self.key_comparisons)
        test = self.eval_test(s.test, frame)
        if isinstance(test, Value):
            self.emit_if(s, test, frame)
        elif self.truth(test):
            with self.cache_rebuild(s, self.key_comparisons[compared:]):
                self.exec_block(s.body, frame)
        else:
            self.exec_block(s.orelse, frame)

    def _stmt_Loop(self, s, frame):
        if s.kind == "for":
            iterable = self.eval(s.iter, frame)
            if isinstance(iterable, GraphRange):
                self.emit_loop(s, frame, trip=iterable)
                return
            if isinstance(iterable, Value) and iterable.rank and isinstance(self.g.size(iterable, 0), Value):
                # Rows of a dynamic first axis: a Loop that gathers row i.
                self.emit_loop(s, frame, trip=GraphRange(0, self.g.size(iterable, 0), 1), rows=iterable)
                return
            pieces = guarded(iterable)
            if pieces is not None:
                # `chunk`'s pieces along a dynamic axis: as many as the run-time size makes.
                run_for(self, s, frame, pieces)
                return
            rows = _rows_of(iterable, self)
            if rows is not None:
                # The items a graph loop appended (the rows of its scan output), or zip / enumerate of rows.
                self.emit_loop(s, frame, trip=GraphRange(0, self.row_count(rows), 1), rows=rows)
                return
            try:
                items = list(self.iterate(iterable))
            except TypeError:
                raise self.error(f"cannot iterate over {type(iterable).__name__}", construct="for",
                                 hint="iterate over a list, tuple, range, dict or the rows of a tensor") from None
            for item in items:
                self.assign(s.target, item, frame)
                self.exec_block(s.body, frame)
            self.exec_block(s.orelse, frame)
            return
        for _ in range(MAX_UNROLL):
            test = self.eval_test(s.test, frame)
            if isinstance(test, Value):
                self.emit_loop(s, frame, cond=test)
                return
            if not self.truth(test):
                self.exec_block(s.orelse, frame)
                return
            self.exec_block(s.body, frame)
        raise self.error(f"`while` loop ran {MAX_UNROLL} times at export time", construct="while",
                         hint="make the loop's condition depend on a tensor (it becomes an ONNX Loop), or bound it")

    def _ev_IfExp(self, e, frame):
        test = self.eval_test(e.test, frame)
        if isinstance(test, Value):
            # Lazy, like Python: each side is evaluated only in its own If branch.
            def side(expr):
                def run():
                    before = dict(frame.env)
                    value = self.eval(expr, frame)
                    if any(frame.env.get(k, MISSING) is not before.get(k, MISSING) for k in {*frame.env, *before}):
                        raise self.error("a name is assigned (`:=`) inside one side of a data-dependent ternary",
                                         "assign it before the ternary, or use an `if` statement", construct="ifexp")
                    return value
                return run

            return self.graph_choice(test, side(e.body), side(e.orelse), "ifexp", e.span.line)
        return self.eval(e.body, frame) if self.truth(test) else self.eval(e.orelse, frame)
