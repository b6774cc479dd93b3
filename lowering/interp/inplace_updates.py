"""In-place updates: every name bound to the updated tensor gets the new value, views
are written back into their base, and values sharing memory with an updated one are
stale from there on (`lowering.aliasing`); values handed out again get an Identity."""

from __future__ import annotations

from lowering.aliasing import SELF_ALIAS_OPS, VIEW_OPS, ChosenIndex, is_basic_index, is_in_place
from lowering.errors import LoweringError
from lowering.graph import GraphBuilder, Value
from lowering.interp.torch_calls import _inplace_flag
from lowering.interp.values import _graph_leaves


class InPlaceUpdates:
    def update_aliases(self, old: Value, new: Value, updated: str | None = None) -> None:
        """An in-place update: every variable bound to the same tensor now holds `new`;
        every other value sharing its memory (views, its base) is stale from here on
        (`lowering.aliasing`)."""
        if new is old or not isinstance(new, Value):
            return
        updated = updated or self._name_of(old)
        if self.conditional_element is not None:
            raise self.error(f"in-place update of `{updated}` in a comprehension filtered on tensor values (line "
                             f"{self.conditional_element}): the graph computes every item, eager only the kept ones",
                             "update out of place (`t + 1`, not `t.add_(1)`) in the comprehension", construct="inplace")
        if any(storage in self._state_values for storage in self.aliases.storages(old)):
            raise self.error(f"in-place update of `{updated}`, a parameter or buffer (or a view of one), changes the "
                             "module's state: the next call would see it", "update a copy (`.clone()`) or out of "
                             "place", construct="inplace")
        self.update_assigned_attributes(old, new)
        self.check_memo_update(old)
        source = self.aliases.written_back(old, self.g)
        if source is not None:
            self._write_back(old, new, *source)
            return
        self._rebind(old, new)
        read_before = self.aliases.mark_updated(old, new, updated, self.location[1], self.g)
        if read_before:
            name = self._name_of(read_before[0])
            raise self.error(
                f"in-place update of `{updated}` inside a graph loop, after `{name}`, which shares its memory, was "
                "read earlier in the loop body: from the second iteration on eager PyTorch reads the updated "
                "values there, which untrace does not track",
                f"take a copy before the loop (`{name} = {name}.clone()`), or update out of place "
                f"(`{updated} = {updated} + ...`)", construct="inplace")

    def _rebind(self, old: Value, new: Value) -> None:
        for frame in self.frames:
            if frame.graph != id(self.g):
                continue  # a frame outside this If branch / Loop body keeps its value
            for name, bound in frame.env.items():
                if bound is old:
                    frame.env[name] = new

    def _write_back(self, view: Value, new_view: Value, base: Value, index) -> None:
        """An in-place update of `view = base[index]` is `base[index] = new_view` too: the
        base is updated in its turn (written back into its own base when it is an indexed
        view as well), and `new_view` is the matching view of the updated base."""
        if any(bound is base for frame in self.frames if frame.graph != id(self.g) for bound in frame.env.values()):
            base_name, view_name = self._name_of(base), self._name_of(view)
            raise self.error(
                f"in-place update through `{view_name}`, a view of `{base_name}`, inside a data-dependent branch or "
                f"loop: `{base_name}` was made outside it, and the update of it would not leave the branch or loop",
                f"assign into `{base_name}` itself there (`{base_name}[...] = ...`), or update out of place",
                construct="inplace")
        new_base = self._assign_into(base, index, new_view)
        self._rebind(view, new_view)
        self.update_aliases(base, new_base)
        self.aliases.add_indexed_view(new_view, new_base, index, self.location[1])
        self.aliases.stale.pop(new_view, None)
        if view in self.aliases.chosen:
            self.aliases.chosen[new_view] = self.aliases.chosen[view]

    def _assign_into(self, base: Value, index, value: Value) -> Value:
        """`base[index] = value`, out of place; a ChosenIndex is an If assigning into the
        region each side chose."""
        if not isinstance(index, ChosenIndex):
            return self.call_op("operator.setitem", [base, index, value], {})
        return self.graph_choice(index.cond, lambda: self._assign_into(base, index.then, value),
                                 lambda: self._assign_into(base, index.orelse, value), "if", self.location[1])

    def merge_aliases(self, out: Value, sides, region: str, cond: Value | None = None) -> None:
        """`out` merges `sides` (an If's two, or a loop's value before it and after an
        iteration): it may share memory with any of them (`Aliases.merge`). When every side
        of an If (`cond`) is a view of one base by basic indexing, `out` is an indexed view
        of that base too, so an update of it can be written back."""
        sides = [v for v in sides if isinstance(v, Value) and v not in self.python_numbers]
        if not isinstance(out, Value) or not sides or out in self.python_numbers:
            return
        sources = [self.aliases.indexed_source(v) for v in sides]
        if cond is not None and len(sides) == 2 and None not in sources and sources[0][0] is sources[1][0]:
            base = sources[0][0]
            index = ChosenIndex(cond, sources[0][1], sources[1][1])
            if all(self.g.sees(v) for v in (base, *index.values())):
                self.aliases.add_indexed_view(out, base, index, self.location[1])
                self.aliases.chosen[out] = region
                return
        self.aliases.merge(out, sides, region)

    def track_results(self, name: str, args, kwargs, result, in_place: bool = False):
        """Record views; give a value the lowering handed out before a fresh Identity, unless
        eager PyTorch too returns the same tensor (`lowering.aliasing`)."""
        inputs = {id(v) for v in _graph_leaves((args, kwargs))}
        base = args[0] if args and isinstance(args[0], Value) else None
        view = base is not None and name in VIEW_OPS and (name != "operator.getitem" or is_basic_index(args[1]))
        keeps_self = in_place or name in SELF_ALIAS_OPS or is_in_place(name) or _inplace_flag(None, args, kwargs)

        def fresh(v):
            if not isinstance(v, Value):
                return v
            if id(v) in inputs and keeps_self and not view:
                return v
            if id(v) in inputs or v in self.aliases.handed_out:
                v = self.g.op("Identity", v)
            self.aliases.made(v, self.g)
            if view and name == "operator.getitem" and isinstance(result, Value):
                self.aliases.add_indexed_view(v, base, args[1], self.location[1])
            elif view:
                self.aliases.add_view(v, base, self.location[1])
            return v

        if isinstance(result, Value):
            return fresh(result)
        if isinstance(result, (tuple, list)) and any(isinstance(v, Value) for v in result):
            items = [fresh(v) for v in result]
            if hasattr(result, "_fields"):
                return type(result)(*items)
            rebuilt = type(result)(items)
            if type(result) not in (tuple, list):
                rebuilt.__dict__.update(vars(result))  # what a tuple subclass carries (`DynamicChunks.rows`)
            return rebuilt
        return result

    def check_read(self, name: str, value) -> None:
        """Refuse to read a value that an in-place update left stale; note reads inside
        graph loops (see `Aliases.note_read`)."""
        for leaf in _graph_leaves(value):
            mark = self.aliases.staleness(leaf, self.g)
            if mark is not None:
                raise self._stale_error(name, leaf, mark, leaf is value)
            self.aliases.note_read(leaf, self.g)

    def _stale_error(self, name: str, leaf: Value, mark, direct: bool) -> LoweringError:
        made = self.aliases.view_line.get(leaf)
        chosen = self.aliases.chosen_by(leaf)
        if mark.chosen is not None:
            # Eager updated `name` in the region one side chose; untrace keeps no such update.
            if not direct:
                relation = f"`{name}` holds a tensor that `{mark.updated}`, chosen by {mark.chosen}, may share memory with"
            elif mark.through_view:
                relation = f"`{mark.updated}` may be a view of `{name}` chosen by {mark.chosen}"
            else:
                relation = f"`{mark.updated}`, chosen by {mark.chosen}, may share memory with `{name}`"
            return self.error(
                f"in-place update of `{mark.updated}` at line {mark.line} while `{name}` is live ({relation}): eager "
                f"PyTorch updates `{name}` only where the data chose that view, which untrace does not lower",
                f"index the base itself by the choice (`idx = torch.where(cond, i, j); base[idx] += ...`), or "
                f"update out of place (`{mark.updated} = {mark.updated} + ...`, torch.where)", construct="inplace")
        if not direct:
            relation = f"`{name}` holds a tensor that shares its memory"
        elif mark.through_view:
            relation = f"the update went through a view of `{name}`"
        elif chosen is not None:
            relation = f"`{name}` may be a view of it, chosen by {chosen}"
        elif made is not None:
            relation = f"`{name}` is a view of it made at line {made}"
        else:
            relation = f"`{name}` shares its memory"
        return self.error(
            f"in-place update of `{mark.updated}` at line {mark.line} while `{name}` is live ({relation}): eager "
            f"PyTorch shows the update through `{name}`, which untrace does not track",
            f"take a copy before the update (`{name} = ....clone()`), or update out of place "
            f"(`{mark.updated} = {mark.updated} + ...` instead of `+=`, `.add_`, index assignment)",
            construct="inplace")

    def check_region_result(self, name: str, value, builder: GraphBuilder) -> None:
        """A value leaving an If branch or a Loop body must not be stale there."""
        for leaf in _graph_leaves(value):
            mark = self.aliases.staleness(leaf, builder)
            if mark is not None:
                raise self._stale_error(name, leaf, mark, False)

    def fresh_copy(self, v: Value) -> Value:
        """A copy of `v`: a value of its own, so that in-place updates do not alias it."""
        return self.track_results("copy", [v], {}, v)

    def _name_of(self, v: Value) -> str:
        for frame in reversed(self.frames):
            for name, bound in frame.env.items():
                if bound is v and not name.startswith("$"):
                    return name
        return "a tensor"

