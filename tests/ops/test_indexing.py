"""Indexing: reads ``x[idx]``, writes ``x[idx] = v`` and ``x[idx] += v``, ``np.take``,
``np.argmax``/``np.argmin``, checked against NumPy.

Each case lowers an indexing expression into IR (run by the reference
interpreter) and eagerly, compares both with NumPy evaluating the same
expression, and checks the gradient of the lowered IR against central finite
differences of the NumPy expression in float64. The primitives' own rules are
also checked by the registry test (test_rules.py) through their examples.
"""
from __future__ import annotations

import doctest

import numpy as np
import pytest

import ad_compiler.ops  # noqa: F401  (registers the primitives)
from ad_compiler import runtime as rt
from ad_compiler.codegen.emit import to_source
from ad_compiler.errors import UnsupportedOperationError
from ad_compiler.ir.builder import EagerBuilder
from ad_compiler.ir.core import AType
from ad_compiler.ir.verifier import verify
from ad_compiler.ops import indexing as ix


MASK = np.array([True, False, True, True])
MASK2 = np.array([[False, True, True], [True, False, False]])
MASK3 = np.array([True, False, True])


def read(index):
    """A case reading ``x[index]`` with a static index."""
    return (lambda b, x: ix.lower_getitem(b, x, index)), (lambda x: x[index])


def write(index, add=False):
    """A case for ``x[index] = v`` (or ``+= v``) with a static index."""
    def oracle(x, v):
        y = x.copy()
        if add:
            y[index] += v
        else:
            y[index] = v
        return y
    lower = ix.lower_setitem_add if add else ix.lower_setitem
    return (lambda b, x, v: lower(b, x, index, v)), oracle


def _set(x, index, v, add=False):
    y = x.copy()
    if add:
        y[index] += v
    else:
        y[index] = v
    return y


