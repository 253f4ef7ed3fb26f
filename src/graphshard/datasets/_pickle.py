"""Read the Python pickles of Planetoid's ``ind.<name>.*`` files without unpickling them.

:func:`read_pickle` walks the pickle's opcodes (tokenised by :func:`pickletools.genops`) on
a stack machine of its own that knows plain data (numbers, strings, bytes, tuples, lists,
dicts) and exactly the objects Planetoid's files hold, in the shapes NumPy, SciPy and
Python write them:

- a NumPy array: ``_reconstruct(ndarray, (0,), b"b")`` then BUILD with ``(version, shape,
  dtype, fortran, raw bytes)`` (protocols 2-4), or ``_frombuffer(bytes, dtype, shape,
  order)`` (protocol 5); the dtype is ``dtype(name, align, copy)`` with BUILD state
  ``(3, byteorder, None, None, None, -1, -1, flags)``;
- a SciPy CSR matrix: ``csr_matrix`` by NEWOBJ of ``()``, then BUILD with its state dict;
- a ``collections.defaultdict(list)`` (the adjacency lists), read as a plain dict;
- ``_codecs.encode(text, "latin1")``: bytes, as Python 3 writes them at protocol 2.

No pickle hook of any class is called: arrays are built here with :func:`numpy.frombuffer`
from raw bytes the file holds, after checking that dtype (booleans, integers, floats) and
shape account for exactly those bytes; so an array can be no larger than the file, and
no object array, uninitialised array or array built by a constructor call can come out.
Any other global, opcode or argument shape is a :class:`pickle.UnpicklingError`.
"""

from __future__ import annotations

import math
import pickle
import pickletools
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["CSRState", "read_pickle"]

#: Globals a Planetoid file may name, by what they stand for here.
_GLOBALS = {
    ("numpy.core.multiarray", "_reconstruct"): "reconstruct",
    ("numpy._core.multiarray", "_reconstruct"): "reconstruct",  # written by NumPy 2
    ("numpy.core.numeric", "_frombuffer"): "frombuffer",  # protocol 5
    ("numpy._core.numeric", "_frombuffer"): "frombuffer",
    ("numpy", "ndarray"): "ndarray",
    ("numpy", "dtype"): "dtype",
    ("_codecs", "encode"): "encode",
    ("scipy.sparse.csr", "csr_matrix"): "csr",
    ("scipy.sparse._csr", "csr_matrix"): "csr",  # SciPy >= 1.8
    ("collections", "defaultdict"): "defaultdict",
    ("__builtin__", "list"): "list",
    ("builtins", "list"): "list",
}
#: Dtype names an array may have: booleans, integers and floats of the usual sizes.
_DTYPE_NAME = re.compile(r"(b1|[iu][1248]|f[248])")
_MAX_DIMS = 32


@dataclass(eq=False)
class _Global:
    kind: str


@dataclass(eq=False)
class _Dtype:
    name: str
    dtype: np.dtype | None = None  # set by BUILD (or native order when never built)


@dataclass(eq=False)
class _Array:
    value: np.ndarray | None = None  # set by BUILD


@dataclass(eq=False)
class CSRState:
    """A ``scipy.sparse.csr_matrix`` as its pickled state dict (arrays already built)."""

    state: dict[Any, Any] | None = field(default=None, repr=False)


class _Mark:
    pass


_MARK = _Mark()


def read_pickle(data: bytes) -> Any:
    """The object a Planetoid pickle holds: nested dicts, lists, tuples, numbers, strings,
    NumPy arrays (numeric, built from the file's bytes) and :class:`CSRState`.

    Raises:
        pickle.UnpicklingError: a global, opcode or object shape these files do not use.
        ValueError: a damaged stream (as :func:`pickletools.genops` reports it).

    Example:
        >>> import pickle
        >>> read_pickle(pickle.dumps({0: [1, 2]}, protocol=2))
        {0: [1, 2]}
        >>> read_pickle(pickle.dumps(np.eye(2, dtype=np.float32), protocol=2)).tolist()
        [[1.0, 0.0], [0.0, 1.0]]
    """
    return _resolve(_Machine().run(data))


