"""Indexing primitives: reading ``x[idx]``, functional updates ``x[idx] = v`` and
``x[idx] += v``, and their lowerings (``x[...]``, item assignment, ``np.take``,
``np.argmax``/``np.argmin``).

An index is one static param, ``index``: a tuple whose items are Python ints,
slices of ints, ``None``, ``Ellipsis``, or *slots* ``'#k'`` standing for the
k-th dynamic input (an int loop counter, an int array). So ``x[:, i]`` is the op
``getitem %x, %i {index=(slice(None, None, None), '#0')}`` and becomes
``x[:, i]`` again in generated code. The primitives, each with its adjoint:

* ``getitem``: ``x[idx]``, basic indexing (a view); VJP ``index_add`` into zeros;
* ``gather``: ``x[idx]`` with an int array (a copy); VJP ``scatter_add`` into zeros;
* ``index_add``: ``acc[idx] += v`` on a copy (NumPy's ``+=``); VJP a read of ``ct``;
* ``scatter_add``: ``np.add.at(acc, idx, v)`` on a copy; VJP a read of ``ct``;
* ``index_set``: ``x[idx] = v`` on a copy; VJP ``ct`` zeroed at ``idx``, and a read;
* ``index_winners``: which writes of ``x[idx] = v`` survive repeats (no derivative);
* ``argmax``/``argmin``: NumPy's, with ``axis`` and ``keepdims`` (no derivative).

Invariants:

* ``index`` is canonical: a tuple of exact ``int``/``slice``/``None``/``Ellipsis``
  items and slots, so codegen writes it as a literal and it prints readably;
  slots appear once each, in order; dynamic inputs are int-typed (IR values of
  float dtype are rejected with an error naming the index);
* boolean masks never reach a primitive: a mask known when compiling becomes the
  int arrays of ``np.nonzero`` (so every shape is static); assignment through a
  mask computed at run time is lowered to ``np.where``; reading through one is
  an error (its result's shape would depend on the data);
* an index is *advanced* when a dynamic input has ``ndim >= 1``; basic indexing
  selects each element at most once, advanced indexing may repeat elements;
* every update primitive returns an array of its first input's type, never
  writes into an input (``ad_compiler.runtime`` copies first), and follows
  NumPy's forward semantics exactly: with repeated indices ``x[idx] = v`` keeps
  one write and ``x[idx] += v`` adds once, and the gradients agree with that
  (``index_winners`` finds the writes that survive); ``scatter_add``
  accumulates every repeat, as ``np.add.at`` does;
* the adjoint of a read is an update of a fresh ``zeros_like`` and the adjoint
  of an update is a read, so adjoints of adjoints need nothing else.

Update templates call ``rt.index_set`` and friends (``ad_compiler.runtime``):
item assignment is a statement, and codegen writes one expression per op.
:data:`INPLACE_FORMS` holds the statements (``dx[1:3] += ct``) that update a
dead buffer instead, and :func:`accumulate_into` turns ``acc + index_add(zeros,
ct)`` into ``index_add(acc, ct)``, so slice adjoints can add into one array.
"""
from __future__ import annotations

import ast
from types import EllipsisType

import numpy as np

from .. import runtime as rt
from ..ad.rules import ACCUMULATE_INTO, ex, lowering, method, primitive
from ..errors import UnsupportedOperationError
from ..ir import dims
from ..ir.builder import holds_value
from ..ir.core import AType, Value
from ._batch import along, batch_winners, index_read, index_update
from ._infer import normalize_axis
from .elementwise import expand_like
from .shape import reshape_to

F = "indexing"


# -- the index param ---------------------------------------------------------------

def slot(k: int) -> str:
    """The index item standing for the k-th dynamic input."""
    return f"#{k}"


def _is_slot(item) -> bool:
    return type(item) is str


def resolve(index: tuple, dyn) -> tuple:
    """``index`` with each slot replaced by its dynamic value: a real NumPy index."""
    return tuple(dyn[int(item[1:])] if _is_slot(item) else item for item in index)


def _check_item(item) -> None:
    if type(item) is slice:
        if all(p is None or type(p) is int for p in (item.start, item.stop, item.step)):
            return
    elif item is None or type(item) in (int, str, EllipsisType):
        return
    raise ValueError(f"index item {item!r} is not canonical (int, slice of ints, None, "
                     "Ellipsis or a slot '#k')")


def _check_dynamic(t) -> None:
    if isinstance(t, AType) and t.dtype.kind == "b" and t.ndim >= 1:
        return  # a boolean mask computed at run time
    if not isinstance(t, AType) or t.dtype.kind not in "iu":
        what = t.dtype.name if isinstance(t, AType) else str(t)
        raise IndexError(f"an index array must have an integer dtype, got {what}")