# (id, lowering on builder values, inputs: a shape is a random float array, float a
# random Python float, anything else is passed as given (a dynamic index), oracle)
CASES = [
    ("int", *read(2), [(5,)]),
    ("negative-int", *read(-1), [(3, 4)]),
    ("slice-step", *read(slice(1, 5, 2)), [(7,)]),
    ("reverse", *read(slice(None, None, -1)), [(5,)]),
    ("negative-step-bounds", *read(slice(-1, 0, -2)), [(6,)]),
    ("column", *read((slice(None), 1)), [(3, 4)]),
    ("ellipsis-newaxis", *read((Ellipsis, None)), [(2, 3)]),
    ("mixed-basic", *read((None, 1, slice(None, None, -2), slice(-3, None))), [(3, 4, 5)]),
    ("numpy-int", *read(np.int64(1)), [(3, 2)]),
    ("list-repeats", *read([0, 0, 2]), [(4,)]),
    ("array-2d", *read(np.array([[0, 1], [2, 2]])), [(3, 4)]),
    ("array-column", *read((slice(None), [3, 0, 3])), [(3, 4)]),
    ("two-arrays", *read(([0, 1, 0], [2, 2, -2])), [(3, 4)]),
    ("arrays-split-by-slice", *read(([1, 0], slice(None), [3, 3])), [(2, 3, 4)]),
    ("array-and-int", *read(([2, 0, 2], slice(1, None), -1)), [(3, 4, 2)]),
    ("static-mask", *read(MASK), [(4,)]),
    ("static-mask-2d", *read(MASK2), [(2, 3)]),
    ("mask-on-axis1", *read((slice(None), MASK3)), [(2, 3)]),
    ("mask-and-int", *read((MASK3, 1)), [(3, 4)]),
    ("dynamic-int", lambda b, x, i: ix.lower_getitem(b, x, i), lambda x, i: x[i], [(4, 3), 2]),
    ("dynamic-negative-int", lambda b, x, i: ix.lower_getitem(b, x, i), lambda x, i: x[i],
     [(4, 3), -1]),
    ("dynamic-int-column", lambda b, x, i: ix.lower_getitem(b, x, (slice(None), i)),
     lambda x, i: x[:, i], [(3, 4), 3]),
    ("dynamic-0d-int-array", lambda b, x, i: ix.lower_getitem(b, x, (i, slice(1, None))),
     lambda x, i: x[i, 1:], [(4, 3), np.array(1)]),
    ("dynamic-int-array", lambda b, x, i: ix.lower_getitem(b, x, i), lambda x, i: x[i],
     [(5,), np.array([4, 0, 4, 1])]),
    ("dynamic-array-and-slice", lambda b, x, i: ix.lower_getitem(b, x, (i, slice(None, None, -1))),
     lambda x, i: x[i, ::-1], [(3, 4), np.array([[2], [2]])]),
    ("list-of-values", lambda b, x, i, j: ix.lower_getitem(b, x, [i, j, i]),
     lambda x, i, j: x[[i, j, i]], [(4, 2), 3, 0]),
    ("np.take-axis1", lambda b, x: ix.lower_take(b, x, [2, 0, 2], axis=1),
     lambda x: np.take(x, [2, 0, 2], axis=1), [(2, 3)]),
    ("np.take-flat", lambda b, x: ix.lower_take(b, x, [5, 0]), lambda x: np.take(x, [5, 0]),
     [(2, 3)]),
    ("np.take-dynamic", lambda b, x, i: ix.lower_take(b, x, i, axis=-1),
     lambda x, i: np.take(x, i, axis=-1), [(2, 3), 1]),
    ("set-slice", *write(slice(1, 5, 2)), [(6,), (2,)]),
    ("set-rows-broadcast", *write(slice(None, None, -2)), [(3, 4), (4,)]),
    ("set-python-float", *write((1, Ellipsis)), [(3, 4), float]),
    ("set-newaxis", *write((slice(None), None, slice(1, 3))), [(2, 3), (2, 1, 2)]),
    # NumPy drops a value's leading length-1 axes beyond the selection's dimensions
    ("set-extra-leading-ones", *write(0), [(2, 3), (1, 1, 3)]),
    ("set-extra-leading-ones-broadcast", *write((slice(None), 1)), [(2, 3), (1, 1)]),
    ("set-dynamic-int", lambda b, x, v, i: ix.lower_setitem(b, x, i, v),
     lambda x, v, i: _set(x, i, v), [(4, 3), (3,), -2]),
    ("set-repeats-last-wins", *write([0, 0, 2]), [(4,), (3,)]),
    ("set-repeats-dynamic", lambda b, x, v, i: ix.lower_setitem(b, x, i, v),
     lambda x, v, i: _set(x, i, v), [(4,), (3,), np.array([0, 0, 2])]),
    ("set-repeats-2d", *write(([1, 1, 0], [2, 2, 2])), [(2, 3), (3,)]),
    ("set-static-mask", *write(MASK2), [(2, 3), (3,)]),
    ("set-dynamic-mask", lambda b, x: ix.lower_setitem(b, x, b.greater(x, b.const(0.5)), 0.0),
     lambda x: _set(x, x > 0.5, 0.0), [(2, 3)]),
    ("set-dynamic-mask-value",
     lambda b, x, v: ix.lower_setitem(b, x, b.less(x, b.const(0)), v),
     lambda x, v: _set(x, x < 0, v), [(2, 3), float]),
    ("set-dynamic-row-mask",
     lambda b, x, v: ix.lower_setitem(
         b, x, b.greater(ix.lower_getitem(b, x, (slice(None), 0)), b.const(0)), v),
     lambda x, v: _set(x, x[:, 0] > 0, v), [(3, 4), ()]),
    ("iadd-slice", *write(slice(1, 4, 2), add=True), [(5,), (2,)]),
    ("iadd-row-broadcast", *write((slice(None), -1), add=True), [(3, 4), (1,)]),
    ("iadd-repeats-adds-once", *write([0, 0, 2], add=True), [(4,), (3,)]),
    ("iadd-repeats-dynamic", lambda b, x, v, i: ix.lower_setitem_add(b, x, i, v),
     lambda x, v, i: _set(x, i, v, add=True), [(4,), (3,), np.array([2, 0, 2])]),
    ("iadd-static-mask", *write(MASK, add=True), [(4,), float]),
    ("iadd-dynamic-mask",
     lambda b, x, v: ix.lower_setitem_add(b, x, b.greater(x, b.const(0)), v),
     lambda x, v: _set(x, x > 0, v, add=True), [(4,), float]),
    ("iadd-dynamic-int", lambda b, x, v, i: ix.lower_setitem_add(b, x, (slice(None), i), v),
     lambda x, v, i: _set(x, (slice(None), i), v, add=True), [(3, 4), (3,), 1]),
]
IDS = [c[0] for c in CASES]