class _Machine:
    def __init__(self) -> None:
        self.stack: list[Any] = []
        self.memo: dict[int, Any] = {}

    def pop_mark(self) -> list[Any]:
        for k in range(len(self.stack) - 1, -1, -1):
            if self.stack[k] is _MARK:
                items = self.stack[k + 1:]
                del self.stack[k:]
                return items
        raise pickle.UnpicklingError("MARK expected on the stack")

    def pop(self, n: int = 1) -> list[Any]:
        if len(self.stack) < n or any(v is _MARK for v in self.stack[len(self.stack) - n:]):
            raise pickle.UnpicklingError("stack underflow")
        items = self.stack[len(self.stack) - n:]
        del self.stack[len(self.stack) - n:]
        return items

    def top(self) -> Any:
        if not self.stack or self.stack[-1] is _MARK:
            raise pickle.UnpicklingError("stack underflow")
        return self.stack[-1]

    def run(self, data: bytes) -> Any:
        for op, arg, _ in pickletools.genops(data):
            name = op.name
            if name == "STOP":
                if len(self.stack) != 1:
                    raise pickle.UnpicklingError("STOP with a stack that does not hold one "
                                                 "object")
                return self.stack[0]
            handler = _OPS.get(name)
            if handler is None:
                raise pickle.UnpicklingError(f"opcode {name} is not used by Planetoid's files")
            handler(self, arg)
        raise pickle.UnpicklingError("no STOP opcode")  # pragma: no cover - genops raises

    # ----- objects ----------------------------------------------------------------------
    def global_(self, module: str, name: str) -> None:
        kind = _GLOBALS.get((module, name))
        if kind is None:
            raise pickle.UnpicklingError(f"global {module}.{name} is not a Planetoid array")
        self.stack.append(_Global(kind))

    def reduce(self, _: Any) -> None:
        fn, args = self.pop(2)
        if not isinstance(fn, _Global) or not isinstance(args, tuple):
            raise pickle.UnpicklingError("REDUCE of something other than an allowed global")
        self.stack.append(_call(fn.kind, args))

    def newobj(self, _: Any) -> None:
        cls, args = self.pop(2)
        if not (isinstance(cls, _Global) and cls.kind == "csr" and args == ()):
            raise pickle.UnpicklingError("NEWOBJ other than csr_matrix()")
        self.stack.append(CSRState())

    def build(self, _: Any) -> None:
        (state,) = self.pop()
        obj = self.top()
        if isinstance(obj, _Dtype) and obj.dtype is None:
            obj.dtype = _dtype_state(obj.name, state)
        elif isinstance(obj, _Array) and obj.value is None:
            obj.value = _array_state(state)
        elif isinstance(obj, CSRState) and obj.state is None:
            if not isinstance(state, dict):
                raise pickle.UnpicklingError("csr_matrix state is not a dict")
            obj.state = state
        else:
            raise pickle.UnpicklingError(f"BUILD of {type(obj).__name__.lstrip('_')} is not "
                                         "used by Planetoid's files")


def _call(kind: str, args: tuple[Any, ...]) -> Any:
    """What REDUCE of an allowed global with ``args`` stands for."""
    if kind == "reconstruct":  # an empty array, filled in by BUILD
        if len(args) == 3 and isinstance(args[0], _Global) and args[0].kind == "ndarray" \
                and args[1] == (0,) and args[2] in ("b", b"b"):
            return _Array()
        raise pickle.UnpicklingError("_reconstruct takes (ndarray, (0,), 'b') only")
    if kind == "dtype":
        if len(args) == 3 and isinstance(args[0], str) and args[1] in (0, False) \
                and args[2] in (1, True) and _DTYPE_NAME.fullmatch(args[0]):
            return _Dtype(args[0])
        raise pickle.UnpicklingError(f"dtype{args!r:.60} is not a numeric dtype")
    if kind == "encode":
        if len(args) == 2 and isinstance(args[0], str) and args[1] in ("latin1", "latin-1"):
            return args[0].encode("latin-1")
        raise pickle.UnpicklingError("_codecs.encode takes (text, 'latin1') only")
    if kind == "defaultdict":
        if len(args) == 1 and isinstance(args[0], _Global) and args[0].kind == "list":
            return {}
        raise pickle.UnpicklingError("defaultdict takes (list,) only")
    if kind == "frombuffer":
        if len(args) == 4 and isinstance(args[1], _Dtype) and args[3] in ("C", "F"):
            return _Array(_from_bytes(args[0], args[1], args[2], args[3] == "F"))
        raise pickle.UnpicklingError("_frombuffer takes (bytes, dtype, shape, order) only")
    raise pickle.UnpicklingError(f"a call of {kind} is not used by Planetoid's files")