def check_index(index, dyn_types) -> None:
    """Raise unless ``index`` is canonical and its slots match ``dyn_types`` in order."""
    if type(index) is not tuple:
        raise ValueError(f"index must be a tuple, got {index!r}")
    for item in index:
        _check_item(item)
    slots = [item for item in index if _is_slot(item)]
    if slots != [slot(k) for k in range(len(dyn_types))]:
        raise ValueError(f"index {index!r} does not fit {len(dyn_types)} dynamic inputs")
    for t in dyn_types:
        _check_dynamic(t)


def _stand_in(t: AType):
    """A concrete value with the indexing behaviour of a dynamic input of type ``t``."""
    return 0 if t.ndim == 0 else np.broadcast_to(np.intp(0), t.shape)


def _with_empty_axis(index, ndim):
    """``index`` spelled out for an array with one more, last, axis (kept whole), or
    None when NumPy must see the index as written (too many items, several ``...``)."""
    rest = ndim - sum(item is not None and item is not Ellipsis for item in index)
    n_ellipsis = sum(item is Ellipsis for item in index)
    if rest < 0 or n_ellipsis > 1:
        return None
    whole = (slice(None),) * rest
    if n_ellipsis:
        at = next(k for k, item in enumerate(index) if item is Ellipsis)
        index = index[:at] + whole + index[at + 1:]
    else:
        index = index + whole
    return index + (slice(None),)


def selection_shape(shape, index, dyn_types) -> tuple:
    """The shape of ``x[index]`` for ``x`` of ``shape`` (NumPy validates the index).

    Indexes a zero-strided dummy with an extra axis of length 0, kept whole and
    last, so not even an advanced index allocates its result.
    """
    check_index(index, dyn_types)
    if None in shape or any(_is_mask(t) or t.dynamic for t in dyn_types):
        return _run_time_selection_shape(tuple(shape), index, dyn_types)
    return _static_selection_shape(shape, resolve(index, [_stand_in(t) for t in dyn_types]))


def _static_selection_shape(shape, index) -> tuple:
    spelled = _with_empty_axis(index, len(shape))
    if spelled is None:  # NumPy raises its own error
        return np.broadcast_to(np.empty((), dtype=bool), tuple(shape))[index].shape
    dummy = np.broadcast_to(np.empty((), dtype=bool), tuple(shape) + (0,))
    return tuple(dummy[spelled].shape[:-1])


def is_advanced(b, dyn) -> bool:
    """Whether an index with these dynamic inputs is advanced (its read is a copy)."""
    return any(b.type_of(v).ndim >= 1 for v in dyn)


def may_repeat(b, dyn) -> bool:
    """Whether an index with these dynamic inputs may select an element twice (an int
    array may; a boolean mask selects each element at most once)."""
    return any(b.type_of(v).ndim >= 1 and not _is_mask(b.type_of(v)) for v in dyn)


def _is_mask(t) -> bool:
    return isinstance(t, AType) and t.dtype.kind == "b" and t.ndim >= 1


def _consumed(item, dyn_types, ndim, index) -> int:
    """How many axes of the indexed array an index item consumes."""
    if item is None:
        return 0
    if item is Ellipsis:
        return ndim - sum(_consumed(i, dyn_types, ndim, index) for i in index
                          if i is not Ellipsis)
    if _is_slot(item) and _is_mask(dyn_types[int(item[1:])]):
        return dyn_types[int(item[1:])].ndim
    return 1


def _run_time_selection_shape(shape, index, dyn_types) -> tuple:
    """The selection shape when lengths depend on data (``?`` dims of ``x`` or of an
    index array, or a boolean mask, which selects as its ``np.nonzero`` arrays do).

    A slice along a ``?`` axis is taken whole (its length clamps to the run-time
    length: ``?`` either way); the rest is computed on two probe lengths and the
    dimensions that differ are ``?`` (ir/dims.py)."""
    results = []
    for n in dims.PROBES:
        items, axis = [], 0
        for item in index:
            width = _consumed(item, dyn_types, len(shape), index)
            if _is_slot(item):
                t = dims.probe(dyn_types[int(item[1:])], n)
                if _is_mask(t):  # x[m] is x[np.nonzero(m)]
                    items += [np.broadcast_to(np.intp(0), (n,))] * t.ndim
                else:
                    items.append(_stand_in(t))
            elif type(item) is slice and axis < len(shape) and shape[axis] is None:
                items.append(slice(None))
            else:
                items.append(item)
            axis += width
        probed = tuple(n if d is None else d for d in shape)
        results.append(AType(_static_selection_shape(probed, tuple(items)), np.dtype(bool)))
    return dims.unprobe(*results).shape


# -- generated source of an index --------------------------------------------------

