"""ms.vmap / ops.vmap: values against a Python loop over the examples, in_axes and
out_axes forms, per-example gradients (vmap of grad) against a loop of ms.grad calls
and central differences, float32, errors, and the generated code (no loop)."""
from __future__ import annotations

import numpy as np
import pytest

import ad_compiler as ms
from ad_compiler import ops
from ad_compiler.errors import UnsupportedOperationError
from tests.finite_differences import central, directional

RNG = np.random.default_rng(7)
X = RNG.normal(size=(5, 3))
W1, W2 = RNG.normal(size=(3, 4)), RNG.normal(size=(4, 2))
EPS = 1e-6


def loop(fn, args, in_axes, out_axis=0):
    """What vmap must return: ``fn`` called per example, the results stacked."""
    n = next(np.shape(a)[ax] for a, ax in zip(args, in_axes) if ax is not None)
    outs = [fn(*[a if ax is None else np.take(a, k, axis=ax) for a, ax in zip(args, in_axes)])
            for k in range(n)]
    if isinstance(outs[0], tuple):
        return tuple(np.stack(o, axis=out_axis) for o in zip(*outs))
    return np.stack(outs, axis=out_axis)


def mlp(w1, w2, x):
    h = np.tanh(x @ w1)
    return np.sum(h @ w2) / 2


def softmax(x):
    e = np.exp(x - np.max(x))
    return e / np.sum(e)


def sliced(x):
    return x[1:] * x[0] + x[:0:-1]


def recurrent(x):
    h = x
    for i in range(3):
        h = np.sin(h) * x[i]
    return h


def halving(x):
    i = 0
    while i < 3:
        x = x * 0.5 + 1
        i += 1
    return x


def collected(x):
    ys = []
    for i in range(3):
        ys.append(x * i)
    return np.stack(ys)


def joined(x, y):
    return np.concatenate([x, y]) @ np.ones(6)


@pytest.mark.parametrize("fn,args,in_axes", [
    (mlp, (W1, W2, X), (None, None, 0)),
    (softmax, (X,), (0,)),
    (sliced, (X,), (0,)),
    (recurrent, (X,), (0,)),
    (halving, (X,), (0,)),
    (collected, (X,), (0,)),
    (joined, (X, X[0]), (0, None)),
    (lambda x: np.where(x > 0, x, 0.1 * x).mean(axis=0), (RNG.normal(size=(5, 3, 2)),), (1,)),
    (lambda x: np.linalg.inv(x @ x.T + np.eye(3)), (RNG.normal(size=(3, 4, 3)),), (2,)),
    (lambda x, y: np.einsum("ij,j->i", x, y), (RNG.normal(size=(4, 2, 3)), X[0]), (0, None)),
], ids=["mlp", "softmax", "slices", "for", "while", "list", "concat", "where", "inv", "einsum"])
def test_values_match_a_loop(fn, args, in_axes):
    got = ms.vmap(fn, in_axes=in_axes)(*args)
    np.testing.assert_allclose(got, loop(fn, args, in_axes), rtol=1e-12, atol=1e-12)


def test_in_axes_forms():
    f = lambda x, y: np.sin(x) * y + 2.0  # noqa: E731
    y = RNG.normal(size=3)
    expected = loop(f, (X, y), (0, None))
    np.testing.assert_allclose(ms.vmap(f, in_axes=(0, None))(X, y), expected)
    np.testing.assert_allclose(ms.vmap(f, in_axes=[1, None])(X.T, y), expected)
    np.testing.assert_allclose(ms.vmap(f, in_axes=(-1, None))(X.T, y), expected)
    np.testing.assert_allclose(ms.vmap(f)(X, np.tile(y, (5, 1))), expected)  # int: all


def test_nested_in_axes_for_a_tuple_argument():
    def f(x, pair):
        return x * pair[0] + pair[1]
    got = ops.vmap(f, in_axes=(0, (0, None)))(X, (X, X[0]))
    np.testing.assert_allclose(got, X * X + X[0])


