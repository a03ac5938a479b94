"""``einsum``: one primitive for every Einstein summation, and ``np.einsum`` / ``ops.einsum``.

Invariants:

* the primitive's ``subscripts`` param is canonical: explicit output (``->``),
  ellipses spelled out as letters no operand uses (uppercase from ``Z`` down),
  so every axis of every operand has a letter; NumPy computes the same result
  from it (a letter of size 1 broadcasts, as an ellipsis axis does);
* the VJP for operand ``k`` is again one ``einsum``: of the cotangent with the
  other operands, into ``k``'s letters. A letter repeated in ``k`` (a diagonal,
  ``'ii->'``) is renamed on its second occurrence and tied to the first by an
  identity-matrix operand, which puts the cotangent on the diagonal. A letter
  found only in ``k`` (summed there) is broadcast back; ``fit`` sums axes ``k``
  broadcast and casts to its dtype;
* the JVP is the sum over operands of the same ``einsum`` with that operand
  replaced by its tangent;
* an einsum of one operand may be a view of it (``'ij->ji'``, ``'ii->i'``);
* the result dtype is ``np.einsum``'s: operands are arrays there, so a Python
  float operand is a float64 array (``np.einsum(',i', 2.0, x32)`` is float64).
"""
from __future__ import annotations


import numpy as np

from ..ad.rules import ex, lowering, primitive
from ..errors import UnsupportedOperationError
from ..ir.core import AType
from ._batch import batch_einsum
from .shape import transpose_to

F = "linalg"
LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"  # string.ascii_letters


# -- parsing ---------------------------------------------------------------------------

def _split(subscripts: str, count: int) -> tuple[list[str], str | None]:
    if not isinstance(subscripts, str):
        raise TypeError(f"einsum: subscripts must be a string, got {type(subscripts).__name__}")
    text = subscripts.replace(" ", "")
    bad = set(text) - set(LETTERS + ",.->")
    if bad:
        raise ValueError(f"einsum: invalid character {sorted(bad)[0]!r} in subscripts "
                         f"{subscripts!r}")
    lhs, arrow, out = text.partition("->")
    inputs = lhs.split(",")
    if len(inputs) != count:
        raise ValueError(f"einsum: subscripts {subscripts!r} name {len(inputs)} operand(s), "
                         f"{count} given")
    return inputs, (out if arrow else None)


def _expand(term: str, ndim: int, ell: str, where: str) -> str:
    """``term`` with its ``...`` replaced by the last ``ndim - letters`` ellipsis letters."""
    if term.count("...") > 1 or term.replace("...", "").count(".") or "-" in term or ">" in term:
        raise ValueError(f"einsum: invalid subscripts {where!r}")
    if "..." not in term:
        if len(term) != ndim:
            raise ValueError(f"einsum: subscripts {term!r} name {len(term)} axes of an operand "
                             f"with {ndim}")
        return term
    n = ndim - (len(term) - 3)
    if n < 0:
        raise ValueError(f"einsum: subscripts {term!r} name more axes than the operand's {ndim}")
    return term.replace("...", ell[len(ell) - n:] if n else "")


def canonical(subscripts: str, types) -> str:
    """``subscripts`` for operands of ``types`` in the explicit, ellipsis-free form.

    >>> canonical("ij,jk", [AType((2, 3), np.dtype('f8')), AType((3, 4), np.dtype('f8'))])
    'ij,jk->ik'
    >>> f8 = np.dtype('f8')
    >>> canonical("...ij,...jk->...ik", [AType((5, 2, 3), f8), AType((3, 4), f8)])
    'Zij,jk->Zik'
    """
    inputs, out = _split(subscripts, len(types))
    free = [c for c in reversed(LETTERS) if c not in subscripts]
    nell = max([t.ndim - (len(s) - 3) for s, t in zip(inputs, types) if "..." in s], default=0)
    ell = "".join(reversed(free[:max(nell, 0)]))
    terms = [_expand(s, t.ndim, ell, subscripts) for s, t in zip(inputs, types)]
    if out is None:
        letters = "".join(terms)
        once = (c for c in set(letters) if letters.count(c) == 1 and c not in ell)
        out = ell + "".join(sorted(once))
    elif "..." in out or not ell:
        out = _expand(out, len(out.replace("...", "")) + len(ell), ell, subscripts)
    else:
        raise ValueError(f"einsum: subscripts {subscripts!r}: the ellipsis axes need '...' in "
                         "the output")
    _check_output(out, "".join(terms), subscripts)
    return ",".join(terms) + "->" + out