class _IndexSource(ast.NodeTransformer):
    """Turns the literal of a canonical index into subscript syntax: ``slice(1, None, 2)``
    becomes ``1::2``, ``Ellipsis`` becomes ``...`` and slot ``'#k'`` the k-th name."""

    def __init__(self, names):
        self.names = names

    def visit_Call(self, node):
        parts = [None if isinstance(a, ast.Constant) and a.value is None else a
                 for a in node.args]
        return ast.Slice(*parts)

    def visit_Name(self, node):
        return ast.Constant(Ellipsis) if node.id == "Ellipsis" else node

    def visit_Constant(self, node):
        if type(node.value) is str:
            return ast.Name(self.names[int(node.value[1:])], ast.Load())
        return node


def _index_items(literal: str, names) -> list:
    """The items of an index param (codegen passes its literal source) as AST nodes."""
    tree = ast.parse(literal, mode="eval").body
    if not isinstance(tree, ast.Tuple):
        raise ValueError(f"index param is not a literal tuple: {literal!r}")
    return [_IndexSource(names).visit(item) for item in tree.elts]


def _subscript(items) -> ast.expr:
    return items[0] if len(items) == 1 else ast.Tuple(items, ast.Load())


def subscript_source(value: str, literal: str, names) -> str:
    """``x[1:5:2, i]``: ``value`` indexed as the index param (its ``literal``) says."""
    node = ast.Subscript(ast.Name(value, ast.Load()),
                         _subscript(_index_items(literal, names)), ast.Load())
    return ast.unparse(node)


def index_source(literal: str, names) -> str:
    """The index as an argument: ``(i, 2)``, or ``np.s_[1:5:2, i]`` when it has slices."""
    items = _index_items(literal, names)
    if any(isinstance(item, ast.Slice) for item in items):
        s_ = ast.Attribute(ast.Name("np", ast.Load()), "s_", ast.Load())
        return ast.unparse(ast.Subscript(s_, _subscript(items), ast.Load()))
    return ast.unparse(_subscript(items)) if items else "()"


# -- reading: getitem (basic, a view) and gather (advanced, a copy) -----------------

def _read_infer(t: AType, *dyn: AType, index) -> AType:
    if not isinstance(t, AType) or t.weak:
        raise TypeError(f"cannot index a Python number or a list ({t})")
    return AType(selection_shape(t.shape, index, dyn), t.dtype, False)


def _read_emit(srcs, *, index):
    x, *dyn = srcs
    return subscript_source(x, index, dyn)


def _read_impl(x, *dyn, index):
    return x[resolve(index, dyn)]


def _no_cts(dyn) -> tuple:
    return (None,) * len(dyn)


def _read_jvp(name):
    def jvp(b, t, out, x, *dyn, index):
        return None if t[0] is None else b.emit(name, t[0], *dyn, index=index)
    return jvp


def _read_vjp(update):
    """VJP of a read: ``ct`` put back at the read positions of a zero array; a read
    that only reverses axes (``x[::-1]``, np.flip) is undone by reversing ``ct``."""
    def vjp(b, ct, out, x, *dyn, index):
        if not dyn and _reverses_only(index):
            return (b.getitem(ct, index=index),)
        return (b.emit(update, b.zeros(x), ct, *dyn, index=index), *_no_cts(dyn))
    return vjp


def _reverses_only(index) -> bool:
    """Whether the basic ``index`` keeps every element, reversing some axes."""
    whole, reverse = slice(None), slice(None, None, -1)
    return all(item == whole or item == reverse or item is Ellipsis for item in index)


primitive(
    "getitem", view=True, emit=_read_emit, impl=_read_impl, infer=_read_infer, family=F,
    dynamic="native",
    vjp=_read_vjp("index_add"), jvp=_read_jvp("getitem"),
    examples=[ex((5,), index=(slice(1, 5, 2),)), ex((5,), index=(slice(None, None, -1),)),
              ex((2, 3), index=(Ellipsis, slice(None, None, -1))),
              ex((3, 4), index=(slice(None), 1)), ex((3, 4), index=(-1, slice(-1, 0, -2))),
              ex((2, 3), index=(Ellipsis, None)), ex((2, 3, 4), index=(1, Ellipsis, 2)),
              ex((4, 3), np.array(2), index=(slot(0),)),
              ex((4, 3), np.array(-1), index=(slice(None, None, -1), slot(0)))],
    batch=index_read("getitem"),
)

def _gather_vjp(b, ct, out, x, *dyn, index):
    """Repeats accumulate (``np.add.at``); a mask repeats nothing (``dx[m] += ct``)."""
    update = "scatter_add" if may_repeat(b, dyn) else "index_add"
    return _read_vjp(update)(b, ct, out, x, *dyn, index=index)


