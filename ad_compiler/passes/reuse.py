"""Buffer reuse: an elementwise op may write its result into a dead input's buffer.

At large sizes the cost of an adjoint is dominated by allocating (and faulting
in) a fresh array per op. When an input of an elementwise op is an array this
function allocated itself, is not needed after the op, and shares its memory
with no value that is still needed, the op can write into it. The IR stays SSA:
:func:`reuse_buffers`, the last pass, records such an op in ``Function.reuse``
(the IR text shows it as ``{out=%name}``, the input whose buffer takes the result),
and codegen writes it in place, still one name per value::

    %h = tanh %matmul {out=%matmul}       ->   h = np.tanh(matmul, out=matmul)
    %dx_2 = add %dx, %dx_1 {out=%dx}      ->   dx += dx_1

The result keeps its buffer's name only when both are the same quantity (one
hint names both, :func:`same_quantity`), so a name never stands for two quantities. A statement-only form (``dx[i] += g``) is
used only then, or into an empty accumulator (``zeros``/``zeros_like``), which takes
the result's hint: ``dx = np.zeros_like(x); dx[i] += g``.

Rules (for ops of the function's top-level block and the bodies of ``for`` loops):

* a *buffer* is a value produced here by a primitive that allocates (not an
  argument, not a ``const`` from the namespace, not a ``view`` primitive's result,
  not 0-d: NumPy gives scalars there, which are immutable);
* a view (``view=True`` primitives: reshape, transpose, ...) joins the alias
  group of its input; a buffer is dead at op *i* when every member of its group
  is last used at or before *i* (uses inside regions count at their op; the
  function's outputs count as used at the end);
* the result of an ``if``/``for``/``while`` may *be* a value of the block (a
  loop's initial value, an outer value a region yields, or a view of one): that
  value lives as long as the result; a ``for`` body may still update its carried
  value in place when only the loop's own result holds the initial buffer;
* the op's result must have exactly the buffer's shape and dtype, known when
  compiling (a run-time length ``?`` only through ``dims.shaped_like``; no casting,
  no broadcasting into it), and the primitive must have an in-place form
  (``Primitive.inplace``, derived from its template).
"""
from __future__ import annotations

import re

from ..ad import rules
from ..ir import dims
from ..ir.control import free_values
from ..ir.core import AType, Block, Function
from ..ir.names import same_quantity

_END = float("inf")

#: producers of an empty accumulator, which may take the name of what is added into it
_EMPTY = {"zeros", "zeros_like", "full", "full_like"}


def reuse_buffers(fn: Function) -> Function:
    """``fn`` with ``fn.reuse``: ``{id(op): k}`` for the ops that write their result into
    input ``k``'s buffer. The ops are left as they are: an optimised function may be
    inlined into another one (a gradient called inside a differentiated function),
    where other buffers are dead."""
    reuse = plan(fn)
    fn.reuse = {id(op): reuse[id(op)] for op in fn.body.walk()
                if id(op) in reuse and _truthful(op, reuse[id(op)])}
    return fn


def statement_only(form) -> bool:
    """Whether the in-place ``form`` is a statement with no value (``x[i] += v``),
    not a call returning the buffer (``np.exp(x, out=x)``) or ``x op= y``."""
    return callable(form) or re.fullmatch(r"\{\d\} [-+*/]= \{\d\}", form) is None \
        and "out=" not in form


def _truthful(op, k: int) -> bool:
    """Whether the result can be written into input ``k`` with one name per quantity."""
    buffer = op.inputs[k]
    if same_quantity(buffer, op.result):
        return True
    if not statement_only(rules.get(op.prim).inplace[k]):
        return True   # bound to its own name: h = np.tanh(matmul, out=matmul)
    producer = buffer.producer
    if producer is not None and producer.prim in _EMPTY:
        buffer.hint = op.result.hint   # dx = np.zeros_like(x); dx[i] += g
        return True
    return False


def plan(fn: Function) -> dict[int, int]:
    """``{id(op): k}`` for the ops that may write their result into input ``k``."""
    reuse: dict[int, int] = {}
    _plan_block(fn.body, set(), reuse)
    return reuse