def _check_output(out: str, letters: str, subscripts: str) -> None:
    for c in out:
        if out.count(c) > 1:
            raise ValueError(f"einsum: output subscript {c!r} appears more than once in "
                             f"{subscripts!r}")
        if c not in letters:
            raise ValueError(f"einsum: output subscript {c!r} appears in no input of "
                             f"{subscripts!r}")


def parse(subscripts: str) -> tuple[list[str], str]:
    """The operand terms and output term of canonical subscripts."""
    lhs, _, out = subscripts.partition("->")
    return lhs.split(","), out


def letter_sizes(terms, shapes) -> dict[str, int]:
    """The size of each letter; sizes 1 broadcast, others must agree (as in NumPy)."""
    sizes: dict[str, int] = {}
    for k, (term, shape) in enumerate(zip(terms, shapes)):
        seen: dict[str, int] = {}
        for c, d in zip(term, shape):
            if seen.setdefault(c, d) != d:
                raise ValueError(f"einsum: operand {k} repeats {c!r} on axes of sizes "
                                 f"{seen[c]} and {d}")
            if sizes.get(c, 1) not in (1, d) and d != 1:
                raise ValueError(f"einsum: operands disagree on the size of {c!r}: "
                                 f"{sizes[c]} and {d}")
            sizes[c] = max(sizes.get(c, 1), d)
    return sizes


# -- the primitive ----------------------------------------------------------------------

def _infer(*types: AType, subscripts: str, optimize=False) -> AType:
    terms, out = parse(subscripts)
    if len(terms) != len(types):
        raise ValueError(f"einsum: {subscripts!r} names {len(terms)} operands, {len(types)} given")
    sizes = letter_sizes(terms, [t.shape for t in types])
    sample = [np.ones((), t.dtype) for t in types]
    dtype = np.einsum(",".join("" for _ in types) + "->", *sample).dtype
    return AType(tuple(sizes[c] for c in out), dtype, False)


def _fresh(used: str):
    return iter(c for c in LETTERS if c not in used)


def _operand_vjp(b, ct, k, xs, subscripts, optimize):
    """The cotangent of operand ``k``: one einsum, then broadcast and ``fit``."""
    terms, out = parse(subscripts)
    xt = b.type_of(xs[k])
    fresh, target, eyes = _fresh(subscripts), "", []
    for c, d in zip(terms[k], xt.shape):
        if c in target:  # a diagonal: a new letter, tied to c by an identity matrix
            f = next(fresh, None)
            if f is None:
                raise UnsupportedOperationError(f"einsum {subscripts!r}: too many letters to "
                                                "differentiate a diagonal")
            eyes.append((c + f, b.const(np.eye(d, dtype=b.type_of(ct).dtype), hint="eye")))
            c = f
        target += c
    operands = [(out, ct)] + [(t, x) for j, (t, x) in enumerate(zip(terms, xs)) if j != k] + eyes
    present = "".join(t for t, _ in operands)
    kept = "".join(c for c in target if c in present)
    if len(operands) == 1 and sorted(out) == sorted(kept):  # a permutation: its inverse
        g = transpose_to(b, ct, tuple(out.index(c) for c in kept))
    else:
        g = b.einsum(*(v for _, v in operands), optimize=optimize,
                     subscripts=",".join(t for t, _ in operands) + "->" + kept)
    if kept != target:  # letters summed inside operand k alone: broadcast back
        sizes = dict(zip(target, xt.shape))
        g = b.reshape(g, shape=tuple(sizes[c] if c in kept else 1 for c in target))
        g = b.broadcast_to(g, shape=xt.shape)
    return b.fit(g, xs[k])