def _values(adcheck, key, specs, dtype=np.float64):
    rng = adcheck.rng_for(key)
    out = []
    for s in specs:
        if s is float:
            out.append(float(adcheck.draw(rng, ())))
        elif isinstance(s, tuple):
            out.append(adcheck.draw(rng, s).astype(dtype))
        else:
            out.append(s)
    return out


def _lowered(adcheck, lower, values):
    b, args = adcheck.new_function("indexed", [AType.of(v) for v in values])
    return verify(adcheck.finish(b, "indexed", [b.const(lower(b, *args))]))


def _same(got, want):
    assert np.shape(got) == np.shape(want)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("key, lower, oracle, specs", CASES, ids=IDS)
def test_forward_equals_numpy(adcheck, key, lower, oracle, specs):
    values = _values(adcheck, key, specs)
    expected = oracle(*values)
    (compiled,) = adcheck.run(_lowered(adcheck, lower, values), *values)
    _same(compiled, expected)
    _same(lower(EagerBuilder(), *values), expected)


@pytest.mark.parametrize("key, lower, oracle, specs", CASES, ids=IDS)
def test_gradient_matches_finite_differences(adcheck, key, lower, oracle, specs):
    values = _values(adcheck, key, specs)
    fn = _lowered(adcheck, lower, values)
    weight = adcheck.like(np.asarray(oracle(*values)), adcheck.rng_for(key + "-ct"))
    grads = adcheck.run(adcheck.reverse(fn), *values, weight)

    def scalar(vals):
        return adcheck.inner(weight, oracle(*vals))

    for i, v in enumerate(values):
        if adcheck.is_float_input(v):
            adcheck.assert_close(grads[i], adcheck.numeric_grad(scalar, values, i), f"{key} d/d{i}")
            assert np.shape(grads[i]) == np.shape(v)


@pytest.mark.parametrize("key, lower, oracle, specs", CASES, ids=IDS)
def test_float32_stays_float32(adcheck, key, lower, oracle, specs):
    values = _values(adcheck, key, specs, np.float32)
    fn = _lowered(adcheck, lower, values)
    (out,) = adcheck.run(fn, *values)
    assert np.asarray(out).dtype == np.float32
    _same(out, oracle(*values))
    weight = np.ones(np.shape(out), np.float32)
    grads = adcheck.run(adcheck.reverse(fn), *values, weight)
    for g, v in zip(grads, values):
        if isinstance(v, np.ndarray) and v.dtype == np.float32:
            assert np.asarray(g).dtype == np.float32


@pytest.mark.parametrize("key, lower, oracle, specs", CASES, ids=IDS)
def test_second_order(adcheck, key, lower, oracle, specs):
    """The adjoint is again differentiable IR: its own adjoint matches finite differences."""
    values = _values(adcheck, key, specs)
    fn = _lowered(adcheck, lower, values)
    rng = adcheck.rng_for(key + "-2")
    weight = adcheck.like(np.asarray(oracle(*values)), rng)
    adcheck.check_reverse(adcheck.reverse(fn), [*values, weight], rng, f"{key} second order")


@pytest.mark.parametrize("key, lower, oracle, specs", CASES, ids=IDS)
def test_compiled_code_agrees_with_interpreter(adcheck, key, lower, oracle, specs):
    from ad_compiler.codegen import compile_function
    values = _values(adcheck, key, specs)
    fn = adcheck.reverse(_lowered(adcheck, lower, values))
    weight = adcheck.like(np.asarray(oracle(*values)), adcheck.rng_for(key + "-ct"))
    compiled = compile_function(fn)
    got = compiled.fn(*values, weight)
    for g, e in zip(got, adcheck.run(fn, *values, weight), strict=True):
        assert AType.of(g) == AType.of(e), compiled.source
        np.testing.assert_array_equal(g, e, err_msg=compiled.source)


def _user_function(x):
    s = np.sum(x[1:3] * x[::-1][:2])
    for i in range(x.shape[0]):
        s = s + x[i, 0] * x[i, -1]
    return s + np.sum(x[[0, 0, 2]] ** 2)


def test_grad_of_a_user_function_with_indexing(adcheck):
    import ad_compiler as ms
    x = adcheck.draw(adcheck.rng_for("user"), (4, 3))
    expected = adcheck.numeric_grad(lambda v: _user_function(v[0]), [x], 0)
    adcheck.assert_close(ms.grad(_user_function)(x), expected, "grad of a user function")


# -- gradients that must be exact ---------------------------------------------------------