def test_out_axes_forms():
    def f(x):
        return np.outer(x, x), np.sum(x)
    outer, total = ms.vmap(f, out_axes=(1, 0))(X)
    np.testing.assert_allclose(outer, loop(lambda x: np.outer(x, x), (X,), (0,), 1))
    np.testing.assert_allclose(total, X.sum(axis=1))
    shared = ms.vmap(lambda x, w: (x * 2, w * 3), in_axes=(0, None), out_axes=(0, None))
    doubled, tripled = shared(X, W1)
    np.testing.assert_allclose(doubled, 2 * X)
    np.testing.assert_allclose(tripled, 3 * W1)


def test_a_batched_output_with_out_axes_none_is_refused():
    with pytest.raises(UnsupportedOperationError, match="out_axes is None"):
        ms.vmap(lambda x: x * 2, out_axes=None)(X)


# -- per-example gradients ---------------------------------------------------------------

def loss(w, b, x, y):
    pred = np.tanh(x @ w + b)
    return np.mean((pred - y) ** 2)


def test_per_example_gradients_match_a_loop_of_grad_calls():
    w, b = RNG.normal(size=(3, 2)), RNG.normal(size=2)
    ys = RNG.normal(size=(5, 2))
    per_example = ms.vmap(ms.grad(loss, (0, 1)), in_axes=(None, None, 0, 0))
    gw, gb = per_example(w, b, X, ys)
    for k in range(len(X)):
        ew, eb = ms.grad(loss, (0, 1))(w, b, X[k], ys[k])
        np.testing.assert_allclose(gw[k], ew, rtol=1e-12)
        np.testing.assert_allclose(gb[k], eb, rtol=1e-12)


def test_per_example_gradients_match_finite_differences():
    w, b, ys = RNG.normal(size=(3, 2)), RNG.normal(size=2), RNG.normal(size=(5, 2))
    gw = ms.vmap(ms.grad(loss), in_axes=(None, None, 0, 0))(w, b, X, ys)
    for k in range(len(X)):
        want = central(lambda v: loss(v, b, X[k], ys[k]), w, EPS)
        np.testing.assert_allclose(gw[k], want, rtol=0, atol=1e-7)


def test_gradient_inside_a_lambda_batches():
    """vmap of a function calling grad: the gradient is inlined as IR and batched."""
    w = RNG.normal(size=(3, 2))
    per_example = ms.vmap(lambda x: ms.grad(loss)(w, np.zeros(2), x, np.ones(2)))
    got = per_example(X)
    expected = np.stack([ms.grad(loss)(w, np.zeros(2), x, np.ones(2)) for x in X])
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_per_example_gradients_through_a_loop():
    def rnn(ws, xs):
        h = np.zeros(4)
        for t in range(xs.shape[0]):
            h = np.tanh(ws @ h + xs[t])
        return np.sum(h)
    ws, seqs = RNG.normal(size=(4, 4)) * 0.5, RNG.normal(size=(6, 3, 4))
    got = ms.vmap(ms.grad(rnn), in_axes=(None, 0))(ws, seqs)
    np.testing.assert_allclose(got, np.stack([ms.grad(rnn)(ws, s) for s in seqs]), rtol=1e-12)


def test_gradient_of_a_vmapped_function():
    """vmap inside a compiled function: grad(sum(vmap(f)(x))) is each example's gradient."""
    def total(x):
        return np.sum(ms.vmap(softmax)(x) * np.arange(3.0))
    expected = np.stack([ms.grad(lambda v: np.sum(softmax(v) * np.arange(3.0)))(x) for x in X])
    np.testing.assert_allclose(ms.grad(total)(X), expected, rtol=1e-12)


# -- types --------------------------------------------------------------------------

def test_float32_stays_float32():
    w, b = np.ones((3, 2), np.float32), np.zeros(2, np.float32)
    xs, ys = X.astype(np.float32), np.ones((5, 2), np.float32)
    gw, gb = ms.vmap(ms.grad(loss, (0, 1)), in_axes=(None, None, 0, 0))(w, b, xs, ys)
    assert gw.dtype == np.float32 and gb.dtype == np.float32
    assert gw.shape == (5, 3, 2) and gb.shape == (5, 2)
    expected = ms.grad(loss, (0, 1))(w, b, xs[2], ys[2])
    np.testing.assert_allclose(gw[2], expected[0], rtol=1e-5)


