"""Parameter writes in compiled code: every transform call writes once (as one call of
the function would), ops.assign / ops.Assign() inside construct, reads after a write,
and the refusal of a value read before a write and used after it."""
import numpy as np
import pytest

import ad_compiler as ms
from ad_compiler import nn, ops
from tests.finite_differences import directional

MOMENTUM = 0.5


class BNSum(nn.Cell):
    """A scalar (or per-feature with ``vector``) of a BatchNorm in training mode."""

    def __init__(self, vector=False):
        super().__init__()
        self.bn = nn.BatchNorm1d(3, momentum=MOMENTUM)
        self.vector = vector

    def construct(self, x):
        y = self.bn(x) * x
        if self.vector:
            return np.sum(y, axis=0)
        return np.sum(y)


def _updates(net, x) -> float:
    """How many moving-mean updates happened: after k, mean = (1 - 0.5**k) * batch_mean."""
    ratio = net.bn.moving_mean.asnumpy() / x.mean(0)
    return float(-np.log2(1.0 - ratio[0]))


CALLS = {
    "call": lambda n, x: n(x),
    "grad": lambda n, x: ms.grad(n)(x),
    "value_and_grad": lambda n, x: ms.value_and_grad(n, None, n.trainable_params())(x),
    "GradOperation": lambda n, x: ms.ops.GradOperation()(n)(x),
    "vjp and vjp_fn": lambda n, x: ms.vjp(n, x)[1](np.ones(3) if n.vector else 1.0),
    "jvp": lambda n, x: ms.jvp(n, x, np.ones_like(x)),
    "jacrev": lambda n, x: ms.jacrev(n)(x),
    "jacfwd": lambda n, x: ms.jacfwd(n)(x),
    "hessian": lambda n, x: ms.hessian(n)(x),
    "hvp": lambda n, x: ms.hvp(n, x, np.ones_like(x)),
    "grad of grad": lambda n, x: ms.grad(lambda v: np.sum(ms.grad(n)(v) ** 2))(x),
}


VECTOR_OK = ("call", "vjp and vjp_fn", "jvp", "jacrev", "jacfwd")   # the others need a scalar


@pytest.mark.parametrize("name, vector", [(n, False) for n in sorted(CALLS)]
                         + [(n, True) for n in VECTOR_OK])
def test_every_transform_updates_the_moving_statistics_once(name, vector):
    np.random.seed(0)
    net = BNSum(vector)
    net.set_train()
    x = np.random.default_rng(1).normal(size=(5, 3))
    CALLS[name](net, x)
    assert _updates(net, x) == pytest.approx(1.0, abs=1e-9)
    var = x.var(0, ddof=1)
    np.testing.assert_allclose(net.bn.moving_variance.asnumpy(), 0.5 + 0.5 * var, rtol=1e-6)


def test_jvp_of_batchnorm_in_training_mode_against_finite_differences():
    np.random.seed(0)
    net = BNSum()
    net.set_train()
    rng = np.random.default_rng(2)
    x, v = rng.normal(size=(5, 3)), rng.normal(size=(5, 3))
    out, tangent = ms.jvp(net, x, v)
    eager = BNSum()
    eager.set_train()
    fd = directional(lambda x: float(eager(x)), [x], [v])
    assert float(tangent) == pytest.approx(fd, rel=1e-6)
    assert float(out) == pytest.approx(float(eager(x)), rel=1e-12)


def test_two_batchnorm_calls_in_one_compiled_function_update_twice_like_python():
    def twice(net, x):
        return np.sum(net.bn(x)) + np.sum(net.bn(x * 2.0))
    x = np.random.default_rng(3).normal(size=(6, 3))
    np.random.seed(0)
    eager = BNSum()
    eager.set_train()
    twice(eager, x)
    np.random.seed(0)
    compiled = BNSum()
    compiled.set_train()
    ms.grad(lambda x: twice(compiled, x))(x)
    for name in ("moving_mean", "moving_variance"):
        np.testing.assert_allclose(getattr(compiled.bn, name).asnumpy(),
                                   getattr(eager.bn, name).asnumpy(), rtol=1e-6)