primitive(
    "gather", emit=_read_emit, impl=_read_impl, infer=_read_infer, family=F,
    vjp=_gather_vjp, jvp=_read_jvp("gather"), dynamic="native",
    examples=[ex((4,), np.array([0, 0, 2]), index=(slot(0),)),
              ex((4,), np.array([True, False, True, True]), index=(slot(0),)),
              ex((3, 4), np.array([False, True, True, False]), index=(slice(None), slot(0))),
              ex((2, 3, 2), np.array([[True, False, True], [False, False, True]]),
                 index=(slot(0), 0)),
              ex((3, 4), np.array([[0, -1], [1, 1]]), index=(slice(None), slot(0))),
              ex((3, 4), np.array([0, 2, 0]), np.array([3, 1, 3]), index=(slot(0), slot(1))),
              ex((3, 4, 2), np.array([2, 0]), index=(slot(0), slice(None), 1)),
              ex((2, 3, 4), np.array([1, 0]), np.array([2, 2]),
                 index=(slot(0), slice(None), slot(1)))],
    batch=index_read("gather"),
)


def select(b, x, dyn, index):
    """``x[index]`` with getitem or gather, whichever the index needs."""
    return b.emit("gather" if is_advanced(b, dyn) else "getitem", x, *dyn, index=index)


# -- functional updates ------------------------------------------------------------

def _fits(shape, sel) -> bool:
    if None in shape or None in sel:  # a '?' meets anything (NumPy checks at run time)
        lead = len(shape) - len(sel)
        return all(d == 1 for d in shape[:max(lead, 0)]) and all(
            d == 1 or d is None or e is None or d == e
            for d, e in zip(shape[max(lead, 0):], sel[max(-lead, 0):]))
    try:
        return np.broadcast_shapes(shape, sel) == sel
    except ValueError:
        return False


def _update_infer(t: AType, v: AType, *dyn: AType, index) -> AType:
    sel = _read_infer(t, *dyn, index=index).shape
    if not isinstance(v, AType) or not _fits(v.shape, sel):
        raise ValueError(f"cannot put a value of type {v} into a selection of shape {sel}")
    return AType(t.shape, t.dtype, False)


def _update_emit(helper):
    def emit(srcs, *, index):
        x, v, *dyn = srcs
        return f"rt.{helper}({x}, {index_source(index, dyn)}, {v})"
    return emit


def _update_impl(helper):
    def impl(x, v, *dyn, index):
        return helper(x, resolve(index, dyn), v)
    return impl


def _known(v):
    """The concrete value of ``v`` if it is known when compiling (a constant), else None."""
    if not isinstance(v, Value):
        return v
    op = v.producer
    return op.params["value"] if op is not None and op.prim == "const" else None


def _known_survivors(b, shape, dyn, index):
    """The survivors mask when it is known when compiling: True for basic indexing
    and for indices without repeats, an array for constant indices with repeats,
    None when it depends on run-time index values."""
    if not may_repeat(b, dyn):
        return True
    known = [_known(v) for v in dyn]
    if any(k is None for k in known):
        return None
    mask = rt.winners(shape, resolve(index, known))
    return True if mask.all() else mask


def survivors(b, shape, dyn, index):
    """Bool mask over the selection of the writes of ``x[index] = v`` that survive,
    or None when all do (basic indexing, or constant indices without repeats)."""
    mask = _known_survivors(b, shape, dyn, index)
    if mask is True:
        return None
    if mask is None and None in shape:
        raise dims.refused("an assignment through int indices that may repeat", [
            AType(tuple(shape), np.dtype(float))] + [b.type_of(v) for v in dyn], b.loc,
            "leaves the surviving writes unknown here")
    if mask is None:
        return b.index_winners(*dyn, index=index, shape=tuple(shape))
    return b.const(mask, hint="survivors")


def _written(b, ct, x, v, dyn, index):
    """The cotangent of ``v`` in ``x[index] = v`` (or ``+= v``): ``ct`` at the writes
    that survive, summed over the axes ``v`` was broadcast along."""
    sel = select(b, ct, dyn, index)
    keep = survivors(b, b.type_of(x).shape, dyn, index)
    if keep is not None:
        sel = b.where(keep, sel, b.const(0))
    return b.fit(sel, v)


def _sum_vjp(b, ct, out, acc, v, *dyn, index):
    """``out = acc + (v at index)``: linear, ``acc`` gets ``ct`` as it is."""
    return (b.fit(ct, acc), _written(b, ct, acc, v, dyn, index), *_no_cts(dyn))


def _scatter_add_vjp(b, ct, out, acc, v, *dyn, index):
    """Every repeat of an index received its element of ``v``: each gets ``ct`` back."""
    return (b.fit(ct, acc), b.fit(select(b, ct, dyn, index), v), *_no_cts(dyn))


def _add_jvp(name):
    def jvp(b, t, out, acc, v, *dyn, index):
        if t[1] is None:
            return expand_like(b, t[0], out)
        base = b.zeros(out) if t[0] is None else expand_like(b, t[0], out)
        return b.emit(name, base, t[1], *dyn, index=index)
    return jvp


def _set_vjp(b, ct, out, x, v, *dyn, index):
    """``x`` loses its selected positions; ``v`` gets what survives of them."""
    cleared = b.index_set(b.fit(ct, x), b.const(0), *dyn, index=index)
    return (cleared, _written(b, ct, x, v, dyn, index), *_no_cts(dyn))


