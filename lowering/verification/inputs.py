"""Model inputs: cloning, tensor leaves, grouping by signature, dynamic axes, random
inputs from ``--input`` specs, and ``--inputs DATA.npz`` files.

An *input* is a tuple of positional arguments of ``forward``. Its tensor leaves (in
nested tuples, lists and dicts, in order) are what the ONNX graphs take; other leaves
(None, flags, ints) are constants of an export, as they are for tracing.

npz layout: each key is ``NAME`` (one input) or ``I/NAME`` (input number I, from 0),
where NAME is a parameter of ``forward``.
"""

from __future__ import annotations

import inspect
import re
import zipfile
import zlib

import numpy as np
import torch


def parameter_names(module: torch.nn.Module) -> list[str]:
    params = list(inspect.signature(type(module).forward).parameters.values())[1:]
    return [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def clone(args):
    """A deep copy of the tensors (some models write into their inputs)."""
    if isinstance(args, torch.Tensor):
        return args.detach().clone()
    if isinstance(args, tuple):
        return tuple(clone(a) for a in args)
    if isinstance(args, list):
        return [clone(a) for a in args]
    if isinstance(args, dict):
        return {k: clone(v) for k, v in args.items()}
    return args


def tensor_leaves(args) -> list[torch.Tensor]:
    out: list[torch.Tensor] = []

    def visit(v):
        if isinstance(v, torch.Tensor):
            out.append(v)
        elif isinstance(v, (tuple, list)):
            for item in v:
                visit(item)
        elif isinstance(v, dict):
            for item in v.values():
                visit(item)

    visit(args)
    return out


def replace_leaves(args, leaves: list[torch.Tensor]):
    """``args`` with its tensor leaves replaced, in order, by ``leaves``."""
    it = iter(leaves)

    def build(v):
        if isinstance(v, torch.Tensor):
            return next(it)
        if isinstance(v, tuple):
            return tuple(build(a) for a in v)
        if isinstance(v, list):
            return [build(a) for a in v]
        if isinstance(v, dict):
            return {k: build(a) for k, a in v.items()}
        return v

    return build(args)


def signature(args) -> tuple:
    """What one exported graph fixes: leaf dtypes and ranks, and the constants."""

    def sig(v):
        if isinstance(v, torch.Tensor):
            return ("T", str(v.dtype), v.dim())
        if isinstance(v, (tuple, list)):
            return (type(v).__name__, tuple(sig(a) for a in v))
        if isinstance(v, dict):
            return ("dict", tuple((k, sig(a)) for k, a in v.items()))
        return ("C", repr(v))

    return sig(tuple(args))


def group_by_signature(inputs: list[tuple]) -> list[list[int]]:
    groups: dict[tuple, list[int]] = {}
    for i, args in enumerate(inputs):
        groups.setdefault(signature(args), []).append(i)
    return list(groups.values())


def varying_axes(inputs: list[tuple]) -> dict[int, list[int]]:
    """{top-level argument index: [axes whose size differs between the inputs]}."""
    out: dict[int, list[int]] = {}
    if not inputs:
        return out
    for pos, first in enumerate(inputs[0]):
        if not isinstance(first, torch.Tensor):
            continue
        axes = [a for a in range(first.dim()) if any(
            isinstance(args[pos], torch.Tensor) and args[pos].dim() == first.dim()
            and args[pos].shape[a] != first.shape[a] for args in inputs)]
        if axes:
            out[pos] = axes
    return out


def describe(args, names: list[str]) -> list[dict]:
    """[{name, shape, dtype}] of the tensor arguments (nested ones as name[i]/name[key])."""
    out: list[dict] = []

    def visit(v, name):
        if isinstance(v, torch.Tensor):
            out.append({"name": name, "shape": list(v.shape), "dtype": str(v.dtype).replace("torch.", "")})
        elif isinstance(v, (tuple, list)):
            for i, item in enumerate(v):
                visit(item, f"{name}[{i}]")
        elif isinstance(v, dict):
            for k, item in v.items():
                visit(item, f"{name}[{k!r}]")
        else:
            out.append({"name": name, "value": repr(v)})

    for i, a in enumerate(args):
        visit(a, names[i] if i < len(names) else f"arg{i}")
    return out


def embedding_bound(module: torch.nn.Module) -> int | None:
    """The smallest ``num_embeddings`` of the module's nn.Embedding submodules."""
    sizes = [m.num_embeddings for m in module.modules() if isinstance(m, (torch.nn.Embedding, torch.nn.EmbeddingBag))]
    return min(sizes) if sizes else None


RANDOM_SCALES = (1.0, 10.0, 0.1, -3.0)


def random_inputs(specs: list[tuple[str, torch.Tensor]], module: torch.nn.Module, names: list[str],
                  n: int = len(RANDOM_SCALES), seed: int = 0) -> list[tuple]:
    """``n`` random inputs shaped like ``specs`` (from ``--input``), at several scales so
    that magnitude-dependent branches have a chance; index inputs stay below the
    smallest embedding size (or 10)."""
    by_name = dict(specs)
    order = []
    for p in names:
        if p not in by_name:
            break
        order.append(p)
    if len(order) != len(by_name):
        raise ValueError(f"forward takes ({', '.join(names)}); --input gives {', '.join(by_name) or 'nothing'}"
                         " (give the leading parameters, by name)")
    high = embedding_bound(module) or 10
    g = torch.Generator().manual_seed(seed)
    out = []
    for k in range(n):
        scale = RANDOM_SCALES[k % len(RANDOM_SCALES)]
        args = []
        for name in order:
            t = by_name[name]
            if t.dtype == torch.bool:
                args.append(torch.rand(t.shape, generator=g) < 0.5)
            elif t.dtype.is_floating_point:
                args.append((scale * torch.randn(t.shape, generator=g)).to(t.dtype))
            else:
                args.append(torch.randint(0, high, t.shape, generator=g).to(t.dtype))
        out.append(tuple(args))
    return out


_KEY = re.compile(r"^(?:(?P<index>\d+)/)?(?P<name>[^/]+)$")


def _open_npz(path: str):
    """``np.load`` of an .npz file of arrays; anything else is a ValueError that says what
    the file is instead (and not numpy's advice to load pickles, which runs code)."""
    try:
        data = np.load(path, allow_pickle=False)
    except (ValueError, EOFError, zipfile.BadZipFile):
        raise ValueError(f"{path}: not an .npz file of arrays (write one with np.savez(path, x=...))") from None
    if not isinstance(data, np.lib.npyio.NpzFile):
        raise ValueError(f"{path}: a single .npy array, not an .npz file of named arrays "  # noqa: TRY004 - a bad file, as above
                         "(write one with np.savez(path, x=...))")
    return data


def _read_array(data, path: str, key: str) -> np.ndarray:
    """One array of an open .npz. Its members are read only here (``np.load`` is lazy),
    so that what numpy refuses in one is said with the file and the key: an array of
    Python objects is a pickle, which untrace never loads (``allow_pickle`` would run
    whatever code it names)."""
    try:
        array = data[key]
    except ValueError as exc:
        if "allow_pickle" in str(exc):
            raise ValueError(f"{path}: array {key!r} is an array of Python objects, and untrace does not load "
                             "object arrays (they are pickles, which can run code): save numbers, e.g. "
                             "np.savez(path, x=np.asarray(x, dtype=np.float32))") from None
        raise _unreadable(path, key, exc) from None
    except (EOFError, OSError, zipfile.BadZipFile, zlib.error) as exc:
        raise _unreadable(path, key, exc) from None
    if not isinstance(array, np.ndarray):  # a member that is not a .npy file comes back as bytes
        raise ValueError(f"{path}: {key!r} is not a .npy array (write the file with np.savez(path, x=...))")
    return array


def _unreadable(path: str, key: str, exc: BaseException) -> ValueError:
    """A member numpy cannot read (a header nested too deep, not a dict, truncated...).
    numpy's message quotes the whole header (up to 10,000 characters): its start says
    enough."""
    reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    reason = reason if len(reason) <= 120 else reason[:117] + "..."
    return ValueError(f"{path}: array {key!r} cannot be read ({reason}); write the file again with np.savez(path, x=...)")


def load_npz(path: str, names: list[str]) -> list[tuple]:
    with _open_npz(path) as data:
        entries: dict[int, dict[str, np.ndarray]] = {}
        for key in data.files:
            m = _KEY.match(key)
            if not m:
                raise ValueError(f"{path}: key {key!r} is neither NAME nor I/NAME")
            entries.setdefault(int(m["index"] or 0), {})[m["name"]] = _read_array(data, path, key)
    if not entries:
        raise ValueError(f"{path}: no arrays")
    out = []
    for index in sorted(entries):
        given = entries[index]
        unknown = [k for k in given if k not in names]
        if unknown:
            raise ValueError(f"{path}: input {index}: {', '.join(unknown)} is not a parameter of forward ({', '.join(names)})")
        args = []
        for name in names:
            if name not in given:
                break
            args.append(torch.from_numpy(np.ascontiguousarray(given[name])))
        if len(args) != len(given):
            raise ValueError(f"{path}: input {index} skips a parameter (forward takes {', '.join(names)})")
        out.append(tuple(args))
    return out