def _vjp(b, ct, out, *xs, subscripts, optimize=False):
    return tuple(_operand_vjp(b, ct, k, xs, subscripts, optimize) if b.type_of(x).is_float
                 else None for k, x in enumerate(xs))


def _jvp(b, t, out, *xs, subscripts, optimize=False):
    terms = [b.einsum(*xs[:k], tk, *xs[k + 1:], subscripts=subscripts, optimize=optimize)
             for k, tk in enumerate(t) if tk is not None]
    if not terms:
        return None
    total = terms[0]
    for term in terms[1:]:
        total = b.add(total, term)
    return total


def _emit(srcs, *, subscripts, optimize):
    tail = "" if optimize == "(False)" else f", optimize={optimize}"
    return f"np.einsum({subscripts}, {', '.join(srcs)}{tail})"


primitive(
    # one operand: NumPy returns a view when nothing is summed ('ij->ji', 'ii->i')
    "einsum", family=F, view=lambda op: len(op.inputs) == 1, infer=_infer, vjp=_vjp, jvp=_jvp,
    emit=_emit,
    impl=lambda *xs, subscripts, optimize=False: np.einsum(subscripts, *xs, optimize=optimize),
    examples=[ex((2, 3), (3, 4), subscripts="ij,jk->ik"),
              ex((3, 3), subscripts="ii->"), ex((3, 3), subscripts="ii->i"),
              ex((2, 2, 3), subscripts="iij->j"), ex((2, 3), subscripts="ij->ji"),
              ex((2, 3), subscripts="ij->i"), ex((3,), (3,), subscripts="i,i->"),
              ex((3,), (2,), subscripts="i,j->ij"), ex(float, (3,), subscripts=",i->i"),
              ex((2, 2, 3), (2, 3, 2), subscripts="bij,bjk->bik"),
              ex((1, 3), (2, 3), subscripts="ij,ij->ij"),
              ex((2, 3), (3, 4), (4,), subscripts="ij,jk,k->i", optimize=True),
              ex((3, 3), (3,), subscripts="ii,i->i")],
    batch=batch_einsum,
)


# -- user-facing spellings ----------------------------------------------------------------

def _sublist_subscripts(args) -> tuple[str, list]:
    """``einsum(a, [0, 1], b, [1, 2], [0, 2])``: the string form and the operands."""
    def term(sub):
        return "".join("..." if s is Ellipsis else LETTERS[int(s)] for s in sub)
    operands, terms = list(args[0::2]), [term(s) for s in args[1::2]]
    if len(args) % 2:
        return ",".join(terms) + "->" + term(args[-1]), operands[:-1]
    return ",".join(terms), operands


def einsum_of(b, subscripts, operands, optimize=False):
    """Emit the einsum of ``operands`` (values or constants) under user ``subscripts``."""
    xs = [b.const(x) for x in operands]
    if isinstance(optimize, (list, tuple)) or optimize not in (False, True, "greedy", "optimal"):
        raise UnsupportedOperationError(f"einsum(optimize={optimize!r}) is not supported",
                                        hint="pass optimize=True, False, 'greedy' or 'optimal'")
    return b.einsum(*xs, subscripts=canonical(subscripts, [b.type_of(x) for x in xs]),
                    optimize=optimize)


@lowering(np.einsum)
def lower_einsum(b, *args, out=None, optimize=False, dtype=None, order="K", casting="safe"):
    """``np.einsum(subscripts, *operands, optimize=...)``, the sublist form too."""
    if out is not None or dtype is not None or order != "K" or casting != "safe":
        raise UnsupportedOperationError("np.einsum with out=, dtype=, order= or casting= is "
                                        "not supported", hint="cast the operands or the result")
    if not args:
        raise TypeError("np.einsum needs subscripts and operands")
    if isinstance(args[0], str):
        return einsum_of(b, args[0], args[1:], optimize)
    subscripts, operands = _sublist_subscripts(args)
    return einsum_of(b, subscripts, operands, optimize)