def _grad(adcheck, lower, values, weight=None):
    fn = _lowered(adcheck, lower, values)
    (out,) = adcheck.run(fn, *values)
    weight = np.ones(np.shape(out)) if weight is None else weight
    return adcheck.run(adcheck.reverse(fn), *values, weight)


def test_repeated_indices_accumulate(adcheck):
    (dx,) = _grad(adcheck, lambda b, x: ix.lower_getitem(b, x, [0, 0, 2]), [np.ones(4)])
    np.testing.assert_array_equal(dx, [2.0, 0.0, 1.0, 0.0])
    (dx, _) = _grad(adcheck, lambda b, x, i: ix.lower_getitem(b, x, (slice(None), i)),
                    [np.ones((2, 3)), np.array([1, 1, 1])])
    np.testing.assert_array_equal(dx, [[0.0, 3.0, 0.0]] * 2)


def test_mask_scatters_back_to_true_positions(adcheck):
    w = np.array([1.0, 2.0, 3.0])
    (dx,) = _grad(adcheck, lambda b, x: ix.lower_getitem(b, x, MASK), [np.ones(4)], w)
    np.testing.assert_array_equal(dx, [1.0, 0.0, 2.0, 3.0])


def test_iadd_with_repeats_adds_once_and_its_gradient_agrees():
    x = np.zeros(4)
    expected = x.copy()
    expected[[0, 0]] += np.array([1.0, 2.0])
    got = ix.lower_setitem_add(EagerBuilder(), x, [0, 0], np.array([1.0, 2.0]))
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(got, [2.0, 0.0, 0.0, 0.0])  # last write wins, once
    np.testing.assert_array_equal(x, 0.0)  # the input is not written


def test_set_with_repeats_gives_the_gradient_to_the_surviving_write(adcheck):
    _, dv = _grad(adcheck, lambda b, x, v: ix.lower_setitem(b, x, [0, 0, 2], v),
                  [np.zeros(4), np.zeros(3)])
    np.testing.assert_array_equal(dv, [0.0, 1.0, 1.0])


def test_set_gradients_for_x_and_value(adcheck):
    w = np.arange(6.0)
    dx, dv = _grad(adcheck, lambda b, x, v: ix.lower_setitem(b, x, slice(1, 5, 2), v),
                   [np.ones(6), np.ones(2)], w)
    np.testing.assert_array_equal(dx, [0.0, 0.0, 2.0, 0.0, 4.0, 5.0])
    np.testing.assert_array_equal(dv, [1.0, 3.0])


# -- what is emitted --------------------------------------------------------------------

def _prims(adcheck, lower, values, reverse=False):
    fn = _lowered(adcheck, lower, values)
    return [op.prim for op in (adcheck.reverse(fn) if reverse else fn).body.ops]


def test_whole_array_index_emits_no_op(adcheck):
    for index in (slice(None), Ellipsis, (Ellipsis, slice(None))):
        assert _prims(adcheck, lambda b, x: ix.lower_getitem(b, x, index), [np.ones(3)]) == []


def test_basic_index_is_a_view_and_an_int_array_a_gather(adcheck):
    assert _prims(adcheck, lambda b, x: ix.lower_getitem(b, x, 1), [np.ones(3)]) == ["getitem"]
    assert _prims(adcheck, lambda b, x, i: ix.lower_getitem(b, x, i), [np.ones(3), 1]) == \
        ["getitem"]
    assert _prims(adcheck, lambda b, x: ix.lower_getitem(b, x, [1]), [np.ones(3)]) == \
        ["const", "gather"]


def test_survivors_are_found_only_when_indices_may_repeat(adcheck):
    def set_(index):
        return lambda b, x, v: ix.lower_setitem(b, x, index, v)
    unique = _prims(adcheck, set_([2, 0]), [np.ones(3), np.ones(2)], reverse=True)
    assert "index_winners" not in unique and "where" not in unique
    repeated = _prims(adcheck, set_([2, 2]), [np.ones(3), np.ones(2)], reverse=True)
    assert "index_winners" not in repeated and "where" in repeated  # known when compiling
    dynamic = _prims(adcheck, lambda b, x, v, i: ix.lower_setitem(b, x, i, v),
                     [np.ones(3), np.ones(2), np.array([2, 0])], reverse=True)
    assert "index_winners" in dynamic