def _set_jvp(b, t, out, x, v, *dyn, index):
    if t[0] is None and t[1] is None:
        return None
    base = b.zeros(out) if t[0] is None else expand_like(b, t[0], out)
    tv = b.const(0) if t[1] is None else t[1]
    if b.type_of(tv).dtype.kind == "c" and b.type_of(out).dtype.kind != "c":
        tv = b.real(tv)  # complex values written into a real array: their real part
    return b.index_set(base, tv, *dyn, index=index)


def _set_infer(t: AType, v: AType, *dyn: AType, index) -> AType:
    """As NumPy: a complex array written into a real one drops its imaginary part (a
    ComplexWarning), a Python complex is a TypeError."""
    if isinstance(v, AType) and v.weak and v.dtype.kind == "c" and t.dtype.kind != "c":
        raise TypeError("a Python complex cannot be written into a real array: float() "
                        "argument must be a string or a real number, not 'complex'")
    return _update_infer(t, v, *dyn, index=index)


BASIC_UPDATE_EXAMPLES = [
    ex((5,), (2,), index=(slice(1, 5, 2),)), ex((3, 4), (3,), index=(slice(None), 1)),
    ex((3, 4), (4,), index=(slice(None, None, -2),)), ex((3, 4), float, index=(1, Ellipsis)),
    ex((2, 3), (2, 1, 3), index=(slice(None), None)),
    ex((4, 3), (3,), np.array(-1), index=(slot(0),)),
]
ADVANCED_UPDATE_EXAMPLES = [
    ex((4,), (3,), np.array([0, 0, 2]), index=(slot(0),)),
    ex((4,), (2,), np.array([True, False, False, True]), index=(slot(0),)),
    ex((3, 4), (3, 1), np.array([True, False, True, True]), index=(slice(None), slot(0))),
    ex((3, 4), (2, 4), np.array([2, -1]), index=(slot(0),)),
    ex((3, 4), float, np.array([0, 0]), np.array([1, 1]), index=(slot(0), slot(1))),
    ex((3, 4), (3, 1, 1), np.array([[3, 1, 3]]), index=(slice(None), slot(0))),
]

# Statement forms that write an update's result into its input 0 (codegen's buffer
# reuse, passes/reuse.py): ``form(input_sources, *, index) -> statement``, with the
# index param as literal source, as a callable emit receives it. Each does what the
# primitive's ``rt`` helper does after its copy.
INPLACE_FORMS = {
    "index_add": lambda srcs, *, index: (
        f"{subscript_source(srcs[0], index, srcs[2:])} += {srcs[1]}"),
    "index_sub": lambda srcs, *, index: (
        f"{subscript_source(srcs[0], index, srcs[2:])} -= {srcs[1]}"),
    "scatter_add": lambda srcs, *, index: (
        f"np.add.at({srcs[0]}, {index_source(index, srcs[2:])}, {srcs[1]})"),
    "index_set": lambda srcs, *, index: (
        f"{subscript_source(srcs[0], index, srcs[2:])} = {srcs[1]}"),
}


primitive(
    "index_add", dynamic="native", emit=_update_emit("index_add"), impl=_update_impl(rt.index_add),
    infer=_update_infer, family=F, vjp=_sum_vjp, jvp=_add_jvp("index_add"),
    inplace={0: INPLACE_FORMS["index_add"]},
    examples=BASIC_UPDATE_EXAMPLES + ADVANCED_UPDATE_EXAMPLES,
    batch=index_update("index_add"),
)

def _diff_vjp(b, ct, out, acc, v, *dyn, index):
    """``out = acc - (v at index)``: ``acc`` gets ``ct``, ``v`` minus what it wrote."""
    written = _written(b, ct, acc, v, dyn, index)
    return (b.fit(ct, acc), None if written is None else b.neg(written), *_no_cts(dyn))


def _sub_jvp(b, t, out, acc, v, *dyn, index):
    if t[1] is None:
        return expand_like(b, t[0], out)
    base = b.zeros(out) if t[0] is None else expand_like(b, t[0], out)
    return b.emit("index_sub", base, t[1], *dyn, index=index)


# acc[index] -= v: what an index_add of a negated value becomes (passes/negate.py)
primitive(
    "index_sub", dynamic="native", emit=_update_emit("index_sub"), impl=_update_impl(rt.index_sub),
    infer=_update_infer, family=F, vjp=_diff_vjp, jvp=_sub_jvp,
    inplace={0: INPLACE_FORMS["index_sub"]},
    examples=BASIC_UPDATE_EXAMPLES,
    batch=index_update("index_sub"),
)

