"""One training step of LeNet-5 and of a 3-layer MLP: ad_compiler, hand-written NumPy, PyTorch.

Usage::

    python -m benchmarks.training [--rounds N] [--batch B]

A step is the forward pass, the gradient of the mean softmax cross-entropy in every
Parameter and MindSpore's Momentum update (``v = 0.9 v + g; p -= 0.01 v``):

- ``ad_compiler``: ``nn.TrainOneStepCell(nn.WithLossCell(net, loss), nn.Momentum(...))``
  on the networks of examples/lenet.py and examples/mlp.py;
- ``numpy``: the same step written by hand below (im2col convolutions, reshaped
  2x2 max pooling, col2im for the gradient in a convolution's input), which is
  first checked against the compiled gradients and against central finite
  differences in float64;
- ``torch``: the same networks and update in PyTorch on the CPU with one thread,
  when ``import torch`` works (otherwise the column says so).

BLAS gets one thread (``OPENBLAS_NUM_THREADS`` and friends are set before NumPy is
imported, unless already set, and threadpoolctl limits it when installed), so the
three see the same single core. The steps are timed interleaved, a batch of each
per round, the order rotating, in CPU time (``time.process_time``: on a shared
machine other processes add wall time, not our CPU time); each is charged its
median. Ratios are ``ad_compiler / numpy`` and ``ad_compiler / torch``.
"""
from __future__ import annotations

import os

if __name__ == "__main__":  # before NumPy starts its BLAS (importing this module does not)
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(ROOT))

import gc  # noqa: E402
import time  # noqa: E402

LR, MOMENTUM = 0.01, 0.9