def _plan_block(block: Block, owned_args: set, reuse: dict) -> None:
    """Plan ``block``; ``owned_args`` are its arguments whose buffers it may overwrite
    (a ``for`` body's carried accumulators, see :func:`_owned_carried`)."""
    root = _alias_roots(block)
    base = _group_last_use(block, root, owned_args)
    edges = _region_edges(block, root)
    last = _extend(base, edges)
    all_owned, shared = _owned_buffers(block)
    owned = (all_owned - shared) | owned_args
    for i, op in enumerate(block.ops):
        if op.prim == "for":
            def dead_but_for_loop(j, v, op=op, i=i):
                return _extend(base, edges, skip=(id(op), j))[root[id(v)]] == i
            _plan_block(op.regions[0], _owned_carried(op, all_owned, dead_but_for_loop, root),
                        reuse)
        if op.regions or len(op.results) != 1:
            continue
        forms = rules.get(op.prim).inplace if op.prim in rules.PRIMITIVES else {}
        for k in sorted(forms):
            v = op.inputs[k]
            if forms[k] == "{1} *= {0}" and op.result.type.dtype.kind == "c":
                continue  # complex b * a may differ from a * b in the last bit

            # other inputs may be this buffer too (x + x), and the whole group is dead
            # after this op; a *view* of it among the other inputs is read while the
            # buffer is written, which only NumPy's ufuncs make safe (an assignment
            # ``x[i] = x[j]`` copies element by element)
            if id(v) in owned and v.type == op.result.type \
                    and (not v.type.dynamic or dims.shaped_like(op.result, v)) \
                    and last[root[id(v)]] == i \
                    and not _reads_a_view(op, k, root):
                reuse[id(op)] = k
                break


def _reads_a_view(op, k: int, root) -> bool:
    """Whether an input other than ``k`` is a view of input ``k``'s buffer, for an op
    whose in-place form is not a ufunc call from its template (those handle
    overlapping memory)."""
    if isinstance(rules.get(op.prim).emit, str):
        return False
    v = op.inputs[k]
    return any(w is not v and root.get(id(w)) == root.get(id(v))
               for j, w in enumerate(op.inputs) if j != k)


def _owned_carried(op, owned: set, dead_but_for_loop, root: dict) -> set:
    """The carried arguments of the ``for`` op that its body may overwrite: the initial
    buffer is ours and dies at the loop (``dead_but_for_loop(j, init)``: but for the
    loop's own result, which takes the buffer over), the body does not
    also capture it or a view of it (``root``: the outer block's alias groups; a view
    read while the body writes the buffer would see the writes), and every iteration
    yields a fresh buffer for it that goes nowhere else (not stacked into a list, not
    yielded twice)."""
    k = op.params["n_carried"]
    region = op.regions[0]
    args, init, yields = region.args[1:1 + k], op.inputs[1:1 + k], region.results
    body_owned, body_shared = _owned_buffers(region)
    captured = {root.get(id(v), id(v)) for v in free_values(op)}
    result = set()
    for j in range(k):
        v, nxt = init[j], yields[j]
        fresh = nxt is args[j] or (id(nxt) in body_owned - body_shared)
        if (id(v) in owned and root.get(id(v), id(v)) not in captured
                and sum(x is v for x in op.inputs) == 1
                and fresh and sum(y is nxt for y in yields) == 1 and dead_but_for_loop(j, v)):
            result.add(id(args[j]))
    return result


def _alias_roots(block: Block) -> dict[int, int]:
    """Each value's alias-group root: a view's root is its input's root."""
    root: dict[int, int] = {id(a): id(a) for a in block.args}
    for op in block.ops:
        prim = rules.PRIMITIVES.get(op.prim)
        for r in op.results:
            if prim is not None and op.inputs and prim.aliases(op):
                root[id(r)] = root.get(id(op.inputs[0]), id(op.inputs[0]))
            else:
                root[id(r)] = id(r)
    return root


