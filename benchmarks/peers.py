"""Other autodiff systems on the benchmark workloads, when they are installed.

Each peer differentiates the workload's own forward function: the function is
rebuilt with its module's ``np`` (and the helpers it calls) bound to the peer's
NumPy-like module, so every system runs the same source a user wrote. A workload
the peer cannot run as written (slice assignment under JAX, ``math.sin`` on a
traced value, ...) is reported as not supported, with the reason.

Peers (each optional: ``pip install autograd``, ``pip install jax jaxlib``,
``pip install torch``; a missing one is skipped):

* ``autograd``: ``autograd.grad`` over the tuple of differentiated inputs;
* ``jax``: ``jax.grad`` without jit (float64: ``jax_enable_x64``), and ``jax.jit``
  of it (compiled on the first call, before timing);
* ``torch``: eager PyTorch, ``torch.autograd.grad`` on float64 tensors, one thread.

``check(peer_call, args, want)`` compares a peer's gradient with the hand-written
one, so a peer that computes something else is reported, not timed.
"""
from __future__ import annotations

import importlib.util
import types
from dataclasses import dataclass
from typing import Callable

import numpy as np

from benchmarks.workloads import Workload, as_grad_tuple, positions


class Unsupported(Exception):
    """The peer cannot run this workload as written."""


@dataclass(frozen=True)
class Peer:
    name: str
    module: str                 # what must be importable
    build: Callable             # build(workload, inputs) -> (call, args)

    def available(self) -> bool:
        return importlib.util.find_spec(self.module) is not None


def rebound(fn, namespace: dict):
    """``fn`` with the names of ``namespace`` replacing its module's (``np`` -> the
    peer's module), and the functions of its module it calls rebound the same way."""
    scope = dict(fn.__globals__)
    scope.update(namespace)
    for name, value in list(scope.items()):
        if isinstance(value, types.FunctionType) and value.__globals__ is fn.__globals__:
            scope[name] = types.FunctionType(value.__code__, scope, value.__name__,
                                             value.__defaults__, value.__closure__)
    return types.FunctionType(fn.__code__, scope, fn.__name__, fn.__defaults__, fn.__closure__)


def _of_selected(fn, workload):
    """``loss(selected, *args)``: the workload's loss as a function of the tuple of its
    differentiated inputs (one reverse pass gives all their gradients)."""
    pos = positions(workload.grad_position)

    def loss(selected, *args):
        full = list(args)
        for p, v in zip(pos, selected):
            full[p] = v
        return fn(*full)
    return loss, pos


def _shaped(grads, workload):
    """A tuple of gradients arranged as the hand-written gradient returns them."""
    return grads[0] if isinstance(workload.grad_position, int) else tuple(grads)


# -- autograd -------------------------------------------------------------------

def _autograd(workload, inputs):
    import autograd
    import autograd.numpy as anp
    loss, pos = _of_selected(rebound(workload.fn, {"np": anp}), workload)
    grad = autograd.grad(loss)

    def call(*args):
        return _shaped(grad(tuple(args[p] for p in pos), *args), workload)
    return call, inputs


# -- JAX ------------------------------------------------------------------------

def _jax(jit: bool):
    def build(workload, inputs):
        import jax
        jax.config.update("jax_enable_x64", True)
        import jax.numpy as jnp
        loss, pos = _of_selected(rebound(workload.fn, {"np": jnp}), workload)
        grad = jax.grad(loss)
        if jit:
            grad = jax.jit(grad)
        args = tuple(jnp.asarray(a) for a in inputs)

        def call(*args):
            return _shaped(jax.block_until_ready(grad(tuple(args[p] for p in pos), *args)),
                           workload)
        return call, args
    return build


# -- PyTorch --------------------------------------------------------------------

class _TorchNumpy:
    """The NumPy names the workloads use, on torch tensors."""

    def __init__(self, torch):
        self._torch = torch
        self.max, self.min = self._reduce(torch.amax), self._reduce(torch.amin)
        self.mean, self.sum = self._reduce(torch.mean), self._reduce(torch.sum)

    def _reduce(self, op):
        def reduce(x, axis=None, keepdims=False):
            if axis is None:
                return op(x) if not keepdims else op(x, dim=tuple(range(x.ndim)), keepdim=True)
            return op(x, dim=axis, keepdim=keepdims)
        return reduce

    def __getattr__(self, name):
        try:
            return getattr(self._torch, name)
        except AttributeError:
            raise Unsupported(f"torch has no np.{name}") from None


def _torch(workload, inputs):
    import torch
    torch.set_num_threads(1)
    fn = rebound(workload.fn, {"np": _TorchNumpy(torch)})
    pos = positions(workload.grad_position)
    args = tuple(torch.from_numpy(np.array(a)).requires_grad_(i in pos)
                 if isinstance(a, np.ndarray) else a for i, a in enumerate(inputs))

    def call(*args):
        selected = [args[p] for p in pos]
        return _shaped(torch.autograd.grad(fn(*args), selected), workload)
    return call, args


PEERS = [
    Peer("autograd", "autograd", _autograd),
    Peer("jax", "jax", _jax(jit=False)),
    Peer("jax.jit", "jax", _jax(jit=True)),
    Peer("torch", "torch", _torch),
]


def to_numpy(result):
    """A peer's gradient (arrays of its own type) as NumPy arrays and floats."""
    if isinstance(result, (tuple, list)):
        return tuple(to_numpy(r) for r in result)
    if hasattr(result, "detach"):
        result = result.detach().numpy()
    arr = np.asarray(result)
    return float(arr) if arr.ndim == 0 else arr


def prepare(peer: Peer, workload: Workload, inputs, want):
    """``(call, args, None)`` ready to time (called once: JAX's jit compiles then), or
    ``(None, None, why)`` when the peer cannot run the workload or disagrees with the
    hand-written gradient."""
    try:
        call, args = peer.build(workload, inputs)
        got = to_numpy(call(*args))
    except Exception as exc:  # any failure of a peer is its own, reported, not fatal
        return None, None, f"{type(exc).__name__}: {str(exc).splitlines()[0][:80]}"
    pos = workload.grad_position
    got_t, want_t = as_grad_tuple(got, pos), as_grad_tuple(want, pos)
    if len(got_t) != len(want_t) or not all(
            np.allclose(g, w, rtol=1e-6, atol=1e-9) for g, w in zip(got_t, want_t)):
        return None, None, "gradient differs from the hand-written one"
    return call, args, None
