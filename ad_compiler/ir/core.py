"""The SSA IR: types, values, ops, blocks and functions.

Invariants (checked by :mod:`ad_compiler.ir.verifier`):

* every :class:`Value` is defined exactly once, either as an argument of a
  :class:`Block` or as a result of an :class:`Op`;
* an op only uses values defined before it in its own block or in an enclosing
  block (regions capture outer values implicitly, as Python scopes do);
* each block ends by yielding ``block.results`` to its parent (for a function's
  body: the function's outputs);
* control flow is structured: an op may own regions (``Op.regions``), each a
  :class:`Block`; there are no jumps.

Values are typed with :class:`AType` (shape, dtype, weak). The compiler
specialises every function on its input signature, so shapes are known, except
the lengths that depend on data (``x[mask]``, ``np.nonzero(m)``): such a
dimension is ``None`` (printed ``?``), see :mod:`ad_compiler.ir.dims`.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import SourceLoc
from ..records import Equal, Frozen, Record

_SHORT = {"float16": "f16", "float32": "f32", "float64": "f64", "int8": "i8", "int16": "i16",
          "int32": "i32", "int64": "i64", "uint8": "u8", "bool": "bool", "complex64": "c64",
          "complex128": "c128"}
_WEAK_NAMES = {"f": "float", "i": "int", "b": "bool", "c": "complex"}


class AType(Frozen, Equal):
    """The abstract type of an IR value.

    ``weak=True`` marks a Python number (float, int, bool): it has shape ``()``
    and takes the dtype of the arrays it meets, as NumPy's weak scalars do.

    >>> str(AType((3, 4), np.dtype('float32'))), str(AType.of(2.0))
    ('f32[3,4]', 'float')
    """

    shape: tuple
    dtype: np.dtype
    weak: bool = False

    _fields = ("shape", "dtype", "weak")

    def __init__(self, shape, dtype, weak=False):
        _set = object.__setattr__
        _set(self, "shape", shape)
        _set(self, "dtype", dtype)
        _set(self, "weak", weak)

    def __eq__(self, other):  # written out: types are compared and hashed often
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (self.shape, self.dtype, self.weak) == (other.shape, other.dtype, other.weak)

    def __hash__(self) -> int:  # computed once: types are dict keys of every memo
        try:
            return self._hash
        except AttributeError:
            h = hash((self.shape, self.dtype, self.weak))
            object.__setattr__(self, "_hash", h)
            return h

    def __reduce__(self):  # the hash is not carried to another process
        return type(self), (self.shape, self.dtype, self.weak)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def dynamic(self) -> bool:
        """Whether a dimension is only known at run time (``None``)."""
        return None in self.shape

    @property
    def size(self) -> int:
        """The number of elements; -1 when a dimension is only known at run time."""
        if None in self.shape:
            return -1
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def is_float(self) -> bool:
        return self.dtype.kind in "fc"

    @property
    def python_type(self) -> type | None:
        """float/int/bool for a weak type, else None."""
        if not self.weak:
            return None
        return {"f": float, "i": int, "b": bool, "c": complex}[self.dtype.kind]

    @staticmethod
    def of(value: Any) -> "AType":
        """The type of a concrete runtime value (ndarray, NumPy scalar or Python number)."""
        if isinstance(value, (np.ndarray, np.generic)):  # before float: np.float64 is a float
            return AType(tuple(value.shape), value.dtype, False)
        if isinstance(value, bool):
            return AType((), np.dtype(bool), True)
        if isinstance(value, int):
            return AType((), np.dtype(np.int64), True)
        if isinstance(value, float):
            return AType((), np.dtype(np.float64), True)
        if isinstance(value, complex):
            return AType((), np.dtype(np.complex128), True)
        arr = np.asarray(value)
        return AType(tuple(arr.shape), arr.dtype, False)

    def with_dtype(self, dtype) -> "AType":
        return AType(self.shape, np.dtype(dtype), False)

    def __str__(self) -> str:
        if self.weak:
            return _WEAK_NAMES[self.dtype.kind]
        short = _SHORT.get(self.dtype.name, self.dtype.name)
        return f"{short}[{','.join('?' if d is None else str(d) for d in self.shape)}]"


class ListType(Frozen, Equal):
    """A Python list of values of one type, built by a loop (``ys.append(v)``, or the
    values a loop's adjoint saves per iteration)."""

    elem: AType

    _fields = ("elem",)

    def __init__(self, elem):
        object.__setattr__(self, "elem", elem)

    weak = False
    shape = ()

    @property
    def dynamic(self) -> bool:
        return self.elem.dynamic

    def __str__(self) -> str:
        return f"list<{self.elem}>"


class Value:
    """An SSA value. ``hint`` is the user's variable name it came from, if any."""

    __slots__ = ("type", "hint", "producer")

    def __init__(self, type: AType, hint: str | None = None, producer: "Op | None" = None):
        self.type = type
        self.hint = hint
        self.producer = producer

    def __repr__(self) -> str:
        return f"<Value {self.hint or '?'}: {self.type}>"


class Op(Record):
    """One operation: a primitive (or structural op) applied to values.

    ``params`` are static attributes (Python ints, tuples, bools, dtypes, ...);
    ``regions`` are the blocks a structured control-flow op owns.
    """

    prim: str
    inputs: list
    params: dict
    results: list
    regions: list
    loc: SourceLoc | None = None

    _fields = ("prim", "inputs", "params", "results", "regions", "loc")

    def __init__(self, prim, inputs, params=None, results=None, regions=None, loc=None):
        self.prim = prim
        self.inputs = inputs
        self.params = {} if params is None else params
        self.results = [] if results is None else results
        self.regions = [] if regions is None else regions
        self.loc = loc

    @property
    def result(self) -> Value:
        (out,) = self.results
        return out

    def __repr__(self) -> str:
        from .printer import format_op
        return format_op(self)


class Block(Record):
    """A list of ops with arguments and the values it yields to its parent."""

    args: list
    ops: list
    results: list

    _fields = ("args", "ops", "results")

    def __init__(self, args=None, ops=None, results=None):
        self.args = [] if args is None else args
        self.ops = [] if ops is None else ops
        self.results = [] if results is None else results

    def walk(self):
        """Every op in this block and, depth first, in the regions it owns."""
        for op in self.ops:
            yield op
            for region in op.regions:
                yield from region.walk()


class Function(Record):
    """A function: its body's arguments are the inputs, its results the outputs."""

    name: str
    body: Block
    loc: SourceLoc | None = None
    #: id(op) -> k for the ops that write their result into input k's buffer, set by
    #: the last pass (passes/reuse.py); the IR itself stays SSA and free of it
    reuse: dict

    _fields = ("name", "body", "loc")

    def __init__(self, name, body, loc=None, reuse=None):
        self.name = name
        self.body = body
        self.loc = loc
        self.reuse = {} if reuse is None else reuse

    @property
    def args(self) -> list:
        return self.body.args

    @property
    def outputs(self) -> list:
        return self.body.results

    def __str__(self) -> str:
        from .printer import format_function
        return format_function(self)