def test_tensor_in_tensor_out():
    got = ms.vmap(softmax)(ms.Tensor(X.astype(np.float32)))
    assert isinstance(got, ms.Tensor) and got.dtype == ms.float32
    np.testing.assert_allclose(got.asnumpy(), loop(softmax, (X,), (0,)), rtol=1e-5)


def test_generated_code_has_no_loop_over_the_batch():
    vm = ms.vmap(ms.grad(mlp, (0, 1)), in_axes=(None, None, 0))
    vm(W1, W2, X)
    source = vm.source(W1, W2, X)
    assert "for " not in source and "while " not in source
    assert "\ndef vmap_" in source


# -- errors --------------------------------------------------------------------------

def test_a_condition_that_differs_between_examples_is_refused_with_its_line():
    def f(x):
        if np.sum(x) > 0:
            return x * 2
        return x
    with pytest.raises(UnsupportedOperationError, match="differs between the examples") as e:
        ms.vmap(f)(X)
    assert "test_vmap.py" in str(e.value) and "if np.sum(x) > 0" in str(e.value)


def test_bad_axes_are_refused():
    with pytest.raises(ValueError, match="different batch sizes"):
        ms.vmap(lambda x, y: x + y)(X, X[:4])
    with pytest.raises(ValueError, match="out of bounds"):
        ms.vmap(lambda x: x, in_axes=2)(X)
    with pytest.raises(ValueError, match="has no axis to batch"):
        ms.vmap(lambda x, n: x * n, in_axes=(0, 0))(X, 3)
    with pytest.raises(ValueError, match="in_axes has 1 entries"):
        ms.vmap(lambda x, y: x + y, in_axes=(0,))(X, X)
    with pytest.raises(ValueError, match="at least one batched"):
        ms.vmap(lambda x: x, in_axes=None)(X)
    with pytest.raises(TypeError, match="in_axes must be an int"):
        ms.vmap(lambda x: x, in_axes=1.0)


def smooth(x):
    return np.logaddexp(0.0, x)


def test_a_registered_function_batches_with_its_rule_and_is_named_without():
    from ad_compiler.api.extension import forget
    vjp = lambda b, ct, out, x: (b.mul(ct, b.sigmoid(x)),)  # noqa: E731
    ms.primitive(smooth, vjp=vjp, batch=lambda b, axes, x: (b.emit("smooth", x), axes[0]))
    try:
        np.testing.assert_allclose(ms.vmap(smooth, in_axes=1)(X.T), smooth(X))
    finally:
        forget(smooth)
    ms.primitive(smooth, vjp=vjp)
    try:
        with pytest.raises(UnsupportedOperationError, match="batching rule for 'smooth'"):
            ms.vmap(lambda x: smooth(x) * 2)(X)
    finally:
        forget(smooth)


def test_an_if_on_a_shared_value_batches_its_branches():
    def f(x, flag):
        if np.sum(flag) > 0:
            y = x * 2
        else:
            y = flag
        return y + 1
    for flag in (np.ones(3), -np.ones(3)):
        got = ms.vmap(f, in_axes=(0, None))(X, flag)
        np.testing.assert_allclose(got, loop(f, (X, flag), (0, None)))


def test_masks_and_sorted_arrays_that_differ_between_examples_are_refused_with_their_line():
    def masked(x, m):
        y = x.copy()
        y[m] += 1.0
        return y
    masks = X > 0
    with pytest.raises(UnsupportedOperationError, match="boolean mask") as e:
        ms.vmap(masked)(X, masks)
    assert "y[m] += 1.0" in str(e.value)

    def bins(edges, v):
        return np.searchsorted(edges, v)
    with pytest.raises(UnsupportedOperationError, match="sorted array that differs") as e:
        ms.vmap(bins, in_axes=(0, None))(np.sort(X, axis=1), 0.1)
    assert "np.searchsorted(edges, v)" in str(e.value)


