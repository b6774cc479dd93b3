"""Builtin functions on objects, types and attributes."""

from tests.export.conformance import Entry

ENTRIES = [
    Entry("callable", "r = v * (callable(len) + callable(3))"),
    Entry("getattr", "r = v * getattr(math, 'pi') + getattr(math, 'nope', 2)"),
    Entry("getattr of the module", "r = v * getattr(self, 'training')"),
    Entry("hasattr", "r = v * (hasattr(v, 'shape') + hasattr(math, 'nope'))"),
    Entry("setattr", "ns = types.SimpleNamespace()\nsetattr(ns, 'a', v)\nr = ns.a"),
    Entry("delattr", "ns = types.SimpleNamespace(a=1, b=2)\ndelattr(ns, 'a')\nr = v * ns.b + hasattr(ns, 'a')"),
    Entry("isinstance", "r = isinstance(v, torch.Tensor) * 10 + isinstance(v, (int, float))"),
    Entry("issubclass", "r = v * (issubclass(bool, int) + issubclass(type(v), object))"),
    Entry("type", "r = v * (type(v) is torch.Tensor) + (type(3) is int)"),
    Entry("type of a tensor", "r = v * (type(v).__name__ == 'Tensor')", static=None),
    Entry("id", "a = [1]\nb = a\nr = v * (id(a) == id(b))"),
    Entry("object", "o = object()\nr = v * (o is not None)"),
    Entry("repr / str / ascii of static values", "r = v * len(repr([1, 'a']) + str(2.5) + ascii('é'))"),
    Entry("format", "r = v * len(format(3.14159, '.2f') + '{:>5}'.format(7))"),
    Entry("str of a tensor", "r = len(str(v))", static=None, refused=r"`str\(\)`|builtins\.str"),
    Entry("print", "print('value', v)\nr = v"),
    Entry("vars", "ns = types.SimpleNamespace(a=2)\nr = v * vars(ns)['a']"),
    Entry("dir", "r = v * ('a' in dir(types.SimpleNamespace(a=1)))"),
    Entry("super", "r = v * callable(super().forward)"),
    Entry("property / staticmethod / classmethod",
          "p = property(len)\nsm = staticmethod(len)\nc = classmethod(len)\nr = v * (p.fget is len) + (sm.__func__ is len)"),
    Entry("bytes / bytearray / memoryview", "r = v * (len(bytes(3)) + len(bytearray(b'ab')) + memoryview(b'abc')[1])"),
    Entry("globals", "r = v * globals()['SCALE']", module="SCALE = 3"),
    Entry("locals", "a = 4\nr = v * locals()['a']"),
    Entry("__import__", "r = v * __import__('math').floor(2.5)"),
    Entry("compile", "c = compile('1 + 1', '<s>', 'eval')\nr = v * (c.co_filename == '<s>')"),
]
