"""Static Python runs as Python: a call whose arguments are all static and whose result
carries no tensor is evaluated at export time, whoever wrote the callee."""

from tests.export.conformance import Entry

_HELPERS = """
import collections.abc
import itertools


def to_2tuple(a):
    if isinstance(a, collections.abc.Iterable):
        return tuple(a)
    return tuple(itertools.repeat(a, 2))


def pairs(n):
    for i in range(n):
        yield i, i * 2


@dataclasses.dataclass(frozen=True)
class Config:
    hidden: int = 4
    heads: int = 2

    @property
    def head_dim(self):
        return self.hidden // self.heads


def head_dims(config):
    match config.heads:
        case 1:
            return config.hidden
        case n:
            return config.hidden // n


def make_table(n):
    class Row:
        def __init__(self, i):
            self.i = i
    return [Row(i).i for i in range(n)]
"""

ENTRIES = [
    Entry("functools.partial", "f = functools.partial(max, 2)\nr = v * f(3)", tensor=None, module=_HELPERS),
    Entry("functools.partial of a tensor op", "f = functools.partial(torch.mul, other=2)\nr = f(v)", static="torch.ones(1)",
          module=_HELPERS),
    Entry("to_2tuple helper", "a, b = to_2tuple(3)\nr = v * (a + b) + to_2tuple([1, 2])[1]", module=_HELPERS),
    Entry("generator helper on static ints", "r = v * sum(a + b for a, b in pairs(3))", module=_HELPERS),
    Entry("dataclasses.replace", "c = dataclasses.replace(Config(), heads=4)\nr = v * c.head_dim", module=_HELPERS),
    Entry("config property", "r = v * Config(hidden=6).head_dim", module=_HELPERS),
    Entry("match in a helper on static values", "r = v * head_dims(Config(8, 4))", module=_HELPERS),
    Entry("class statement in a helper", "r = v * sum(make_table(3))", module=_HELPERS),
    Entry("math of a static shape", "r = v * math.prod([2, 3]) + math.isqrt(17)", module=_HELPERS),
    Entry("itertools on static values", "import itertools\nr = v * len(list(itertools.product(range(2), 'ab')))",
          module=_HELPERS),
    Entry("a user helper on a tensor", "r = to_2tuple(v)[0]", static=None, tensor="x", module=_HELPERS),
]
