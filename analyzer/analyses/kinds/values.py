"""Abstract values of the value-kind analysis.

A `Value` says what sort of Python object a variable holds and what a Python decision
on it depends on:

- `type`: "tensor" | "python" | "none" | "container" | "module" | "modules" | "ext" |
  "class" | "function" | "method" | "unknown";
- `level` (`Level`): static < shape < data — for tensors always data (their values);
- `certain`: for tensors, whether it is known to be a tensor (a torch call's result)
  rather than assumed (an un-annotated `forward` parameter, which might be a flag);
- `shape_level`: for tensors, what the tensor's *shape* depends on (data for the result
  of `nonzero`, boolean-mask indexing, ...);
- `ctl`: the level of the branches under which the value was bound (a flag set only
  under a data-dependent `if` is data-dependent too; an `is None` test never is: the
  branch that bound the value is the finding);
- `ref`: what the value refers to: a qualified external name ("torch.nn.Linear"), a
  project class or function key, or for tensors "bool" when known to be boolean and
  `SHAPE_VALUED` when its values come from shapes and constants only;
- `elems` / `elem`: a container's items when known, else its common element;
- `origin`: "input" for forward parameters and their aliases;
- `bound`: for tensors, a static bound on an axis size or on index values
  (`index_bounds`);
- `nullable`: for tensors, None on some paths (`t = f(x) if m is not None else None`):
  `if t:` then is a None test, as it is written for;
- `interval`: the range of a number's or a tensor's values, when one is known
  (`value_ranges`);
- `rank`: for tensors, how many dimensions it has where the code fixes it (`ranks`);
  for a shape (`x.shape`, `x.size()`), the rank of its tensor.

Values are immutable and hashable so that function summaries can be memoised by the
abstract arguments they were called with.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from analyzer.analyses.kinds.foreign_runtimes import foreign_join, is_foreign
from analyzer.analyses.kinds.levels import Level
from analyzer.analyses.kinds.ranks import join_ranks
from analyzer.analyses.ranges.value_ranges import join_ranges

STATIC, SHAPE, DATA = Level.STATIC, Level.SHAPE, Level.DATA


@dataclass(frozen=True, slots=True)
class Value:
    type: str = "unknown"
    level: Level = STATIC
    certain: bool = True
    shape_level: Level = SHAPE
    ctl: Level = STATIC
    ref: object = None
    elems: tuple | None = None
    elem: "Value | None" = None
    origin: str | None = None
    nullable: bool = False
    bound: tuple | None = None
    interval: object = None
    rank: object = None

    # -------------------------------------------------------------- constructors

    @staticmethod
    def tensor(certain=True, shape_level=SHAPE, ref=None, origin=None) -> "Value":
        return Value("tensor", DATA, certain, shape_level, ref=ref, origin=origin)

    @staticmethod
    def python(level=STATIC) -> "Value":
        return Value("python", level)

    @staticmethod
    def container(elem: "Value | None" = None, elems: tuple | None = None, level=STATIC, ref=None) -> "Value":
        if elems is not None and elem is None:
            elem = join_all(elems)
        return Value("container", level, elem=elem, elems=elems, ref=ref)

    @staticmethod
    def ext(qualname: str) -> "Value":
        return Value("ext", ref=qualname)

    # -------------------------------------------------------------- queries

    @property
    def is_tensor(self) -> bool:
        return self.type == "tensor"

    @property
    def is_certain_tensor(self) -> bool:
        return self.type == "tensor" and self.certain

    def tainted(self, level: Level) -> "Value":
        """The value as bound under branches of `level`."""
        if level <= self.ctl and (self.type == "tensor" or level <= self.level):
            return self
        if self.type in ("tensor", "module", "modules", "ext", "class", "function", "method"):
            return replace(self, ctl=max(self.ctl, level))
        return replace(self, level=max(self.level, level), ctl=max(self.ctl, level))

    def truth_level(self) -> Level:
        """What `bool(value)` depends on, as far as we can tell (quiet when unsure)."""
        if self.type == "tensor":
            if self.nullable:
                return self.ctl  # `if mlm_targets:` on a tensor-or-None: whether it is None
            if self.ref in KNOWN_WHEN_TRACED:
                return max(known_level(self.ref), self.ctl)
            return DATA if self.certain else self.ctl
        if self.type in ("python", "container", "none"):
            return max(self.level, self.ctl)
        if self.type == "unknown":
            return max(unknown_level(self), self.ctl)
        return self.ctl

    def identity_level(self) -> Level:
        """What `value is other` depends on (`is None` is always static)."""
        if self.type in ("python", "none", "container"):
            return max(self.level, self.ctl)
        return self.ctl


def unknown_level(v: Value) -> Level:
    """What an `unknown` value is known to depend on: the shapes and Python values it was
    computed from (`H / self.patch_h` with the attribute unresolved is still a size), but
    not data: an unresolved call fed by tensors may return anything (a constant, a None,
    a module), so the rules stay quiet on it."""
    return v.level if v.level < DATA else STATIC


# `ref` of a tensor whose values were computed from shapes and constants only
# (`torch.tensor(h / w)`, `torch.ceil(n_frames)` of a size): they are known when the graph
# is traced, so a decision on them or an escape of them is a shape matter, not data.
SHAPE_VALUED = "shape-valued"

# `ref` of a tensor whose values are the module's own parameters and buffers, and what is
# computed from them and constants only (`self.scale.sum()`): fixed in the exported model,
# so a decision on them or an escape of them is static.
PARAM_VALUED = "param-valued"
KNOWN_WHEN_TRACED = frozenset({SHAPE_VALUED, PARAM_VALUED})


def known_level(ref) -> Level:
    """What a tensor known when traced (`KNOWN_WHEN_TRACED`) depends on."""
    return SHAPE if ref == SHAPE_VALUED else STATIC


def known_ref(refs, python_level: Level = STATIC) -> str:
    """The `ref` of a result computed from tensors known when traced (``refs``) and Python
    values of at most ``python_level``: shape-valued if anything is, else param-valued. A
    tensor built from static Python values alone (`torch.tensor([1.0, 0.5])`) is a
    constant of the graph, as a buffer is: param-valued, its values and size fixed."""
    return SHAPE_VALUED if python_level >= SHAPE or SHAPE_VALUED in refs else PARAM_VALUED


def known_python_level(v: Value) -> Level:
    """What a Python operand of a computation on tensors known when traced depends on: its
    level for a Python value (an unresolved one counts: quiet when unsure), the level of
    the object for an unresolved attribute of a Python object (`config.patch_size`), and
    data for anything else (an attribute of a value computed from tensors)."""
    if v.type in ("python", "none", "ext", "unknown"):
        return max(v.level, v.ctl)
    if is_setting(v):
        return max(v.elem.level, v.elem.ctl, v.ctl)
    return DATA


def is_setting(v: Value) -> bool:
    """An unresolved attribute of a Python object (`config.patch_size`): configuration."""
    return v.type == "method" and v.elem is not None and v.elem.type in ("python", "container")


def as_setting(v: Value) -> Value:
    """``v`` as the Python value it stands for when it is a setting (`is_setting`)."""
    return Value.python(known_python_level(v)) if is_setting(v) else v


# `ref` of a Python value that is a NumPy array of tensor values (`t.numpy()`): its values
# are data; `shape_level` says what its length depends on.
NDARRAY = "ndarray"

# `origin` of a tensor whose number of rows the model fixes (`torch.randperm(len(self.ops))`,
# `torch.arange(4)`): iterating it runs that many times for every input.
FIXED_ROWS = "fixed-rows"

# `origin` of a tensor that is a forward input, a view or a parameter on some paths only
# (`x if c else x.clone()`). A write into it is reported as a local one, as when the
# origin was dropped: the path is chosen by a Python flag, and the flags of the tree
# choose the copy by default (`Normalize(inplace=False)`). It is no tensor of the
# caller's own either (`caller_origins`): it may be the caller's caller's tensor.
MAYBE_SHARED = "maybe-shared"
SHARED_ORIGINS = frozenset({"input", "view", "parameter", MAYBE_SHARED})

# `origin` of a forward input every in-tree caller passes a tensor of its own for
# (`caller_origins`): a write into it is a local write.
PASSED_LOCAL = "passed-local"

# `ref` of a container of the rows of a tensor along one dimension (`x.unbind(1)`): as
# many as the example's size there, so iterating it unrolls over that size (UT105).
ROWS = "rows"

# `ref` of the pieces of a split (`x.split(1)`, `x.chunk(n)`): how many there are depends
# on the size split (a chunk of 4 of a size 3 is 3 pieces).
SPLIT_PIECES = "split-pieces"

# `ref` of the `(values, indices)` named tuple of `topk`, `sort`, `max(dim)`...: its
# `.values` and `.indices` are its pieces.
VALUES_INDICES = "values-indices"

# `ref` of a Python flag known to hold False / True: a parameter left at its constant
# default (`inplace_safe: bool = False` of a call that does not pass it).
FALSE_FLAG, TRUE_FLAG = "flag:False", "flag:True"


def default_value(default) -> "Value | None":
    """What a parameter left at ``default`` (its IR expression) holds: None for a None
    default, a known flag for True / False, a static Python value otherwise."""
    if getattr(default, "value", 0) is None:
        return NONE
    if type(getattr(default, "value", None)) is bool:
        return Value("python", STATIC, ref=TRUE_FLAG if default.value else FALSE_FLAG)
    return STATIC_PY


def flag_truth(v: "Value | None") -> bool | None:
    """The truth of a known flag (`default_value`), else None."""
    return {TRUE_FLAG: True, FALSE_FLAG: False}.get(v.ref) if v is not None and v.type == "python" else None


UNKNOWN = Value()
NONE = Value("none")
STATIC_PY = Value.python(STATIC)


def join(a: Value | None, b: Value | None) -> Value | None:
    if a is None or a is b:
        return b
    if b is None or a == b:
        return a
    level = max(a.level, b.level)
    ctl = max(a.ctl, b.ctl)
    types = {a.type, b.type}
    if types == {"ext"} and a.ref != b.ref and is_foreign(a.ref) and is_foreign(b.ref):
        return Value.ext(foreign_join(a.ref, b.ref))  # either runtime's object: no torch tensor
    if len(types) == 1 and a.ref != b.ref and a.type in ("ext", "class", "function", "method", "pymodule", "import", "super"):
        return Value("unknown", level, ctl=ctl)  # two different callables: nothing to resolve
    if len(types) == 1:
        elems = None
        if a.elems is not None and b.elems is not None and len(a.elems) == len(b.elems):
            elems = tuple(join(x, y) for x, y in zip(a.elems, b.elems))
        elem = join(a.elem, b.elem)
        if a.elems is not None and b.elems is not None and len(a.elems) != len(b.elems):
            # Containers of different lengths: the length is as dynamic as the branches.
            level = max(level, ctl)
        return Value(
            a.type, level, a.certain and b.certain, max(a.shape_level, b.shape_level), ctl,
            a.ref if a.ref == b.ref else _either_layer(a, b), elems, elem, _either_origin(a, b),
            a.nullable or b.nullable, a.bound if a.bound == b.bound else None,
            join_ranges(a.interval, b.interval) if a.interval is not None and b.interval is not None else None,
            join_ranks(a.rank, b.rank),
        )
    if "none" in types and len(types) == 2:
        other = a if b.type == "none" else b
        return replace(other, level=max(other.level, level) if other.type != "tensor" else other.level, ctl=ctl,
                       nullable=other.type == "tensor")
    if types == {"python", "container"}:
        return Value("unknown", level, ctl=ctl)
    if types == {"python", "unknown"}:
        number = a if a.type == "python" else b
        if number.level >= DATA:
            # A Python value escaped from data on one path (`bound = int(counts[i])` in a loop
            # whose bound started as an unresolved attribute): its level is known, not the
            # guess `unknown_level` makes of an unresolved call's, so it stays data.
            return replace(number, level=level, ctl=ctl, certain=False)
    return Value("unknown", level if "tensor" not in types else max(level, ctl), ctl=ctl)


def _either_origin(a: Value, b: Value) -> str | None:
    """The `origin` of a value bound to either of two (`x.mul_(g) if inplace else x * g`):
    `MAYBE_SHARED` when one of them may share its memory with a tensor outside the
    forward (an input, a view, a parameter). Either a forward input or another tensor is
    no forward input itself (a tuple when unpacked, `unpack`)."""
    if a.origin == b.origin:
        return a.origin
    return MAYBE_SHARED if {a.origin, b.origin} & SHARED_ORIGINS else None


def _either_layer(a: Value, b: Value):
    """The `ref` of either of two `nn` layers (`nn.ReLU() if i < n else nn.Identity()`):
    the set of their class names, so that what every one of them keeps is still known
    (`fixed_rows`); None for anything else."""
    if a.type != "module":
        return None
    names = [r if isinstance(r, frozenset) else frozenset({r}) for r in (a.ref, b.ref)]
    if all(all(isinstance(n, str) and n.startswith("torch.nn.") for n in ns) for ns in names):
        return names[0] | names[1]
    return None


def join_all(values) -> Value | None:
    out = None
    for v in values:
        out = join(out, v)
    return out


def type_tag(value: Value | None) -> str:
    """A short, stable description of what sort of object ``value`` is, for the fixes:
    ``tensor`` (``tensor/bool`` when boolean, ``+dynshape`` when its shape depends on
    data, ``+none`` when it may be None, ``tensor?`` when only assumed), ``ext:torch.nn.functional``, ``module``,
    ``python``, ``container``, ``none``, ``unknown``..."""
    if value is None:
        return "unknown"
    if value.type == "tensor":
        tag = "tensor" if value.certain else "tensor?"
        if value.ref == "bool":
            tag += "/bool"
        if value.shape_level >= DATA:
            tag += "+dynshape"
        if value.nullable:
            tag += "+none"  # a tensor on some paths, None on others
        return tag
    if value.type == "ext":
        return f"ext:{value.ref}"
    return value.type