primitive(
    "scatter_add", dynamic="native", emit=_update_emit("scatter_add"), impl=_update_impl(rt.scatter_add),
    infer=_update_infer, family=F, vjp=_scatter_add_vjp, jvp=_add_jvp("scatter_add"),
    inplace={0: INPLACE_FORMS["scatter_add"]},
    examples=BASIC_UPDATE_EXAMPLES[:2] + ADVANCED_UPDATE_EXAMPLES,
    batch=index_update("scatter_add"),
)

primitive(
    "index_set", dynamic="native", emit=_update_emit("index_set"), impl=_update_impl(rt.index_set),
    infer=_set_infer, family=F, vjp=_set_vjp, jvp=_set_jvp,
    inplace={0: INPLACE_FORMS["index_set"]},
    examples=BASIC_UPDATE_EXAMPLES + ADVANCED_UPDATE_EXAMPLES,
    batch=index_update("index_set"),
)


def _winners_infer(*dyn: AType, index, shape) -> AType:
    return AType(selection_shape(shape, index, dyn), np.dtype(bool), False)


primitive(
    "index_winners", nondiff=True, family=F, infer=_winners_infer, dynamic="native",
    emit=lambda srcs, *, index, shape: f"rt.winners({shape}, {index_source(index, srcs)})",
    impl=lambda *dyn, index, shape: rt.winners(shape, resolve(index, dyn)),
    examples=[ex(np.array([0, 0, 2]), index=(slot(0),), shape=(4,)),
              ex(np.array([[1], [1]]), index=(slice(None), slot(0)), shape=(3, 2))],
    batch=batch_winners,
)


# -- argmax / argmin -----------------------------------------------------------------

def _arg_infer(t: AType, *, axis=None, keepdims=False) -> AType:
    if axis is None:
        shape = (1,) * t.ndim if keepdims else ()
    else:
        (ax,) = normalize_axis(axis, t.ndim)
        shape = tuple(1 if i == ax else d for i, d in enumerate(t.shape) if keepdims or i != ax)
    return AType(shape, np.dtype(np.intp), False)


ARG_EXAMPLES = [ex((4,), axis=None, keepdims=False), ex((2, 3), axis=1, keepdims=False),
                ex((2, 3), axis=0, keepdims=True), ex((2, 3), axis=None, keepdims=True)]

for _name in ("argmax", "argmin"):
    primitive(_name, emit=f"np.{_name}({{0}}, axis={{axis}}, keepdims={{keepdims}})",
              infer=_arg_infer, nondiff=True, family=F, examples=ARG_EXAMPLES, batch=along(_name))
del _name


def _lower_arg(name):
    def lower(b, a, axis=None, out=None, *, keepdims=False):
        if out is not None:
            raise UnsupportedOperationError(f"np.{name}(..., out=) is not supported")
        x = b.const(a)
        if axis is not None:
            (axis,) = normalize_axis(axis, b.type_of(x).ndim)
        return b.emit(name, x, axis=axis, keepdims=bool(keepdims))
    lower.__name__ = f"lower_{name}"
    return lower


lowering(np.argmax)(method("argmax")(_lower_arg("argmax")))
lowering(np.argmin)(method("argmin")(_lower_arg("argmin")))


# -- lowering an index written by the user ------------------------------------------

class _Dyn:
    """A dynamic index item (an int IR value, or an int array) before slots are numbered."""

    def __init__(self, value):
        self.value = value


class _Mask:
    """A boolean mask index item: ``array`` is its value when known, else None."""

    def __init__(self, value, array):
        self.value, self.array = value, array


def _bad_index(what: str) -> IndexError:
    return IndexError(
        f"array indices must be integers, slices, None, ..., or integer or boolean arrays; "
        f"got {what} (convert it with int(...) or .astype(np.int64))")


def _bound(p):
    if p is None or (isinstance(p, (int, np.integer)) and not isinstance(p, (bool, np.bool_))):
        return None if p is None else int(p)
    raise _bad_index(f"a slice bound {p!r}")


def _value_item(b, v: Value):
    t = v.type
    if not isinstance(t, AType):
        raise UnsupportedOperationError(f"cannot index an array with a {t} value")
    if t.dtype.kind == "b" and t.ndim >= 1:
        known = _known(v)
        return _Mask(v, None if known is None else np.asarray(known))
    if t.dtype.kind in "iu":
        return _Dyn(v)
    raise _bad_index(f"a Python {t.python_type.__name__}" if t.weak else f"a {t.dtype.name} value")


def _array_item(b, a: np.ndarray):
    if a.dtype.kind == "b" and a.ndim >= 1:
        return _Mask(a, a)
    if a.dtype.kind in "iu":
        return int(a) if a.ndim == 0 else _Dyn(b.const(a, hint="index"))
    raise _bad_index(f"an array of dtype {a.dtype.name}")


def _list_item(b, items: list):
    if holds_value(items):  # a (nested) list of index values: their stack
        return _value_item(b, b.const(items))
    arr = np.asarray(items)
    return _array_item(b, arr.astype(np.intp) if arr.size == 0 else arr)