def _dtype_state(name: str, state: Any) -> np.dtype:
    if not (isinstance(state, tuple) and len(state) == 8 and state[0] in (3, 4)
            and state[1] in ("<", ">", "|", "=") and state[2:5] == (None, None, None)
            and state[5:7] == (-1, -1) and state[7] == 0):
        raise pickle.UnpicklingError(f"dtype state {state!r:.80} is not a plain numeric "
                                     "dtype's")
    return np.dtype(state[1] + name)  # built from a validated name, not from the state


def _array_state(state: Any) -> np.ndarray:
    if isinstance(state, tuple) and len(state) == 5 and state[0] == 1:
        state = state[1:]
    if not (isinstance(state, tuple) and len(state) == 4 and isinstance(state[1], _Dtype)
            and state[2] in (0, 1)):
        raise pickle.UnpicklingError("ndarray state is not (version, shape, dtype, fortran, "
                                     "raw bytes)")
    return _from_bytes(state[3], state[1], state[0], bool(state[2]))


def _from_bytes(raw: Any, dtype: _Dtype, shape: Any, fortran: bool) -> np.ndarray:
    """An array of ``shape`` and ``dtype`` whose data are exactly the bytes ``raw``."""
    if isinstance(raw, str):  # a Python 2 string, as genops decodes it
        raw = raw.encode("latin-1")
    if not isinstance(raw, (bytes, bytearray)):
        raise pickle.UnpicklingError(f"array data is {type(raw).__name__}, expected raw bytes "
                                     "of numbers")
    if not (isinstance(shape, tuple) and len(shape) <= _MAX_DIMS and all(
            type(v) is int and v >= 0 for v in shape)):
        raise pickle.UnpicklingError(f"array shape {shape!r:.80} is not a tuple of sizes")
    dt = dtype.dtype if dtype.dtype is not None else np.dtype(dtype.name)
    need = math.prod(shape) * dt.itemsize
    if need != len(raw):
        raise pickle.UnpicklingError(f"array of shape {shape} and dtype {dt} needs {need} "
                                     f"bytes, the file holds {len(raw)}")
    arr = np.frombuffer(bytes(raw), dtype=dt).reshape(shape, order="F" if fortran else "C")
    return arr.astype(dt.newbyteorder("="), copy=True)  # native order, writeable


def _resolve(obj: Any) -> Any:
    """Stand-ins replaced by what they hold; refuses one never filled in."""
    if isinstance(obj, _Array):
        if obj.value is None:
            raise pickle.UnpicklingError("an array without data (no BUILD)")
        return obj.value
    if isinstance(obj, CSRState):
        if obj.state is None:
            raise pickle.UnpicklingError("a csr_matrix without state")
        if not all(type(k) is str for k in obj.state):
            raise pickle.UnpicklingError("csr_matrix state keys are not names")
        return CSRState({k: _resolve_items(v) for k, v in obj.state.items()})
    if isinstance(obj, (_Dtype, _Global)):
        raise pickle.UnpicklingError(f"a bare {type(obj).__name__.lstrip('_').lower()} where "
                                     "data is expected")
    if isinstance(obj, dict):  # the adjacency lists: values are lists of ints
        return {k: _resolve_items(v) for k, v in obj.items()}
    return _resolve_items(obj)


def _resolve_items(obj: Any) -> Any:
    """Lists and tuples one level deep (Planetoid nests no further); arrays resolved."""
    if isinstance(obj, (list, tuple)):
        out = [_resolve_leaf(v) for v in obj]
        return out if isinstance(obj, list) else tuple(out)
    return _resolve_leaf(obj)


def _resolve_leaf(obj: Any) -> Any:
    if isinstance(obj, _Array):
        return _resolve(obj)
    if isinstance(obj, (CSRState, _Dtype, _Global)):
        raise pickle.UnpicklingError(f"a {type(obj).__name__.lstrip('_')} where data is "
                                     "expected")
    if isinstance(obj, (list, tuple, dict)):
        raise pickle.UnpicklingError("containers nested deeper than Planetoid's files nest")
    return obj


# ----- opcodes --------------------------------------------------------------------------------
def _push(m: _Machine, arg: Any) -> None:
    m.stack.append(arg)