class Counter(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = ms.Parameter(np.array([1.0, 2.0], np.float32), name="w")
        self.count = ms.Parameter(np.zeros((), np.float32), name="count", requires_grad=False)
        self.last = ms.Parameter(np.zeros(2, np.float32), name="last", requires_grad=False)
        self.assign = ops.Assign()

    def construct(self, x):
        ops.assign(self.count, self.count + 1.0)
        self.assign(self.last, x * self.w)               # the class form
        return np.sum(self.last * self.w) + self.count   # reads after the writes


def test_assign_in_construct_matches_python_and_writes_after_the_call():
    x = np.array([0.5, -1.0], np.float32)
    eager, compiled = Counter(), Counter()
    for step in range(3):
        want = eager(x)
        value, (gw,) = ms.value_and_grad(compiled, None, compiled.trainable_params())(x)
        assert float(value) == pytest.approx(float(want))
        assert value.dtype == ms.float32 and gw.dtype == ms.float32
        assert float(compiled.count.asnumpy()) == step + 1
        np.testing.assert_array_equal(compiled.last.asnumpy(), eager.last.asnumpy())
        # the written value is behind stop_gradient: d/dw sum(last * w) = last
        np.testing.assert_allclose(gw.asnumpy(), eager.last.asnumpy(), rtol=1e-6)


def test_assign_source_is_readable():
    src = ms.adjoint_source(Counter(), np.ones(2, np.float32))
    assert "updated = " in src and "ops.assign(self.count" in src


def test_assign_casts_and_broadcasts_a_number():
    class Fill(nn.Cell):
        def __init__(self):
            super().__init__()
            self.p = ms.Parameter(np.zeros(3, np.float32), name="p", requires_grad=False)

        def construct(self, x):
            ops.assign(self.p, 2.5)
            return np.sum(x * self.p)
    net = Fill()
    g = ms.grad(net)(np.ones(3))
    np.testing.assert_array_equal(g, [2.5, 2.5, 2.5])
    assert net.p.asnumpy().dtype == np.float32
    np.testing.assert_array_equal(net.p.asnumpy(), [2.5, 2.5, 2.5])


class Stale(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = ms.Parameter(np.array([1.0, 2.0]), name="w")

    def construct(self, x):
        w = self.w
        ops.assign(self.w, x)
        return np.sum(w * x)    # Python: w is the Parameter, so it has x's value now


class StaleReturned(Stale):
    def construct(self, x):
        w = self.w
        ops.assign(self.w, x)
        return w


@pytest.mark.parametrize("cls", [Stale, StaleReturned])
def test_a_value_read_before_a_write_and_used_after_is_refused_with_its_line(cls):
    with pytest.raises(ms.errors.UnsupportedOperationError, match="read before the Parameter was written") as info:
        ms.grad(cls())(np.array([1.0, 2.0]))
    assert "test_effects.py" in str(info.value)


class AssignInLoop(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = ms.Parameter(np.zeros(2), name="w", requires_grad=False)

    def construct(self, x):
        for _ in range(2):
            if np.sum(x) > 0:
                ops.assign(self.w, x)
        return np.sum(x)


def test_assign_errors():
    with pytest.raises(TypeError, match="inside a loop or a data-dependent branch"):
        ms.grad(AssignInLoop())(np.ones(2))

    def not_a_parameter(x):
        ops.assign(x, x * 2.0)
        return np.sum(x)
    with pytest.raises(TypeError, match="must be a Parameter"):
        ms.grad(not_a_parameter)(np.ones(2))

    class WrongShape(Stale):
        def construct(self, x):
            ops.assign(self.w, np.ones(3))
            return np.sum(x)
    with pytest.raises(ValueError, match=r"shape \(3,\), the Parameter \(2,\)"):
        ms.grad(WrongShape())(np.ones(2))

    class LosesPrecision(Counter):
        def construct(self, x):
            ops.assign(self.w, x)        # float64 into float32: refused, as set_data does
            return np.sum(x)
    with pytest.raises(TypeError, match="lose precision"):
        ms.grad(LosesPrecision())(np.ones(2))
    with pytest.raises(TypeError, match="lose precision"):
        LosesPrecision()(np.ones(2))


class Drop(nn.Cell):
    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(p=0.5)

    def construct(self, x):
        return self.drop(x) * x


@pytest.mark.parametrize("call", [
    lambda n, x: ms.jvp(n, x, np.ones_like(x)),
    lambda n, x: ms.vjp(n, x),          # vjp_fn could not redraw the mask of the call
    lambda n, x: ms.jacrev(n)(x),       # one mask per row would not be one Jacobian
    lambda n, x: ms.jacfwd(n)(x),
])
def test_dropout_in_training_mode_is_refused_by_the_jacobian_transforms_before_running(call):
    net = Drop()
    net.set_train()
    np.random.seed(5)
    with pytest.raises(TypeError, match="random numbers at each call"):
        call(net, np.ones(4))
    after = np.random.random_sample()
    np.random.seed(5)
    assert after == np.random.random_sample()     # no mask was drawn