def _item(b, item):
    from ..tensor import unwrap
    item = unwrap(item)
    if isinstance(item, Value):
        return _value_item(b, item)
    if item is None or item is Ellipsis:
        return item
    if isinstance(item, slice):
        return slice(_bound(item.start), _bound(item.stop), _bound(item.step))
    if isinstance(item, (bool, np.bool_)):
        raise _bad_index("a bool (use a boolean array, or np.where(cond, ...))")
    if isinstance(item, (int, np.integer)):
        return int(item)
    if isinstance(item, list):
        return _list_item(b, item)
    if isinstance(item, (np.ndarray, np.generic)):
        return _array_item(b, np.asarray(item))
    raise _bad_index(f"a {type(item).__name__} {item!r}")


def parse_items(b, index) -> list:
    """The user's index as a list of static items, :class:`_Dyn` and :class:`_Mask`."""
    return [_item(b, i) for i in (index if isinstance(index, tuple) else (index,))]


def _dynamic_mask(items):
    return next((i for i in items if isinstance(i, _Mask) and i.array is None), None)


def _validate(b, x, items) -> None:
    """Let NumPy check the index against ``x``'s shape (bounds, mask shapes, counts)."""
    def stand_in(item):
        if isinstance(item, _Dyn):
            return _stand_in(b.type_of(item.value))
        if isinstance(item, _Mask) and item.array is None:  # run time: its shape checks
            return np.ones(b.type_of(item.value).shape, dtype=bool)
        return item.array if isinstance(item, _Mask) else item
    types = [b.type_of(x)] + [b.type_of(i.value) for i in items if isinstance(i, (_Dyn, _Mask))]
    if any(t.dynamic for t in types):
        return  # lengths known at run time only: NumPy checks them then
    dummy = np.broadcast_to(np.empty((), dtype=bool), b.type_of(x).shape)
    dummy[tuple(stand_in(i) for i in items)]


def canonical(b, x, items) -> tuple[tuple, list]:
    """``(index, dyn)``: the items with known masks expanded to ``np.nonzero`` arrays
    and dynamic items replaced by numbered slots."""
    _validate(b, x, items)
    index, dyn = [], []
    for item in items:
        if isinstance(item, _Mask) and item.array is None:  # a slot, read as a mask
            parts = [_Dyn(item.value)]
        elif isinstance(item, _Mask):
            parts = [_Dyn(b.const(a, hint="nonzero")) for a in np.nonzero(item.array)]
        else:
            parts = [item]
        for part in parts:
            if isinstance(part, _Dyn):
                index.append(slot(len(dyn)))
                dyn.append(part.value)
            else:
                index.append(part)
    return tuple(index), dyn


def array_operand(b, x):
    """``x`` as an array value (a Python number or list cannot be indexed)."""
    x = b.const(x)
    t = b.type_of(x)
    if not isinstance(t, AType) or t.weak:
        raise UnsupportedOperationError(f"cannot index a value of type {t}",
                                        hint="only arrays can be indexed")
    return x


def _whole(index, dyn) -> bool:
    return not dyn and all(i is Ellipsis or i == slice(None) for i in index)


@method("__getitem__")
def lower_getitem(b, x, index):
    """``x[index]``: basic indexing is a view (getitem), int arrays gather."""
    x = array_operand(b, x)
    items = parse_items(b, index)
    index, dyn = canonical(b, x, items)
    if _whole(index, dyn) and b.type_of(x).ndim:
        return x
    return select(b, x, dyn, index)


@method("__setitem__")
def lower_setitem(b, x, index, value):
    """``x[index] = value`` as a new array (the caller rebinds the name to it)."""
    x, v = array_operand(b, x), b.const(value)
    items = parse_items(b, index)
    if _where_update(b, x, items, v):
        return _masked_update(b, x, items[0], v)
    index, dyn = canonical(b, x, items)
    return b.index_set(x, _without_leading_ones(b, v, x, dyn, index), *dyn, index=index)


def _without_leading_ones(b, v, x, dyn, index):
    """``v`` without the leading length-1 axes it has beyond the selection's dimensions,
    which NumPy drops in ``x[index] = v`` (``y[0] = row[None, :]``)."""
    vt = b.type_of(v)
    if not isinstance(vt, AType):
        return v
    sel = selection_shape(b.type_of(x).shape, index, [b.type_of(d) for d in dyn])
    extra = vt.ndim - len(sel)
    if extra <= 0 or any(d != 1 for d in vt.shape[:extra]):
        return v
    return reshape_to(b, v, vt.shape[extra:])