def limit_blas_threads():
    """One BLAS thread through threadpoolctl when it is installed (else the env vars above)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return None
    return threadpool_limits(1)


# -- hand-written NumPy ------------------------------------------------------------------

def _im2col(x, k):
    """``(C * k * k, N * oh * ow)`` columns of the valid, stride-1 windows of ``x``."""
    win = np.lib.stride_tricks.sliding_window_view(x, (k, k), axis=(2, 3))  # N C oh ow k k
    return win.transpose(1, 4, 5, 0, 2, 3).reshape(x.shape[1] * k * k, -1)


def _conv_forward(x, w):
    n, (o, c, k, _) = x.shape[0], w.shape
    cols = _im2col(x, k)
    oh, ow = x.shape[2] - k + 1, x.shape[3] - k + 1
    y = (w.reshape(o, -1) @ cols).reshape(o, n, oh, ow).transpose(1, 0, 2, 3)
    return y, cols


def _conv_backward(dy, w, cols, x_shape, need_dx=True):
    """``(dx, dw)`` of a valid, stride-1 convolution (``dx`` by col2im)."""
    n, c, h, wd = x_shape
    o, _, k, _ = w.shape
    oh, ow = dy.shape[2:]
    dym = dy.transpose(1, 0, 2, 3).reshape(o, -1)
    dw = (dym @ cols.T).reshape(w.shape)
    if not need_dx:
        return None, dw
    dcols = (w.reshape(o, -1).T @ dym).reshape(c, k, k, n, oh, ow)
    dx = np.zeros((n, c, h, wd), dy.dtype)
    for i in range(k):
        for j in range(k):
            dx[:, :, i:i + oh, j:j + ow] += dcols[:, i, j].transpose(1, 0, 2, 3)
    return dx, dw


_CORNERS = ((0, 0), (0, 1), (1, 0), (1, 1))  # the 2x2 window in row-major order


def _pool_forward(x):
    """2x2 max pooling, stride 2: the maximum of the four strided views."""
    return np.maximum(np.maximum(x[:, :, 0::2, 0::2], x[:, :, 0::2, 1::2]),
                      np.maximum(x[:, :, 1::2, 0::2], x[:, :, 1::2, 1::2]))


def _pool_backward(dp, p, x):
    """To the first maximum of each 2x2 window (what np.argmax and ad_compiler pick)."""
    dx = np.zeros_like(x)
    taken = np.zeros(p.shape, bool)
    for i, j in _CORNERS:
        hit = x[:, :, i::2, j::2] == p
        hit &= ~taken
        taken |= hit
        dx[:, :, i::2, j::2] = dp * hit
    return dx


def _softmax_xent(logits, labels):
    """Mean cross-entropy and its gradient in the logits."""
    shifted = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(shifted)
    total = e.sum(axis=1, keepdims=True)
    n = len(labels)
    loss = np.mean(np.log(total[:, 0]) - shifted[np.arange(n), labels])
    d = e / total
    d[np.arange(n), labels] -= 1.0
    return loss, d / np.asarray(n, logits.dtype)


def _dense_backward(d, x, w, need_dx=True):
    """``(dx, dw, db)`` of ``x @ w.T + b``; ``d`` already through the activation."""
    return (d @ w if need_dx else None), d.T @ x, d.sum(axis=0)


def lenet_loss_and_grads(p, x, labels):
    """``loss, [grad per Parameter]`` of LeNet-5 (examples/lenet.py) by hand."""
    w1, w2, f1, b1, f2, b2, f3, b3 = p
    y1, cols1 = _conv_forward(x, w1)
    r1 = np.maximum(y1, 0)
    p1 = _pool_forward(r1)
    y2, cols2 = _conv_forward(p1, w2)
    r2 = np.maximum(y2, 0)
    p2 = _pool_forward(r2)
    flat = p2.reshape(len(x), -1)
    h1 = np.maximum(flat @ f1.T + b1, 0)
    h2 = np.maximum(h1 @ f2.T + b2, 0)
    logits = h2 @ f3.T + b3
    loss, d = _softmax_xent(logits, labels)
    dh2, df3, db3 = _dense_backward(d, h2, f3)
    dh1, df2, db2 = _dense_backward(dh2 * (h2 > 0), h1, f2)
    dflat, df1, db1 = _dense_backward(dh1 * (h1 > 0), flat, f1)
    dr2 = _pool_backward(dflat.reshape(p2.shape), p2, r2)
    dp1, dw2 = _conv_backward(dr2 * (y2 > 0), w2, cols2, p1.shape)
    dr1 = _pool_backward(dp1, p1, r1)
    _, dw1 = _conv_backward(dr1 * (y1 > 0), w1, cols1, x.shape, need_dx=False)
    return loss, [dw1, dw2, df1, db1, df2, db2, df3, db3]


def mlp_loss_and_grads(p, x, labels):
    """``loss, [grad per Parameter]`` of the 3-layer MLP (examples/mlp.py) by hand."""
    f1, b1, f2, b2, f3, b3 = p
    flat = x.reshape(len(x), -1)
    h1 = np.maximum(flat @ f1.T + b1, 0)
    h2 = np.maximum(h1 @ f2.T + b2, 0)
    loss, d = _softmax_xent(h2 @ f3.T + b3, labels)
    dh2, df3, db3 = _dense_backward(d, h2, f3)
    dh1, df2, db2 = _dense_backward(dh2 * (h2 > 0), h1, f2)
    _, df1, db1 = _dense_backward(dh1 * (h1 > 0), flat, f1, need_dx=False)
    return loss, [df1, db1, df2, db2, df3, db3]


class NumpyStep:
    """Hand-written training step: the gradients, then Momentum in place."""

    def __init__(self, loss_and_grads, params):
        self.loss_and_grads = loss_and_grads
        self.params = [np.array(q) for q in params]
        self.moments = [np.zeros_like(q) for q in self.params]

    def __call__(self, x, labels):
        loss, grads = self.loss_and_grads(self.params, x, labels)
        for q, v, g in zip(self.params, self.moments, grads):
            v *= MOMENTUM
            v += g
            q -= LR * v
        return loss


# -- the checks --------------------------------------------------------------------------

def _finite_difference_check(loss_and_grads, params, x, labels, rng, eps=1e-7):
    """Central differences (float64) of a few coordinates of every Parameter, on four
    images (fewer ReLU and pooling kinks within ``eps`` of a coordinate)."""
    params = [q.astype(np.float64) for q in params]
    x, labels = x[:4].astype(np.float64), labels[:4]
    _, grads = loss_and_grads(params, x, labels)
    for q, g in zip(params, grads):
        for i in rng.choice(q.size, min(q.size, 4), replace=False):
            old = q.flat[i]
            q.flat[i] = old + eps
            up = loss_and_grads(params, x, labels)[0]
            q.flat[i] = old - eps
            down = loss_and_grads(params, x, labels)[0]
            q.flat[i] = old
            fd = (up - down) / (2 * eps)
            if not np.isclose(g.flat[i], fd, rtol=1e-4, atol=1e-7):
                raise SystemExit(f"hand-written gradient {g.flat[i]} != finite difference {fd}")


def check(name, net, loss_and_grads, x, labels, rng):
    """The hand-written gradients equal finite differences and ad_compiler's, and three
    steps of each leave the same Parameters."""
    import ad_compiler as ms
    from ad_compiler import nn
    params = [p.asnumpy().copy() for p in net.trainable_params()]
    _finite_difference_check(loss_and_grads, params, x, labels, rng)
    cell = nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"))
    loss, grads = ms.value_and_grad(cell, None, net.trainable_params())(x, labels)
    want_loss, want = loss_and_grads(params, x, labels)
    if not np.isclose(float(loss), want_loss, rtol=1e-5) or not all(
            np.allclose(g.asnumpy(), w, rtol=1e-4, atol=1e-6) for g, w in zip(grads, want)):
        raise SystemExit(f"{name}: ad_compiler's gradients differ from the hand-written ones")
    compiled, hand = make_compiled_step(net), NumpyStep(loss_and_grads, params)
    for _ in range(3):
        compiled(x, labels)
        hand(x, labels)
    if not all(np.allclose(p.asnumpy(), q, rtol=1e-4, atol=1e-6)
               for p, q in zip(net.trainable_params(), hand.params)):
        raise SystemExit(f"{name}: three Momentum steps end at different Parameters")


# -- the three steps ---------------------------------------------------------------------

def make_compiled_step(net):
    from ad_compiler import nn
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    optimizer = nn.Momentum(net.trainable_params(), learning_rate=LR, momentum=MOMENTUM)
    train = nn.TrainOneStepCell(nn.WithLossCell(net, loss), optimizer)
    train.set_train()
    return train


def make_torch_step(kind, params):
    """The same step in PyTorch (CPU, one thread), or None without torch."""
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(1)
    t = torch.nn
    if kind == "lenet":
        model = t.Sequential(t.Conv2d(1, 6, 5, bias=False), t.ReLU(), t.MaxPool2d(2),
                             t.Conv2d(6, 16, 5, bias=False), t.ReLU(), t.MaxPool2d(2),
                             t.Flatten(), t.Linear(400, 120), t.ReLU(), t.Linear(120, 84),
                             t.ReLU(), t.Linear(84, 10))
    else:
        model = t.Sequential(t.Flatten(), t.Linear(1024, 128), t.ReLU(), t.Linear(128, 64),
                             t.ReLU(), t.Linear(64, 10))
    with torch.no_grad():
        for q, value in zip(model.parameters(), params):
            q.copy_(torch.from_numpy(np.array(value)))
    optimizer = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    loss_fn = t.CrossEntropyLoss()

    def step(x, labels):
        optimizer.zero_grad()
        loss = loss_fn(model(x), labels)
        loss.backward()
        optimizer.step()
        return loss

    def convert(x, labels):
        return torch.from_numpy(x), torch.from_numpy(labels.astype(np.int64))
    return step, convert


def workloads(batch):
    """``[(name, network, hand-written loss_and_grads, input shape)]``."""
    if str(ROOT / "examples") not in sys.path:
        sys.path.insert(0, str(ROOT / "examples"))
    from lenet import LeNet5
    from mlp import Network
    return [("lenet5", LeNet5(), lenet_loss_and_grads, (batch, 1, 32, 32)),
            ("mlp", Network(), mlp_loss_and_grads, (batch, 1, 32, 32))]


def time_steps(calls, rounds, steps=3):
    """Median CPU ms per step of each ``(step, args)``: a batch of ``steps`` steps of each
    per round, the order rotating between rounds, the garbage collector off.

    CPU time (``time.process_time``), not wall time: with one BLAS thread it is the
    step's own work, which other processes on a shared machine do not add to.
    """
    times = [[] for _ in calls]
    enabled = gc.isenabled()
    for step, args in calls:
        step(*args)  # warm up (and compile)
    gc.disable()
    try:
        for r in range(rounds):
            order = list(range(len(calls)))
            for i in order[r % len(order):] + order[:r % len(order)]:
                step, args = calls[i]
                start = time.process_time()
                for _ in range(steps):
                    step(*args)
                times[i].append((time.process_time() - start) / steps * 1e3)
    finally:
        if enabled:
            gc.enable()
    return [float(np.median(t)) for t in times]


def measure(rounds=30, batch=32):
    """``[(name, ad_compiler ms, numpy ms, torch ms or None)]``: CPU time per training step."""
    rng = np.random.default_rng(0)
    np.random.seed(0)
    rows = []
    for name, net, loss_and_grads, shape in workloads(batch):
        x = rng.standard_normal(shape).astype(np.float32)
        labels = rng.integers(0, 10, batch).astype(np.int32)
        check(name, net, loss_and_grads, x, labels, rng)
        params = [p.asnumpy().copy() for p in net.trainable_params()]
        calls = [(make_compiled_step(net), (x, labels)),
                 (NumpyStep(loss_and_grads, params), (x, labels))]
        torch_step = make_torch_step("lenet" if name == "lenet5" else "mlp", params)
        if torch_step is not None:
            step, convert = torch_step
            calls.append((step, convert(x, labels)))
        steps = 3 if name == "lenet5" else 100
        ms_ = time_steps(calls, rounds, steps)
        rows.append((name, ms_[0], ms_[1], ms_[2] if len(ms_) > 2 else None))
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.training")
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--batch", type=int, default=32)
    args = parser.parse_args(argv)
    limit_blas_threads()
    rows = measure(args.rounds, args.batch)
    print(f"one training step, batch {args.batch}, median CPU ms over {args.rounds} rounds, "
          f"one BLAS thread (OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')})")
    print(f"{'workload':10s} {'ad_compiler ms':>15s} {'numpy ms':>10s} {'torch ms':>10s} "
          f"{'ad/numpy':>9s} {'ad/torch':>9s}")
    for name, ad, hand, torch_ms in rows:
        torch_cols = (f"{torch_ms:10.3f} {ad / torch_ms:9.2f}" if torch_ms is not None
                      else f"{'-':>10s} {'-':>9s}")
        print(f"{name:10s} {ad:15.3f} {hand:10.3f} {torch_cols.split()[0]:>10s} "
              f"{ad / hand:9.2f} {torch_cols.split()[1]:>9s}")
    if rows[0][3] is None:
        print("torch: not installed, skipped")
    return rows


if __name__ == "__main__":
    main()