def test_a_length_that_depends_on_each_example_is_refused_with_its_line():
    def positives(x):
        return np.sum(x[x > 0])
    with pytest.raises(UnsupportedOperationError, match="its own number of elements") as e:
        ms.vmap(positives)(X)
    assert "x[x > 0]" in str(e.value)


def test_per_example_gradients_of_cell_parameters():
    from ad_compiler import nn

    class Loss(nn.Cell):
        def __init__(self):
            super().__init__()
            self.dense = nn.Dense(3, 2)

        def construct(self, x):
            return (self.dense(x) ** 2).sum()
    net = Loss()
    grads = ms.grad(net, None, weights=net.trainable_params())
    xs = X.astype(np.float32)
    got = ms.vmap(grads)(ms.Tensor(xs))
    assert [g.shape for g in got] == [(5, 2, 3), (5, 2)]
    assert all(g.dtype == ms.float32 for g in got)
    for k, x in enumerate(xs):
        for g, e in zip(got, grads(ms.Tensor(x))):
            np.testing.assert_allclose(g.asnumpy()[k], e.asnumpy(), rtol=1e-5, atol=1e-6)


def test_a_while_condition_that_differs_between_examples_is_refused_with_its_line():
    def halve_until_small(x):
        while np.sum(x) > 1.0:
            x = x * 0.5
        return x
    with pytest.raises(UnsupportedOperationError, match="'while' loop's condition") as e:
        ms.vmap(halve_until_small)(np.abs(X) + 1)
    assert "while np.sum(x) > 1.0" in str(e.value)


@ms.custom_vjp
def clipped_sin(x):
    return np.sin(x)


clipped_sin.defvjp(lambda x: (np.sin(x), (x,)),
                   lambda res, g: (np.clip(g * np.cos(res[0]), -0.5, 0.5),))


@ms.custom_vjp
def scaled_sin(w, x):
    return np.sin(w * x)


scaled_sin.defvjp(lambda w, x: (np.sin(w * x), (w * x, x, None)),
                  lambda res, g: (np.clip(g * np.cos(res[0]), -0.5, 0.5) * res[1], None))


def test_a_function_with_its_own_rule_batches_and_keeps_its_rule_in_gradients():
    np.testing.assert_allclose(ms.vmap(clipped_sin)(X), np.sin(X))
    per_example = ms.vmap(ms.grad(lambda x: np.sum(clipped_sin(x))))(X)
    np.testing.assert_allclose(per_example, np.clip(np.cos(X), -0.5, 0.5))


def test_a_gradient_through_vmap_of_a_function_with_its_own_rule_uses_the_rule():
    """grad(vmap(f)): the rule, written for one example, runs vmapped on the batch."""
    got = ms.grad(lambda x: np.sum(ms.vmap(clipped_sin)(x)))(X)
    np.testing.assert_allclose(got, np.clip(np.cos(X), -0.5, 0.5))
    shared = ms.grad(lambda w: np.sum(ms.vmap(scaled_sin, in_axes=(None, 0))(w, X)))(X[0])
    np.testing.assert_allclose(shared, np.sum(np.clip(np.cos(X[0] * X), -0.5, 0.5) * X, axis=0))


SCALE = np.ones(3)


def scaled(x):
    return x * SCALE


def test_captured_state_is_read_at_call_time():
    global SCALE
    vf = ms.vmap(scaled)
    np.testing.assert_allclose(vf(X), X)
    SCALE[:] = 2.0
    np.testing.assert_allclose(vf(X), 2 * X)
    SCALE = np.full(3, 3.0)
    np.testing.assert_allclose(vf(X), 3 * X)


# -- per-example gradients through convolution, labels, list cotangents, own rules ----

def conv_net(w1, w2, x, y):
    h = ops.conv2d(x[None], w1, pad_mode="same")
    h = ops.max_pool2d(np.maximum(h, 0.0), 2)
    z = np.tanh(h.reshape(-1) @ w2)
    return np.sum((z - y) ** 2)


