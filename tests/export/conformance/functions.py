"""Function definitions and calls in forward: nested def, closures, decorators,
recursion, defaults (Python reference, 8.7)."""

from tests.export.conformance import Entry

ENTRIES = [
    Entry("nested def", "def f(a):\n    return a * 2\nr = f(v)"),
    Entry("closure", "k = 3\ndef f(a):\n    return a * k\nr = f(v)"),
    Entry("closure over a tensor", "def f(a):\n    return a * v\nr = f(2)"),
    Entry("default argument", "def f(a, b=2):\n    return a * b\nr = f(v) + f(v, 3)"),
    Entry("decorated nested def", "@functools.lru_cache\ndef f(a):\n    return a * 2\nr = v + f(3)"),
    Entry("recursion", "def f(n):\n    return 1 if n <= 1 else n * f(n - 1)\nr = v * f(4)"),
    Entry("generator function", "def gen(n):\n    for i in range(n):\n        yield i\nr = v * sum(gen(3))",
          refused=r"generator|`yield`"),
    Entry("module-level generator on static values", "r = v * sum(pairs(3))",
          module="def pairs(n):\n    for i in range(n):\n        yield i * 2"),
    Entry("module-level helper", "r = scale(v, 2)", module="def scale(a, k):\n    return a * k"),
    Entry("lambda in a list", "fs = [lambda a: a + 1, lambda a: a * 2]\nr = fs[1](fs[0](v))"),
    Entry("function as a value", "def f(a):\n    return a + 1\ng = f\nr = g(v) + (g is f)"),
    Entry("instance with __call__", "r = Scale(3)(v) + Always(2)(v, k=1)",
          module="class Scale:\n    def __init__(self, k):\n        self.k = k\n    def __call__(self, a):\n"
                 "        return a * self.k\n\n\nclass Always:\n    def __init__(self, val):\n        self.val = val\n"
                 "    def __call__(self, *args, **kwargs):\n        return self.val"),
    Entry("module built in forward",
          "r = torch.nn.Sequential(torch.nn.Tanh(), Twice())(v) + torch.nn.ConstantPad1d((1, 0), 0.5)(v * torch.ones(2)).sum()",
          static=None, module="class Twice(torch.nn.Module):\n    def forward(self, a):\n        return a * 2"),
    Entry("module built in forward with random weights", "r = torch.nn.Linear(3, 3)(v)", static=None,
          refused=r"creating a module \(Linear\) inside forward that initialises `weight`, `bias` randomly"),
    Entry("class of torch's pure-Python library", "r = torch.distributions.Normal(v, 2.0).log_prob(v * 0.5)",
          static=None),
]