def _region_edges(block: Block, root: dict) -> list:
    """``(result group, source group, tag)`` for each way a region op's result may share
    memory with a value of ``block``: a loop's initial value (``tag`` is ``(id(op), j)``
    for a ``for`` op's carried value ``j``, else None) or an outer value a region yields.
    In op order."""
    edges = []
    for op in block.ops:
        for j, (r, srcs) in enumerate(zip(op.results, _region_sources(op))):
            init = op.inputs[1 + j] if op.prim == "for" and j < op.params["n_carried"] else None
            for s in srcs:
                tag = (id(op), j) if init is not None and s == id(init) else None
                edges.append((root[id(r)], root.get(s, s), tag))
    return edges


def _extend(last: dict, edges: list, skip=None) -> dict:
    """``last`` where each source group lives as long as the results that may share its
    memory (all ``edges`` but the one tagged ``skip``)."""
    last = dict(last)
    for r, s, tag in reversed(edges):   # a result comes after its sources: one sweep
        if tag is None or tag != skip:
            last[s] = max(last.get(s, -1), last[r])
    return last


def _region_sources(op) -> list[set]:
    """Per result of ``op``, the ids of the values of its block whose memory it may
    share: a loop's initial value, and what its regions yield from outside."""
    if not op.regions:
        return []
    sources: list[set] = [set() for _ in op.results]
    if op.prim in ("for", "while"):
        init = op.inputs[1:] if op.prim == "for" else op.inputs
        for j, v in enumerate(init):
            sources[j].add(id(v))
        # what the body yields (a tape stacks it) may be a carried argument, which on
        # the first iteration is the loop's initial value
        body = op.regions[-1]
        carried = body.args[1:] if op.prim == "for" else body.args
        first = {id(a): id(v) for a, v in zip(carried, init)}
        body_root = _alias_roots(body)
        for j, y in enumerate(body.results[:len(sources)]):
            g = body_root.get(id(y), id(y))
            if g in first:
                sources[j].add(first[g])
    for region in (op.regions if op.prim == "if" else op.regions[-1:]):
        outer = _outer_sources(region)
        for j, y in enumerate(region.results[:len(sources)]):
            sources[j] |= outer(y)
    return sources


def _outer_sources(region: Block):
    """``outer(v)``: the ids of the values outside ``region`` that its value ``v`` may
    share memory with (``v`` itself, a view of one, or a nested region op's result)."""
    root = _alias_roots(region)
    inner = {id(a) for a in region.args} | {id(r) for op in region.ops for r in op.results}
    through: dict[int, set] = {}   # group root -> outer ids reached through region ops
    for op in region.ops:
        for r, srcs in zip(op.results, _region_sources(op)):
            acc = through.setdefault(root[id(r)], set())
            for s in srcs:
                g = root.get(s, s)
                acc |= through.get(g, set()) if g in inner else {g}

    def outer(v) -> set:
        g = root.get(id(v), id(v))
        return set(through.get(g, ())) if g in inner else {g}
    return outer


def _group_last_use(block: Block, root, owned_args=frozenset()) -> dict[int, float]:
    last: dict[int, float] = {}
    for i, op in enumerate(block.ops):
        for v in _uses(op):
            g = root.get(id(v), id(v))
            last[g] = max(last.get(g, -1), i)
        for r in op.results:
            last.setdefault(root[id(r)], -1)
    for v in block.results:
        last[root.get(id(v), id(v))] = _END
    for a in block.args:
        if id(a) not in owned_args:
            last[root[id(a)]] = _END  # arguments belong to the caller: never overwritten
    return last


def _uses(op):
    yield from op.inputs
    for region in op.regions:
        for inner in region.walk():
            yield from inner.inputs
        yield from region.results


def _owned_buffers(block: Block) -> tuple[set, set]:
    """(values this block allocates, the ones among all values that if/loops use)."""
    owned = set()
    shared = set()  # used by if/loops: a branch may yield it, a loop may stack it in a list
    for op in block.ops:
        if op.regions:
            shared.update(id(v) for v in list(op.inputs) + free_values(op))
        prim = rules.PRIMITIVES.get(op.prim)
        if prim is None or prim.aliases(op) or op.prim == "const" or op.regions:
            continue
        for r in op.results:
            if isinstance(r.type, AType) and not r.type.weak and r.type.ndim >= 1:
                owned.add(id(r))
    return owned, shared