CONV_W1, CONV_W2 = RNG.normal(size=(3, 2, 3, 3)), RNG.normal(size=(3 * 3 * 2, 2)) / 4
CONV_X, CONV_Y = RNG.normal(size=(4, 2, 6, 4)), RNG.normal(size=(4, 2))


def test_per_example_gradients_of_a_conv_net_match_central_differences(api):
    args = (CONV_W1, CONV_W2, CONV_X, CONV_Y)
    gw1, gw2 = ms.vmap(ms.grad(conv_net, grad_position=(0, 1)), in_axes=(None, None, 0, 0))(*args)
    assert gw1.shape == (4, 3, 2, 3, 3) and gw2.shape == (4, 18, 2)
    for k in range(4):
        one = (CONV_W1, CONV_W2, CONV_X[k], CONV_Y[k])
        np.testing.assert_allclose(gw1[k], api.fd_grad(conv_net, one, 0), atol=1e-6)
        np.testing.assert_allclose(gw2[k], api.fd_grad(conv_net, one, 1), atol=1e-6)


def test_per_example_input_gradients_of_a_conv_net_with_per_example_filters(api):
    """Filters that differ between examples (grouped convolution), and an input
    gradient (the transposed convolution) per example, in float32."""
    w1s = RNG.normal(size=(4,) + CONV_W1.shape)
    f32 = [a.astype(np.float32) for a in (w1s, CONV_W2, CONV_X, CONV_Y)]
    gx = ms.vmap(ms.grad(conv_net, grad_position=2), in_axes=(0, None, 0, 0))(*f32)
    assert gx.dtype == np.float32
    for k in range(4):
        want = api.fd_grad(conv_net, (w1s[k], CONV_W2, CONV_X[k], CONV_Y[k]), 2)
        np.testing.assert_allclose(gx[k], want, atol=2e-3)
    source = ms.vmap(ms.grad(conv_net, grad_position=2), in_axes=(0, None, 0, 0)).source(*f32)
    assert "groups=4" in source and "for " not in source


LABELS = np.array([2, 0, 1, 1, 2])
IDX = RNG.integers(-3, 3, size=(5, 2))


@pytest.mark.parametrize("fn,args,in_axes", [
    (lambda x, i: x[i], (X, LABELS), (0, 0)),
    (lambda x, i: x[i], (X, IDX), (0, 0)),
    (lambda x, i: x[i], (X[0], IDX), (None, 0)),
    (lambda x, i: x[:, i] * 2, (RNG.normal(size=(4, 5, 3)), IDX), (1, 0)),
    (lambda x, i: x[i, :, i], (RNG.normal(size=(3, 2, 3, 5)), IDX.T), (3, 1)),
    (lambda x, i, j: x[i, j], (RNG.normal(size=(5, 3, 3)), IDX, LABELS[:2]), (0, 0, None)),
    (lambda x, i: np.take_along_axis(x, i, axis=1),
     (RNG.normal(size=(5, 2, 3)), RNG.integers(0, 3, size=(5, 2, 4))), (0, 0)),
    (lambda x, i: np.take(x, i, axis=0), (X[0], IDX), (None, 0)),
], ids=["label", "array", "shared-x", "slice-first", "not-adjacent", "two-arrays",
        "take_along_axis", "take"])
def test_per_example_index_arrays_read_each_examples_positions(fn, args, in_axes):
    np.testing.assert_allclose(ms.vmap(fn, in_axes=in_axes)(*args), loop(fn, args, in_axes))


def scattered(x, i, v):
    y = x * 1.0
    y[i] = v
    y[i + 1] += 2.0
    return y * np.sum(x[i])


def test_per_example_index_arrays_write_each_examples_positions(api):
    i = np.array([[0, 0], [2, 1], [1, 2], [0, 3], [3, 3]])
    args, in_axes = (RNG.normal(size=(5, 5)), i, RNG.normal(size=(5, 2))), (0, 0, 0)
    np.testing.assert_allclose(ms.vmap(scattered)(*args), loop(scattered, args, in_axes))
    gx = ms.vmap(ms.grad(lambda x, i, v: np.sum(np.sin(scattered(x, i, v)))))(*args)
    for k in range(5):
        one = (args[0][k], i[k], args[2][k])
        np.testing.assert_allclose(
            gx[k], api.fd_grad(lambda x, v: np.sum(np.sin(scattered(x, i[k], v))),
                               (args[0][k], args[2][k]), 0), atol=1e-6)


