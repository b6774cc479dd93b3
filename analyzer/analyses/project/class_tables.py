"""Project classes for the value-kind analysis: their bases, method resolution order
and methods, whether a class is an `nn.Module`, and the attribute tables that
class-level assignments and `__init__` fill."""

from __future__ import annotations

from analyzer.analyses.kinds.summaries import ClassInfo
from analyzer.analyses.kinds.values import STATIC_PY, UNKNOWN, Value, flag_truth
from analyzer.analyses.project.index import ClassKey, FunctionKey
from analyzer.frontend import ir


class ClassTables:
    """The classes of `KindAnalyzer` (a mixin over its state and caches)."""

    def class_info(self, key: ClassKey) -> ClassInfo | None:
        if key in self._classes:
            info = self._classes[key]
            self._reads[-1] |= info.reads
            return info
        self._begin_reads()
        try:
            module = self.module_ir(key.path)
            node = module.classes().get(key.name) if module is not None else None
            if node is None:
                return None
            env = self.globals_of(module)
            bases = [self.evaluate(b, module, env) for b in node.bases]
        finally:
            reads = self._end_reads()
        info = ClassInfo(key, node, bases, reads=reads)
        self._classes[key] = info
        return info

    def mro(self, key: ClassKey, _seen=None):
        """Project classes in method-resolution order (depth first, good enough here)."""
        seen = _seen if _seen is not None else set()
        if key in seen:
            return
        seen.add(key)
        info = self.class_info(key)
        if info is None:
            return
        yield info
        for base in info.bases:
            if base.type == "class" and isinstance(base.ref, ClassKey):
                yield from self.mro(base.ref, seen)

    def find_method(self, key: ClassKey, name: str, after: ClassKey | None = None):
        skipping = after is not None
        for info in self.mro(key):
            if skipping:
                skipping = info.key != after
                continue
            method = info.node.methods().get(name)
            if method is not None:
                return info, method
        return None, None

    def external_bases(self, key: ClassKey) -> list[str]:
        return [b.ref for info in self.mro(key) for b in info.bases if b.type == "ext" and isinstance(b.ref, str)]

    def is_tensor_class(self, key: ClassKey) -> bool:
        """A subclass of `torch.Tensor` defined in the checked code (`class Index(Tensor)`):
        its instances are tensors whose own methods are followed (`python_calls`)."""
        return any(b == "torch.Tensor" for b in self.external_bases(key))

    def is_module_class(self, key: ClassKey) -> bool:
        if any(b.startswith("torch.nn") or b.endswith(("Module", "Model", "PreTrainedModel")) for b in self.external_bases(key)):
            return True
        return self.find_method(key, "forward")[1] is not None

    def attributes(self, key: ClassKey) -> dict[str, Value]:
        info = self.class_info(key)
        if info is None:
            return {}
        if info.attributes is not None:
            self._reads[-1] |= info.attribute_reads
            return info.attributes
        attrs: dict[str, Value] = {}
        info.attributes = attrs  # partial table visible to __init__ itself
        self._begin_reads()
        try:
            self._fill_attributes(key, attrs)
        finally:
            info.attribute_reads = self._end_reads()
        return attrs

    def _fill_attributes(self, key: ClassKey, attrs: dict[str, Value]) -> None:
        # Class-level assignments first (defaults, `__constants__`, annotations).
        for owner in reversed(list(self.mro(key))):
            module = self.module_ir(owner.key.path)
            for stmt in owner.node.body:
                if isinstance(stmt, ir.Assign) and module is not None:
                    env = self.globals_of(module)
                    if isinstance(stmt.value, ir.Name) and stmt.value.id in env:
                        # `config_class = BertConfig`: left as the lazy import it is bound to
                        # (resolved where it is read, `resolve`), since resolving it would
                        # parse the configuration file of every model for a name that
                        # forward hardly ever reads.
                        value = env[stmt.value.id]
                    else:
                        value = self.evaluate(stmt.value, module, env)
                    for t in stmt.targets:
                        if isinstance(t, ir.Name):
                            attrs[t.id] = value
        owner, init = self.find_method(key, "__init__")
        if init is not None:
            module = self.module_ir(owner.key.path)
            args = {}
            for i, p in enumerate(init.params):
                if i == 0:
                    args[p.name] = Value("module", ref=key)
                elif p.default is not None:
                    args[p.name] = self.evaluate(p.default, module, self.globals_of(module))
                    if args[p.name].type == "none":
                        args[p.name] = UNKNOWN
                elif p.kind in ("vararg", "kwarg"):
                    args[p.name] = Value("container", elem=UNKNOWN)
                else:
                    args[p.name] = STATIC_PY
            self.call_function(FunctionKey(owner.key.path, init.qualname), init, module, args,
                               Value("module", ref=key), owner.key, collect=attrs)
        # An attribute holding `True`/`False` is no known flag: other constructions pass
        # other values (`Swish(inplace=True)`) and other methods rebind it (`self.fused =
        # True`); `constructor_flags` decides the attributes every construction fixes.
        for name, value in attrs.items():
            if flag_truth(value) is not None:
                attrs[name] = STATIC_PY