def _const(value: Any) -> Any:
    return lambda m, _: m.stack.append(value)


def _tuple_n(n: int) -> Any:
    return lambda m, _: m.stack.append(tuple(m.pop(n)))


def _put(m: _Machine, arg: Any) -> None:
    m.memo[int(arg)] = m.top()


def _memoize(m: _Machine, _: Any) -> None:
    m.memo[len(m.memo)] = m.top()


def _get(m: _Machine, arg: Any) -> None:
    try:
        m.stack.append(m.memo[int(arg)])
    except KeyError:
        raise pickle.UnpicklingError(f"memo key {arg} was never set") from None


def _append(m: _Machine, _: Any) -> None:
    (value,) = m.pop()
    _list(m).append(value)


def _appends(m: _Machine, _: Any) -> None:
    items = m.pop_mark()
    _list(m).extend(items)


def _list(m: _Machine) -> list[Any]:
    target = m.top()
    if not isinstance(target, list):
        raise pickle.UnpicklingError(f"APPEND to {type(target).__name__.lstrip('_')}")
    return target


def _setitems(m: _Machine, items: list[Any]) -> None:
    target = m.top()
    if not isinstance(target, dict):
        raise pickle.UnpicklingError(f"SETITEM on {type(target).__name__.lstrip('_')}")
    if len(items) % 2:
        raise pickle.UnpicklingError("SETITEMS with an odd number of items")
    for k in range(0, len(items), 2):
        key = items[k]
        if not isinstance(key, (int, str, bytes)):  # Planetoid's keys: node IDs, names
            raise pickle.UnpicklingError(f"dict key of type {type(key).__name__.lstrip('_')}")
        target[key] = items[k + 1]


def _dict(m: _Machine, _: Any) -> None:
    items = m.pop_mark()
    m.stack.append({})
    _setitems(m, items)


def _global(m: _Machine, arg: Any) -> None:
    module, _, name = str(arg).partition(" ")
    m.global_(module, name)


def _stack_global(m: _Machine, _: Any) -> None:
    module, name = m.pop(2)
    if not isinstance(module, str) or not isinstance(name, str):
        raise pickle.UnpicklingError("STACK_GLOBAL of non-strings")
    m.global_(module, name)


def _pop_value(m: _Machine, _: Any) -> None:
    if m.stack and m.stack[-1] is _MARK:
        m.stack.pop()
    else:
        m.pop()


_OPS: dict[str, Any] = {
    "PROTO": lambda m, _: None, "FRAME": lambda m, _: None,
    "MARK": _const(_MARK), "POP": _pop_value, "POP_MARK": lambda m, _: m.pop_mark(),
    "DUP": lambda m, _: m.stack.append(m.top()),
    "NONE": _const(None), "NEWTRUE": _const(True), "NEWFALSE": _const(False),
    "GLOBAL": _global, "STACK_GLOBAL": _stack_global,
    "REDUCE": _Machine.reduce, "NEWOBJ": _Machine.newobj, "BUILD": _Machine.build,
    "EMPTY_TUPLE": _const(()), "TUPLE1": _tuple_n(1), "TUPLE2": _tuple_n(2),
    "TUPLE3": _tuple_n(3), "TUPLE": lambda m, _: m.stack.append(tuple(m.pop_mark())),
    "EMPTY_LIST": lambda m, _: m.stack.append([]),
    "LIST": lambda m, _: m.stack.append(m.pop_mark()),
    "APPEND": _append, "APPENDS": _appends,
    "EMPTY_DICT": lambda m, _: m.stack.append({}),
    "DICT": _dict,
    "SETITEM": lambda m, _: _setitems(m, m.pop(2)),
    "SETITEMS": lambda m, _: _setitems(m, m.pop_mark()),
    "PUT": _put, "BINPUT": _put, "LONG_BINPUT": _put, "MEMOIZE": _memoize,
    "GET": _get, "BINGET": _get, "LONG_BINGET": _get,
}
for _name in ("INT", "BININT", "BININT1", "BININT2", "LONG", "LONG1", "LONG4", "FLOAT",
              "BINFLOAT", "STRING", "BINSTRING", "SHORT_BINSTRING", "UNICODE", "BINUNICODE",
              "SHORT_BINUNICODE", "BINUNICODE8", "BINBYTES", "SHORT_BINBYTES", "BINBYTES8",
              "BYTEARRAY8"):
    _OPS[_name] = _push