def cross_entropy(w, b, x, label):
    logits = x @ w + b
    logp = logits - np.log(np.sum(np.exp(logits)))
    return -logp[label]


def test_per_example_cross_entropy_gradients_with_labels_match_central_differences(api):
    w, b = RNG.normal(size=(3, 4)), RNG.normal(size=4)
    labels = np.array([3, 0, 1, 3, 2])
    per_example = ms.vmap(ms.grad(cross_entropy, grad_position=(0, 1)),
                          in_axes=(None, None, 0, 0))
    gw, gb = per_example(w, b, X, labels)
    for k in range(5):
        one = (w, b, X[k])
        at_label = lambda w, b, x: cross_entropy(w, b, x, labels[k])  # noqa: E731
        np.testing.assert_allclose(gw[k], api.fd_grad(at_label, one, 0), atol=1e-6)
        np.testing.assert_allclose(gb[k], api.fd_grad(at_label, one, 1), atol=1e-6)
    f32 = per_example(w.astype(np.float32), b.astype(np.float32), X.astype(np.float32), labels)
    assert all(g.dtype == np.float32 for g in f32)
    assert "for " not in per_example.source(w, b, X, labels)


def picked(w, i):
    return w[i] * w[0]


def test_gradient_of_a_vmapped_read_through_per_example_labels(api):
    """The adjoint of a shared array read at each example's positions adds them all up
    (np.add.at over the batch)."""
    def total(w, labels):
        return np.sum(np.tanh(ms.vmap(picked, in_axes=(None, 0))(w, labels)))
    w = RNG.normal(size=4)
    labels = np.array([3, 0, 3, 3, 1])
    plain = lambda w: np.sum(np.tanh(w[labels] * w[0]))  # noqa: E731
    np.testing.assert_allclose(ms.grad(total)(w, labels), api.fd_grad(plain, (w,), 0),
                               atol=1e-6)


def read_in_a_loop(x, w, lim):
    """A list built by a while loop (its condition shared by the batch), read at other
    indices by a second loop: its cotangent is a list, built item by item."""
    ys = []
    while np.sum(lim) < 10.0:
        lim = lim * 2.0
        w = w * 1.5 + x
        ys.append(np.sin(w))
    s = 0.0
    for i in range(2):
        s = s + np.sum(ys[i] ** 2 * x)
    return s


def shared_list_read_in_a_loop(x, w, lim):
    """The list does not depend on the batched input, its items' cotangents do."""
    ys = []
    while np.sum(lim) < 10.0:
        lim = lim * 2.0
        w = w * 1.5
        ys.append(np.sin(w))
    s = 0.0
    for i in range(2):
        s = s + np.sum(ys[i] * x)
    return s


LIM = np.array([0.5, 1.0, 1.5])


@pytest.mark.parametrize("fn", [read_in_a_loop, shared_list_read_in_a_loop])
@pytest.mark.parametrize("pos", [0, 1])
def test_list_cotangents_batch_per_example_gradients(api, fn, pos):
    w = RNG.normal(size=3)
    if pos == 1:
        source = ms.adjoint_source(fn, X[0], w, LIM, grad_position=pos)
        assert "rt.list_add_at(" in source and "rt.list_zeros(" in source
    got = ms.vmap(ms.grad(fn, pos), in_axes=(0, None, None))(X, w, LIM)
    for k in range(len(X)):
        np.testing.assert_allclose(got[k], api.fd_grad(fn, (X[k], w, LIM), pos), atol=1e-6)


def squared_gradient(fn, pos):
    def second(x, w, lim):
        return np.sum(ms.grad(fn, pos)(x, w, lim) ** 2)
    return second


