"""Builtin functions on numbers (Python library reference, "Built-in Functions")."""

from tests.export.conformance import Entry

ENTRIES = [
    Entry("abs", "r = abs(v - 2)"),
    Entry("bool", "r = int(bool(v))"),
    Entry("divmod", "q, m = divmod(v + 5, 3)\nr = q * 10 + m", tensor="int(x[0] * 4)"),
    Entry("divmod of a tensor", "q, m = divmod(v, 3)\nr = q", static=None, refused=r"divmod\(\) of a tensor",
          eager_runs=False),
    Entry("float", "r = float(v) * 2"),
    Entry("int", "r = int(v * 2)"),
    Entry("max", "r = max(v, 1) + max([v, 2, 0])",
          refused_in=dict.fromkeys(("tensor", "if", "loop"), r"max\(\) of a torch.float32 tensor and a Python number")),
    Entry("max of tensors", "r = max(v, v * 2) + max([v - 1, v + 1])"),
    Entry("min", "r = min(v, 1) + min(v, 2, 0.5)",
          refused_in=dict.fromkeys(("tensor", "if", "loop"), r"min\(\) of a torch.float32 tensor and a Python number")),
    Entry("min of Python numbers from tensors", "r = min(float(v), 1.0) + min(int(v * 3), 2)"),
    Entry("pow", "r = pow(v, 2) + pow(2, 3)"),
    Entry("pow with a modulus", "r = v * pow(3, 4, 5)", tensor=None),
    Entry("round", "r = round(v * 1.5)", tensor="float(x[0])"),
    Entry("round with ndigits", "r = round(v * 1.2345, 2)", tensor=None),
    Entry("sum", "r = sum([v, 1, 2]) + sum((v, v), 10)"),
    Entry("complex", "r = v * abs(complex(3, 4))"),
    Entry("bin / hex / oct", "r = v * len(bin(5) + hex(255) + oct(8))"),
    Entry("ord / chr", "r = v * ord(chr(65))"),
    Entry("hash of a static value", "r = v * (hash('a') == hash('a'))"),
    Entry("math functions", "r = math.floor(v * 1.5) + math.ceil(v / 2)"),
    Entry("math on static values", "r = v * math.sqrt(16) + math.log(math.e) + math.gcd(12, 8)"),
    # `math` takes a one-element tensor through `__float__`: a Python float (a double, here)
    Entry("math of a tensor", "r = math.sqrt(v * v + 1) + math.floor(v * 2) + math.log(v * v + 2, 3)", static=None),
    Entry("math of a tensor with more than one element", "r = math.sqrt(v)", static=None, tensor="x",
          refused=r"math\.sqrt` of a tensor that may hold more than one element", eager_runs=False),
    Entry("math of a Python int", "n = abs(int(v * 4)) + 1\nr = math.sqrt(n) + math.ceil(n / 3) + math.log2(n) + "
          "math.pow(n, 0.5) + math.trunc(-n / 3) + (n / 2).is_integer()"),
    Entry("math uncovered", "r = math.gcd(int(v * 4), 4)", static=None,
          refused=r"math\.gcd` of a number computed in the graph"),
    Entry("float methods", "m = float(v) / 2\nr = m.is_integer() + m.conjugate() + math.isclose(m, 0.5)",
          static="3.0"),
]