def test_iadd_uses_index_add_without_repeats(adcheck):
    def iadd(index):
        return lambda b, x, v: ix.lower_setitem_add(b, x, index, v)
    assert _prims(adcheck, iadd(slice(1, 3)), [np.ones(4), np.ones(2)]) == ["index_add"]
    assert _prims(adcheck, iadd(MASK), [np.ones(4), 1.0])[-1] == "index_add"
    assert "index_set" in _prims(adcheck, iadd([0, 0]), [np.ones(4), np.ones(2)])


def test_generated_source_reads_like_numpy(adcheck):
    def lower(b, x, i, v):
        y = ix.lower_getitem(b, x, (i, slice(None, None, -1), None, Ellipsis))
        return ix.lower_setitem(b, y, (slice(1, None), -1), v)
    fn = _lowered(adcheck, lower, [np.ones((2, 3, 4)), 1, 0.5])
    source, _ = to_source(fn)
    assert "x0[x1, ::-1, None, ...]" in source
    assert "rt.index_set(x0_x1, np.s_[1:, -1], x2)" in source
    grad = adcheck.reverse(fn)
    assert "rt.index_add(" in to_source(grad, reuse_buffers=False)[0]
    # with buffer reuse the adjoint adds into its zeros in place: ``dx[...] += ct``
    from ad_compiler.passes.reuse import reuse_buffers
    reused = to_source(reuse_buffers(grad))[0]
    assert "rt.index_add(" not in reused and "] += " in reused


def test_accumulate_into_reuses_one_buffer(adcheck):
    x = np.arange(5.0)

    def lower(b, v):
        first, second = ix.lower_getitem(b, v, slice(0, 2)), ix.lower_getitem(b, v, [4, 4])
        acc = b.index_add(b.zeros(v), first, index=(slice(1, 3),))
        fused = ix.accumulate_into(b, acc, b.scatter_add(b.zeros(v), second, b.const(
            np.array([0, 0])), index=(ix.slot(0),)))
        assert fused.producer.inputs[0] is acc
        assert ix.accumulate_into(b, acc, first) is None
        return fused
    (got,) = adcheck.run(_lowered(adcheck, lower, [x]), x)
    np.testing.assert_array_equal(got, [8.0, 0.0, 1.0, 0.0, 0.0])


# -- argmax / argmin --------------------------------------------------------------------

@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("axis, keepdims", [(None, False), (1, False), (-1, True), (0, True)])
def test_argmax_argmin_match_numpy(adcheck, name, axis, keepdims):
    from ad_compiler.ad import rules
    x = adcheck.draw(adcheck.rng_for(name), (3, 4))
    lower = rules.find_lowering(getattr(np, name))
    expected = getattr(np, name)(x, axis=axis, keepdims=keepdims)
    (got,) = adcheck.run(_lowered(adcheck, lambda b, v: lower(b, v, axis, keepdims=keepdims),
                                  [x]), x)
    _same(got, expected)
    method = rules.METHODS[name](EagerBuilder(), x, axis, keepdims=keepdims)
    _same(method, expected)
    assert rules.PRIMITIVES[name].nondiff


# -- errors ------------------------------------------------------------------------------

@pytest.mark.parametrize("index", [1.0, np.array([0.0, 1.0]), slice(0, 2.0), True, "a",
                                   (0, 1.5)], ids=["float", "float-array", "float-bound",
                                                   "bool", "str", "tuple-with-float"])
def test_float_and_other_bad_indices_are_clear_errors(adcheck, index):
    with pytest.raises(IndexError, match="array indices must be integers"):
        _lowered(adcheck, lambda b, x: ix.lower_getitem(b, x, index), [np.ones((3, 3))])


def test_float_value_index_is_a_clear_error(adcheck):
    with pytest.raises(IndexError, match="got a float64 value"):
        _lowered(adcheck, lambda b, x, i: ix.lower_getitem(b, x, i), [np.ones(3), np.ones(())])
    with pytest.raises(IndexError, match="got a Python float"):
        _lowered(adcheck, lambda b, x, i: ix.lower_setitem(b, x, i, 0.0), [np.ones(3), 1.0])


def test_out_of_bounds_static_index_fails_when_compiling(adcheck):
    with pytest.raises(IndexError, match="out of bounds"):
        _lowered(adcheck, lambda b, x: ix.lower_getitem(b, x, (0, 3)), [np.ones((2, 3))])
    with pytest.raises(IndexError, match="boolean index did not match"):
        _lowered(adcheck, lambda b, x: ix.lower_getitem(b, x, MASK3), [np.ones(4)])