@pytest.mark.parametrize("fn", [read_in_a_loop, shared_list_read_in_a_loop])
def test_list_cotangents_batch_second_order_through_loops(api, fn):
    w = RNG.normal(size=3)
    for outer in (0, 1):
        second = ms.grad(squared_gradient(fn, 1), outer)
        got = ms.vmap(second, in_axes=(0, None, None))(X, w, LIM)
        np.testing.assert_allclose(got, loop(second, (X, w, LIM), (0, None, None)),
                                   rtol=1e-10, atol=1e-12)
    # and the second-order gradient agrees with central differences of the first
    first = ms.grad(fn, 1)
    want = api.fd_grad(lambda x, w, lim: np.sum(first(x, w, lim) ** 2), (X[0], w, LIM), 0)
    np.testing.assert_allclose(ms.grad(squared_gradient(fn, 1), 0)(X[0], w, LIM), want,
                               atol=1e-5)


@ms.custom_jvp
def softplus(x, w):
    return np.log1p(np.exp(x * w))


def _softplus_jvp(primals, tangents):
    x, w = primals
    tx, tw = tangents
    s = 1.0 / (1.0 + np.exp(-x * w))
    return np.log1p(np.exp(x * w)), s * (tx * w + x * tw)


softplus.defjvp(_softplus_jvp)


@ms.custom_vjp
def exact_sin(x):
    return np.sin(x)


exact_sin.defvjp(lambda x: (np.sin(x), x), lambda x, g: (g * np.cos(x),))


class Cube(ms.nn.Cell):
    def construct(self, x, w):
        return x ** 3 * w

    def bprop(self, x, w, out, dout):
        return 3 * x ** 2 * w * dout, x ** 3 * dout


def batch_total(fn, in_axes):
    def total(x, w):
        return np.sum(np.tanh(ms.vmap(fn, in_axes=in_axes)(x, w)))
    return total


@pytest.mark.parametrize("fn", [softplus, Cube(), ms.checkpoint(lambda x, w: np.sin(x * w) * x)],
                         ids=["custom_jvp", "bprop", "checkpoint"])
@pytest.mark.parametrize("in_axes", [(0, None), (0, 0)])
def test_gradients_through_vmap_of_calls_with_their_own_rule(api, fn, in_axes):
    """grad(vmap(f)) and vmap(grad(f)) where f's rule is exact: central differences."""
    x = RNG.normal(size=(5, 3)) / 2
    w = RNG.normal(size=(5, 3) if in_axes[1] == 0 else 3) / 2
    total = batch_total(fn, in_axes)
    for pos in (0, 1):
        np.testing.assert_allclose(ms.grad(total, pos)(x, w), api.fd_grad(total, (x, w), pos),
                                   atol=1e-6)
    per_example = ms.vmap(ms.grad(lambda x, w: np.sum(fn(x, w)), (0, 1)), in_axes=in_axes)(x, w)
    for k in range(5):
        one = (x[k], w[k] if in_axes[1] == 0 else w)
        for pos in (0, 1):
            want = api.fd_grad(lambda x, w: np.sum(fn(x, w)), one, pos)
            np.testing.assert_allclose(per_example[pos][k], want, atol=1e-6)


def test_forward_mode_through_vmap_of_a_custom_jvp_function():
    x, w, t = X / 2, X[0] / 2, RNG.normal(size=X.shape)
    out, tangent = ms.jvp(lambda x: ms.vmap(softplus, in_axes=(0, None))(x, w), (x,), (t,))
    np.testing.assert_allclose(out, softplus(x, w))
    want = directional(lambda x: softplus(x, w), [x], [t], EPS)
    np.testing.assert_allclose(tangent, want, atol=1e-7)


def batched_sines(x):
    return np.sum(ms.vmap(exact_sin)(x))


def test_second_order_through_vmap_of_a_custom_vjp_function():
    """The batched bwd is ordinary code: its gradient is the second derivative."""
    def first(x):
        return np.sum(ms.grad(batched_sines)(x) * x)
    # d/dx sum(cos(x) * x) = cos(x) - x sin(x)
    np.testing.assert_allclose(ms.grad(first)(X), np.cos(X) - X * np.sin(X), atol=1e-12)