def lower_augmented_setitem(b, x, index, value, combine=None):
    """``x[index] op= value`` as a new array, exactly as NumPy does it: the selection's
    new values are ``combine(b, current, value)`` (None: ``+``), and with an int array
    that repeats a position the position is written once (the last write wins).

    ``+=`` without repeats is one ``index_add``, which adds in place of a dead buffer.
    """
    x, v = array_operand(b, x), b.const(value)
    items = parse_items(b, index)
    if _where_update(b, x, items, v):
        return _masked_update(b, x, items[0], (combine or _plus)(b, x, v))
    index, dyn = canonical(b, x, items)
    if combine is None and _known_survivors(b, b.type_of(x).shape, dyn, index) is True:
        return b.index_add(x, v, *dyn, index=index)
    current = select(b, x, dyn, index)
    return b.index_set(x, (combine or _plus)(b, current, v), *dyn, index=index)


def _plus(b, current, value):
    return b.add(current, value)


def lower_setitem_add(b, x, index, value):
    """``x[index] += value`` (see :func:`lower_augmented_setitem`)."""
    return lower_augmented_setitem(b, x, index, value)


def _where_update(b, x, items, v) -> bool:
    """Whether ``x[mask] = v`` is ``np.where(mask, v, x)``: a run-time mask that is the
    whole index, of a static shape, and a single value (the shapes stay static); other
    masked updates are ``index_set``/``index_add`` with the mask as their index."""
    mask = _dynamic_mask(items)
    if mask is None or len(items) != 1 or b.type_of(v).ndim:
        return False
    mt, xt = b.type_of(mask.value), b.type_of(x)
    if mt.dynamic or xt.dynamic:
        return False
    if mt.shape != xt.shape[:mt.ndim]:
        raise IndexError(f"a boolean mask of shape {mt.shape} does not fit an array of "
                         f"shape {xt.shape}")
    return True


def _masked_update(b, x, mask, new):
    """``x`` with ``new`` where a run-time ``mask`` holds, as ``np.where`` (static shape)."""
    xt, mt = b.type_of(x), b.type_of(mask.value)
    m = reshape_to(b, mask.value, mt.shape + (1,) * (xt.ndim - mt.ndim))
    out = b.where(m, new, x)
    return out if b.type_of(out) == xt else b.cast(out, dtype=xt.dtype)


@lowering(np.take)
@method("take")
def lower_take(b, a, indices, axis=None, out=None, mode="raise"):
    """``np.take(a, indices, axis)`` as ``a[:, ..., indices]`` (``axis=None``: flattened);
    always a new array, as NumPy's; ``mode`` 'wrap'/'clip' first maps the indices."""
    if out is not None or mode not in ("raise", "wrap", "clip"):
        raise UnsupportedOperationError(f"np.take(..., out=/mode={mode!r}) is not supported",
                                        hint="mode may be 'raise', 'wrap' or 'clip'")
    x = array_operand(b, a)
    if axis is None:
        x, axis = reshape_to(b, x, (-1,)), 0
    (axis,) = normalize_axis(axis, b.type_of(x).ndim)
    if mode != "raise":
        indices = _take_mode(b, indices, b.type_of(x).shape[axis], mode)
    result = lower_getitem(b, x, (slice(None),) * axis + (indices,))
    return b.copy(result) if _basic_view(b, result) else result


def _basic_view(b, v) -> bool:
    """Whether ``v`` is a view made by basic indexing (np.take's result never is)."""
    if isinstance(v, Value):
        return v.producer is not None and v.producer.prim == "getitem" and v.type.ndim > 0
    return isinstance(v, np.ndarray) and v.base is not None


def _take_mode(b, indices, n, mode):
    """Indices mapped into ``[0, n)`` as np.take's 'wrap' (modulo) or 'clip' does."""
    if isinstance(indices, Value):
        if mode == "wrap":
            return b.mod(indices, b.const(n))
        return b.minimum(b.maximum(indices, b.const(0)), b.const(n - 1))
    idx = np.asarray(indices)
    return np.mod(idx, n) if mode == "wrap" else np.clip(idx, 0, n - 1)


# -- accumulating adjoints into one buffer ------------------------------------------

def accumulate_into(b, acc, ct):
    """``acc + ct`` as one update of ``acc`` when ``ct`` is a read's adjoint (an update
    of a fresh ``zeros_like``); None otherwise.

    Slice adjoints then add into one array instead of a zero-filled array each:
    ``index_add(zeros_like(x), ct, i=...)`` accumulated onto ``acc`` becomes
    ``index_add(acc, ct, i=...)``, and the zeros become dead code.
    """
    op = ct.producer if isinstance(ct, Value) else None
    if op is None or op.prim not in ("index_add", "scatter_add"):
        return None
    zeros, v, *dyn = op.inputs
    if zeros.producer is None or zeros.producer.prim != "zeros_like":
        return None
    if b.type_of(acc) != b.type_of(ct):
        return None
    return b.emit(op.prim, acc, v, *dyn, **op.params)


for _name in ("index_add", "scatter_add"):
    ACCUMULATE_INTO[_name] = accumulate_into