def test_reading_through_a_run_time_mask_has_a_run_time_length(adcheck):
    fn = _lowered(adcheck, lambda b, x: ix.lower_getitem(b, x, b.greater(x, b.const(0))),
                  [np.ones(3)])
    (read,) = [op for op in fn.body.ops if op.prim == "gather"]
    assert read.params["index"] == ("#0",) and str(read.result.type) == "f64[?]"
    x = np.array([1.0, -2.0, 3.0])
    _same(adcheck.run(fn, x)[0], x[x > 0])


def test_run_time_mask_assignment_of_an_array_is_an_index_set(adcheck):
    def lower(b, x, v):
        return ix.lower_setitem(b, x, b.greater(x, b.const(0)), b.mul(v, b.const(2.0)))
    fn = _lowered(adcheck, lower, [np.ones(3), np.ones(2)])
    assert [op.prim for op in fn.body.ops][-1] == "index_set"
    x, v = np.array([1.0, -2.0, 3.0]), np.array([5.0, 7.0])
    want = x.copy()
    want[x > 0] = v * 2.0
    _same(adcheck.run(fn, x, v)[0], want)


def test_value_that_does_not_fit_the_selection(adcheck):
    with pytest.raises(ValueError, match="cannot put a value"):
        _lowered(adcheck, lambda b, x, v: ix.lower_setitem(b, x, slice(0, 2), v),
                 [np.ones(4), np.ones(3)])


def test_python_numbers_cannot_be_indexed(adcheck):
    with pytest.raises(UnsupportedOperationError, match="only arrays"):
        _lowered(adcheck, lambda b, x: ix.lower_getitem(b, x, 0), [1.0])


# -- run-time helpers -------------------------------------------------------------------

def test_runtime_helpers_follow_their_docstrings():
    assert doctest.testmod(rt).failed == 0


def test_runtime_winners_agree_with_numpy_assignment():
    index = (np.array([0, 2, 0, 1]), np.array([1, 1, 1, 1]))
    v = np.arange(4.0) + 1
    x = np.zeros((3, 2))
    x[index] = v
    keep = rt.winners(x.shape, index)
    np.testing.assert_array_equal(x[index], np.where(keep, v, x[index]))
    assert keep.sum() == 3


@pytest.mark.parametrize("name", sorted(ix.INPLACE_FORMS))
def test_inplace_forms_compute_what_the_primitives_compute(adcheck, name):
    from ad_compiler.ad import rules
    from ad_compiler.codegen.emit import literal
    prim = rules.PRIMITIVES[name]
    for k, example in enumerate(prim.examples):
        values = adcheck.example_values(example, "real", adcheck.rng_for(f"{name}-{k}"))
        index = example.params["index"]
        names = [f"a{i}" for i in range(len(values))]
        env = {"np": np, **dict(zip(names, values))}
        env["a0"] = np.array(values[0], copy=True)
        exec(ix.INPLACE_FORMS[name](names, index=f"({literal(index)})"), env)  # noqa: S102
        np.testing.assert_array_equal(env["a0"], prim.impl(*values, index=index))


@pytest.mark.parametrize("index", [slice(1, 3), [2, 0, 2], "mask"], ids=["slice", "repeats",
                                                                       "run-time-mask"])
def test_other_augmented_assignments_follow_numpy(adcheck, index):
    def lower(b, x, v):
        idx = b.greater(x, b.const(0)) if index == "mask" else index
        return ix.lower_augmented_setitem(b, x, idx, v, lambda b, cur, val: b.mul(cur, val))

    def oracle(x, v):
        y = x.copy()
        y[x > 0 if index == "mask" else index] *= v
        return y
    rng = adcheck.rng_for(str(index))
    v = 1.5 if index == "mask" else adcheck.draw(rng, (3,) if index == [2, 0, 2] else (2,))
    values = [adcheck.draw(rng, (4,)), v]
    (got,) = adcheck.run(_lowered(adcheck, lower, values), *values)
    _same(got, oracle(*values))
    weight = np.arange(4.0)
    grads = adcheck.run(adcheck.reverse(_lowered(adcheck, lower, values)), *values, weight)
    for i in range(2):
        expected = adcheck.numeric_grad(lambda vals: adcheck.inner(weight, oracle(*vals)),
                                        values, i)
        adcheck.assert_close(grads[i], expected, f"d/d{i}")
