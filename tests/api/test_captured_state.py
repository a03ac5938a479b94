"""Captured state is read at call time: globals, closure variables, attributes of
objects and Cells, default values and what containers hold.

Every test changes what a compiled gradient reads from outside its arguments after
the first call (rebinding it or mutating it in place) and checks the next result
against central finite differences of the same Python function, run on the state
as it is then. Compilations are counted by wrapping ``build_entry``.
"""
from __future__ import annotations

import importlib
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import ad_compiler as ms
import ad_compiler.api.compiler as compiler_module
import ad_compiler.api.grad as grad_module
from ad_compiler.codegen import cache
from ad_compiler import Parameter, Tensor, nn
from ad_compiler.errors import UnsupportedOperationError, UnsupportedSyntaxError
from tests.finite_differences import directional


@pytest.fixture
def compiles(monkeypatch):
    """The list of functions compiled (one item per call of ``build_entry``), from an
    empty cache."""
    cache.clear()
    calls = []
    original = compiler_module.build_entry

    def counting(fn, *args, **kwargs):
        calls.append(fn)
        return original(fn, *args, **kwargs)

    monkeypatch.setattr(compiler_module, "build_entry", counting)
    monkeypatch.setattr(grad_module, "build_entry", counting)
    return calls


X = np.array([0.3, -0.5, 0.8])


def check(api, gradient_function, fn, *args, position=0):
    """The gradient now equals finite differences of ``fn`` on the state now."""
    api.assert_grad(gradient_function(*args), api.fd_grad(fn, args, position), args[position])


# -- globals ------------------------------------------------------------------------

W = np.ones(3)
N_STEPS = 2
SCALE = 1.5
USE_SIN = True
MODE = "sum"


def uses_globals(x):
    s = 0.0
    for _ in range(N_STEPS):
        s = s + np.sum(x * W) * SCALE
    if USE_SIN:
        s = s + np.sum(np.sin(x))
    return s if MODE == "sum" else s * 2.0


@pytest.fixture
def restore_globals():
    saved = dict(W=W.copy(), N_STEPS=N_STEPS, SCALE=SCALE, USE_SIN=USE_SIN, MODE=MODE)
    yield
    globals().update(saved)


def test_a_rebound_global_array_is_read_at_call_time(api, compiles, restore_globals):
    global W
    g = ms.grad(uses_globals)
    check(api, g, uses_globals, X)
    W = np.full(3, 9.0)
    check(api, g, uses_globals, X)
    W = np.array([1.0, -2.0, 0.5])
    check(api, g, uses_globals, X)
    assert len(compiles) == 1, "a new array of the same type needs no compilation"


def test_a_global_array_mutated_in_place_is_seen(api, compiles, restore_globals):
    g = ms.grad(uses_globals)
    check(api, g, uses_globals, X)
    W[0] = -4.0
    W[1:] *= 3.0
    check(api, g, uses_globals, X)
    assert len(compiles) == 1


def test_a_new_shape_or_dtype_of_a_captured_array_compiles_again(api, compiles,
                                                                restore_globals):
    global W
    g = ms.grad(uses_globals)
    check(api, g, uses_globals, X)
    W = np.float32(2.0) * np.ones(3, np.float32)
    check(api, g, uses_globals, X)
    W = np.ones((2, 3))        # broadcasts: the gradient sums over the new axis
    check(api, g, uses_globals, X)
    W = Tensor(np.array([0.5, 1.0, 2.0]))
    check(api, g, uses_globals, X)
    assert len(compiles) == 4


@pytest.mark.parametrize("name, value", [("N_STEPS", 3), ("N_STEPS", 0), ("SCALE", -0.25),
                                         ("USE_SIN", False), ("MODE", "double")])
def test_a_changed_python_value_compiles_again(api, compiles, restore_globals, name, value):
    g = ms.grad(uses_globals)
    check(api, g, uses_globals, X)
    globals()[name] = value
    check(api, g, uses_globals, X)
    assert len(compiles) == 2
    check(api, g, uses_globals, X)
    assert len(compiles) == 2, "the new value's entry is reused"


def test_an_equal_value_needs_no_compilation(api, compiles, restore_globals):
    global SCALE, MODE
    g = ms.grad(uses_globals)
    check(api, g, uses_globals, X)
    SCALE, MODE = float("1.5"), "".join(["s", "um"])   # equal, other objects
    check(api, g, uses_globals, X)
    assert len(compiles) == 1


def helper(x):
    return np.sin(x) * 2.0


def calls_helper(x):
    return np.sum(helper(x))


def test_a_rebound_helper_function_compiles_again(api, compiles):
    global helper
    saved = helper
    g = ms.grad(calls_helper)
    try:
        check(api, g, calls_helper, X)

        def helper(x):  # noqa: F811  (rebinding the global is the point)
            return np.cos(x) * x
        check(api, g, calls_helper, X)
        assert len(compiles) == 2
    finally:
        helper = saved


# -- closures, defaults, containers ---------------------------------------------------

def make_closure():
    w = np.array([1.0, 2.0, 3.0])
    power = 2

    def f(x):
        return np.sum(w * x ** power)

    def set_state(new_w=None, new_power=None):
        nonlocal w, power
        if new_w is not None:
            w = new_w
        if new_power is not None:
            power = new_power
    return f, set_state


def test_closure_variables_are_read_at_call_time(api, compiles):
    f, set_state = make_closure()
    g = ms.grad(f)
    check(api, g, f, X)
    set_state(new_w=np.array([-1.0, 0.5, 4.0]))
    check(api, g, f, X)
    assert len(compiles) == 1
    set_state(new_power=3)
    check(api, g, f, X)
    assert len(compiles) == 2


def with_default(x, w=np.array([1.0, 2.0, 3.0]), n=2):
    return np.sum(w * x ** n)


def test_a_default_array_mutated_in_place_is_seen(api, compiles):
    g = ms.grad(with_default)
    check(api, g, with_default, X)
    with_default.__defaults__[0][:] = [0.5, -1.0, 7.0]
    check(api, g, with_default, X)
    assert len(compiles) == 1


TABLE = {"w": np.array([1.0, 2.0, 3.0]), "layers": [np.ones(3), np.full(3, 2.0)], "n": 2}


def uses_table(x):
    y = x * TABLE["w"]
    for layer in TABLE["layers"]:
        y = np.tanh(y * layer)
    return np.sum(y) * TABLE["n"]


def test_arrays_in_captured_containers_are_read_at_call_time(api, compiles):
    saved = dict(TABLE, layers=list(TABLE["layers"]))
    g = ms.grad(uses_table)
    try:
        check(api, g, uses_table, X)
        TABLE["w"] = np.array([-1.0, 0.25, 2.0])
        TABLE["layers"][1][:] = [0.5, -0.5, 3.0]
        check(api, g, uses_table, X)
        assert len(compiles) == 1
        TABLE["layers"].append(np.full(3, 0.5))   # one more unrolled step
        TABLE["n"] = 3
        check(api, g, uses_table, X)
        assert len(compiles) == 2
    finally:
        TABLE.clear()
        TABLE.update(saved)


MASK = np.array([True, False, True])


def uses_mask(x):
    return np.sum(x[MASK] ** 2)


def test_a_captured_mask_is_folded_and_guarded_by_its_contents(api, compiles):
    g = ms.grad(uses_mask)
    check(api, g, uses_mask, X)
    MASK[1] = True
    try:
        check(api, g, uses_mask, X)
        assert len(compiles) == 2
    finally:
        MASK[1] = False


# -- objects and Cells -------------------------------------------------------------------

class Model:
    """A plain object: its method reads its attributes."""

    def __init__(self):
        self.w = np.array([0.5, 1.0, -1.0])
        self.steps = 2
        self.config = Config()

    def loss(self, x):
        y = x
        for _ in range(self.steps):
            y = np.tanh(y * self.w) * self.config.gain
        return np.sum(y)


class Config:
    def __init__(self):
        self.gain = 2.0


def test_attributes_of_an_object_are_read_at_call_time(api, compiles):
    model = Model()
    g = ms.grad(model.loss)
    check(api, g, model.loss, X)
    model.w = np.array([2.0, -0.5, 0.25])
    check(api, g, model.loss, X)
    model.w *= -1.0
    check(api, g, model.loss, X)
    assert len(compiles) == 1
    model.config.gain = 0.5
    check(api, g, model.loss, X)
    model.config = Config()          # another object with the old gain
    check(api, g, model.loss, X)
    model.steps = 3
    check(api, g, model.loss, X)


class Computed:
    """Properties that make a new object or array at each read."""

    def __init__(self):
        self.k, self.w = 2.0, np.array([1.0, -1.0, 0.5])

    @property
    def config(self):
        config = Config()
        config.gain = self.k
        return config

    @property
    def weights(self):
        return self.w * 2.0

    def loss(self, x):
        return np.sum(np.sin(x) * self.weights) * self.config.gain


def test_properties_are_read_at_call_time(api, compiles):
    obj = Computed()
    g = ms.grad(obj.loss)
    check(api, g, obj.loss, X)
    check(api, g, obj.loss, X)
    assert len(compiles) == 1, "a new object of the same type at each read needs no compilation"
    obj.w = np.array([3.0, 0.0, 1.0])
    check(api, g, obj.loss, X)
    obj.k = -1.0
    check(api, g, obj.loss, X)
    assert len(compiles) == 2


class Ticking:
    """A property that gives a new number at each read cannot be folded."""

    def __init__(self):
        self.ticks = 0

    @property
    def k(self):
        self.ticks += 1
        return float(self.ticks)

    def loss(self, x):
        return np.sum(x) * self.k


def test_a_value_that_changes_at_every_read_is_read_once_per_call(api):
    """Python reads the property once per call; each call of the gradient gives the
    result for a value read during the call (it compiles again each time, since
    the folded value is never the same)."""
    obj = Ticking()
    g = ms.grad(obj.loss)
    for _ in range(3):
        before = obj.ticks
        got = g(X)
        k = got[0]           # the value of one read made during this call
        assert before < k <= obj.ticks
        api.assert_grad(got, np.full(3, k), X)


MODEL = Model()


def reads_global_object(x):
    return MODEL.loss(x) + np.sum(x * MODEL.w)


def test_attributes_of_a_global_object_are_read_at_call_time(api):
    g = ms.grad(reads_global_object)
    check(api, g, reads_global_object, X)
    MODEL.w = np.array([3.0, 1.0, -2.0])
    MODEL.config.gain = -1.0
    check(api, g, reads_global_object, X)


class Block(nn.Cell):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale
        self.w = Parameter(Tensor(np.array([0.5, -1.0, 2.0])), name="w")

    def construct(self, x):
        return np.tanh(x * self.w) * self.scale


class OtherBlock(nn.Cell):
    def construct(self, x):
        return np.sin(x) * 3.0


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.offset = np.array([0.1, 0.2, 0.3])   # a plain array, not a Parameter
        self.block = Block(2.0)
        self.square = True

    def construct(self, x):
        y = self.block(x + self.offset)
        if self.square:
            y = y * y
        return np.sum(y)


def net_as_function(net):
    return lambda x: net(x)


def test_cell_attributes_are_read_at_call_time(api, compiles):
    net = Net()
    g = ms.grad(net)
    ref = net_as_function(net)
    check(api, g, ref, X)
    net.offset = np.array([-1.0, 0.0, 1.0])
    check(api, g, ref, X)
    net.offset[0] = 5.0
    check(api, g, ref, X)
    net.block.w.set_data(Tensor(np.array([1.0, 1.0, 1.0])))
    check(api, g, ref, X)
    assert len(compiles) == 1
    net.square = False
    check(api, g, ref, X)
    net.block.scale = -3.0
    check(api, g, ref, X)
    net.block = OtherBlock()          # a sub-cell swapped
    check(api, g, ref, X)


def test_weights_follow_a_replaced_parameter(api):
    net = Net()
    g = ms.grad(net, grad_position=None, weights=net.trainable_params())
    g(X)
    net.block.w = Parameter(Tensor(np.array([2.0, 2.0, -2.0])), name="w")
    g = ms.grad(net, grad_position=None, weights=net.trainable_params())

    def ref(w):
        return np.sum((np.tanh((X + net.offset) * w) * 2.0) ** 2)
    api.assert_grad(g(X)[0], api.fd_grad(ref, (net.block.w.asnumpy(),), 0), net.block.w)


class Scale(nn.Cell):
    def __init__(self, s):
        super().__init__()
        self.s = s

    def construct(self, x):
        return x * self.s


class Stack(nn.Cell):
    def __init__(self):
        super().__init__()
        self.layers = nn.CellList([Scale(2.0), Scale(3.0)])
        self.seq = nn.SequentialCell([Scale(1.0), Scale(5.0)])

    def construct(self, x):
        for layer in self.layers:
            x = layer(x)
        for i, layer in enumerate(self.layers):
            x = layer(x) * (i + 1)
        for i in range(len(self.layers)):
            x = np.sin(self.layers[i](x))
        return np.sum(self.seq(x))


@pytest.mark.parametrize("change", ["attribute", "setitem", "append", "sequential"])
def test_cells_in_containers_are_read_at_call_time(api, change):
    net = Stack()
    g = ms.grad(net)
    ref = net_as_function(net)
    check(api, g, ref, X)
    if change == "attribute":
        net.layers[0].s = 0.5
    elif change == "setitem":
        net.layers[1] = Scale(-1.0)
    elif change == "append":
        net.layers.append(Scale(0.25))
    else:
        net.seq[1].s = -2.0
    check(api, g, ref, X)


class Holder:
    __slots__ = ("w", "n")

    def __init__(self):
        self.w, self.n = np.array([1.0, 2.0, 3.0]), 2

    def loss(self, x):
        return np.sum(self.w * x ** self.n)


def test_attributes_of_a_slots_object_are_read_at_call_time(api, compiles):
    h = Holder()
    g = ms.grad(h.loss)
    check(api, g, h.loss, X)
    h.w = np.array([0.0, -1.0, 1.0])
    check(api, g, h.loss, X)
    h.n = 3
    check(api, g, h.loss, X)
    assert len(compiles) == 2


class Hostile:
    """Attribute names and keys that are not identifiers."""

    NAME = "w\nimport os; os._exit(3)"

    def __init__(self):
        setattr(self, self.NAME, np.array([1.0, 2.0, 3.0]))
        self.table = {"k'] + 1 #": 2.0}

    def loss(self, x):
        return np.sum(x * getattr(self, Hostile.NAME)) * self.table["k'] + 1 #"]


def test_names_read_from_objects_never_become_code(api):
    obj = Hostile()
    g = ms.grad(obj.loss)
    check(api, g, obj.loss, X)
    setattr(obj, Hostile.NAME, np.array([-1.0, 0.0, 4.0]))
    obj.table["k'] + 1 #"] = -3.0
    check(api, g, obj.loss, X)
    source = g.entry_for((X,)).reader.source
    assert "import" not in source and "k'" not in source


# -- other transforms ------------------------------------------------------------------

def test_a_gradient_inside_a_compiled_function_reads_the_state_now(api, restore_globals):
    global W
    inner = ms.grad(uses_globals)

    def outer(x):
        return np.sum(inner(x) * x)
    g = ms.grad(outer)
    for w in (np.ones(3), np.array([2.0, -1.0, 0.5])):
        W = w
        # d/dx sum((N*SCALE*W + cos x) * x) = N*SCALE*W + cos x - x sin x
        want = N_STEPS * SCALE * W + np.cos(X) - X * np.sin(X)
        api.assert_grad(g(X), want, X)


def straight(x):
    return np.sum(np.sin(x) * W) * SCALE


def test_jvp_reads_the_state_now(restore_globals):
    global W, SCALE
    v = np.array([1.0, 0.0, -1.0])
    for w, scale in ((np.ones(3), 1.5), (np.array([2.0, -3.0, 0.5]), 1.5), (W, -2.0)):
        W, SCALE = w, scale
        _, tangent = ms.jvp(straight, X, v)
        want = directional(straight, [X], [v])
        np.testing.assert_allclose(tangent, want, rtol=1e-6)


class TwoMethods:
    def __init__(self):
        self.w = np.array([1.0, 2.0, 3.0])

    def double(self, x):
        return x * self.w * 2.0

    def triple(self, x):
        return x * self.w * 3.0


def test_jvp_of_two_methods_of_one_object():
    obj, v = TwoMethods(), np.array([1.0, 0.0, -1.0])
    np.testing.assert_allclose(ms.jvp(obj.double, X, v)[1], obj.w * 2.0 * v)
    np.testing.assert_allclose(ms.jvp(obj.triple, X, v)[1], obj.w * 3.0 * v)


# -- refused: writing into captured arrays --------------------------------------------------

BUFFER = np.zeros(3)


def writes_global(x):
    BUFFER[0] = 1.0
    return np.sum(x * BUFFER)


def writes_alias(x):
    b = BUFFER
    b += x
    return np.sum(b)


def writes_view(x):
    v = BUFFER[1:]
    v[0] = 2.0
    return np.sum(x)


class Buffered(nn.Cell):
    def __init__(self):
        super().__init__()
        self.buf = np.zeros(3)

    def construct(self, x):
        b = self.buf
        b[0] = 1.0
        return np.sum(x * b)


@pytest.mark.parametrize("fn, text", [(writes_global, "BUFFER[0] = 1.0"), (writes_alias, "b += x"),
                                      (writes_view, "v[0] = 2.0"), (Buffered(), "b[0] = 1.0")],
                         ids=["global", "alias +=", "view", "cell attribute"])
def test_writing_into_a_captured_array_is_refused(fn, text):
    with pytest.raises(UnsupportedOperationError) as info:
        ms.grad(fn)(X)
    message = str(info.value)
    assert "test_captured_state.py" in message and text in message
    assert "does not own" in message and "copy" in message
    assert not BUFFER.any(), "nothing ran"


# -- threads -------------------------------------------------------------------------------

class Scaled(nn.Cell):
    def __init__(self):
        super().__init__()
        self.scale = 1.0
        self.w = np.ones(3)

    def construct(self, x):
        return np.sum(np.sin(x) * self.w) * self.scale


@pytest.mark.parametrize("attribute", ["scale", "w"])
def test_a_cell_attribute_set_while_threads_call_is_never_stale(attribute):
    """Each worker calls the gradient repeatedly; the main thread sets the attribute
    and then tells the workers: every call a worker starts after that must see it."""
    net = Scaled()
    g = ms.grad(net)
    g(X)
    n_threads, errors = 4, []
    version = [0]
    stop = threading.Event()

    def value_of(k):
        return float(k + 1) if attribute == "scale" else np.full(3, float(k + 1))

    def worker():
        while not stop.is_set():
            k = version[0]            # read before the call: the state is at least k
            try:
                got = g(X)
            except BaseException as exc:  # reported below
                errors.append((k, exc))
                return
            if attribute == "scale":
                want_min = np.cos(X) * 1.0 * (k + 1)
            else:
                want_min = np.cos(X) * (k + 1) * net.scale
            if not np.all(np.abs(got) >= np.abs(want_min) - 1e-12):
                errors.append((k, got))
                return

    threads = [threading.Thread(target=worker) for _ in range(n_threads)]
    for t in threads:
        t.start()
    try:
        for k in range(1, 20):
            setattr(net, attribute, value_of(k))
            version[0] = k
            time.sleep(0.002)     # let the workers call with this version
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert not errors, f"stale gradient after version {errors[0][0]}: {errors[0][1]}"
    np.testing.assert_allclose(g(X), np.cos(X) * 20.0)


def test_a_compilation_that_straddles_a_change_is_not_kept(api, monkeypatch):
    """A first call compiles with the old attribute while another thread changes it
    and calls with another signature: later calls must see the new value."""
    net = Scaled()
    g = ms.grad(net)
    compiled_old, resume = threading.Event(), threading.Event()
    original = compiler_module.build_entry

    def slow(fn, *args, **kwargs):
        entry = original(fn, *args, **kwargs)
        if not compiled_old.is_set():  # the first compilation (builds run on a worker)
            compiled_old.set()
            resume.wait(10)
        return entry
    monkeypatch.setattr(grad_module, "build_entry", slow)
    first = threading.Thread(target=g, args=(X,))
    first.start()
    assert compiled_old.wait(10)
    net.scale = 2.0
    x32 = X.astype(np.float32)
    second = threading.Thread(target=g, args=(x32,))
    second.start()
    second.join(0.2)       # it waits for the first compilation, or is done
    resume.set()
    first.join()
    second.join()
    api.assert_grad(g(X), np.cos(X) * 2.0, X)
    api.assert_grad(g(x32), np.cos(x32) * 2.0, x32)


def test_threads_compiling_while_a_global_changes_never_return_stale(restore_globals):
    global N_STEPS
    results, errors = [], []

    def worker(n):
        try:
            g = ms.grad(uses_globals)
            for _ in range(20):
                results.append(g(X))
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for n in (1, 2, 3, 4):
        N_STEPS = n
    for t in threads:
        t.join()
    assert not errors, errors
    N_STEPS = 4
    np.testing.assert_allclose(ms.grad(uses_globals)(X),
                               np.asarray(W) * SCALE * 4 + np.cos(X))


# -- source edited on disk after import ----------------------------------------------------

def test_a_source_file_edited_after_import_does_not_change_the_function(tmp_path, monkeypatch):
    module = tmp_path / "edited_after_import.py"
    module.write_text(textwrap.dedent("""
        import numpy as np

        def f(x):
            return np.sum(x * 2.0)

        def g(x):
            return np.sum(x * 3.0)
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module("edited_after_import")
    try:
        np.testing.assert_allclose(ms.grad(mod.f)(X), np.full(3, 2.0))
        module.write_text(module.read_text().replace("2.0", "5.25").replace("3.0", "7.5"))
        np.testing.assert_allclose(ms.grad(mod.f)(X), np.full(3, 2.0))
        try:
            got = ms.grad(mod.g)(X)   # never compiled before the edit
        except UnsupportedSyntaxError as exc:
            assert "edited_after_import.py" in str(exc) and "changed" in str(exc)
        else:
            np.testing.assert_allclose(got, np.full(3, 3.0))
        mod = importlib.reload(mod)     # the new text, once Python runs it
        np.testing.assert_allclose(ms.grad(mod.f)(X), np.full(3, 5.25))
        np.testing.assert_allclose(ms.grad(mod.g)(X), np.full(3, 7.5))
    finally:
        sys.modules.pop("edited_after_import", None)


def _square(x):
    return x * x


def _cube(x):
    return x * x * x


def _uses_square(x):
    return np.sum(_square(x))


def _sum_squares(x):
    return np.sum(x * x)


def _sum_cubes(x):
    return np.sum(x * x * x)


def test_replacing_a_functions_code_compiles_again(api):
    """A reloader (IPython's autoreload) replaces ``__code__`` in place."""
    import types
    x = np.array([1.0, -2.0, 0.5])
    top = types.FunctionType(_sum_squares.__code__, globals(), "top")
    g = ms.grad(top)
    np.testing.assert_allclose(g(x), 2 * x)
    top.__code__ = _sum_cubes.__code__
    np.testing.assert_allclose(g(x), api.fd_grad(_sum_cubes, [x], 0), rtol=1e-6)
    helper = _square.__code__
    try:
        g = ms.grad(_uses_square)
        np.testing.assert_allclose(g(x), 2 * x)
        _square.__code__ = _cube.__code__
        np.testing.assert_allclose(g(x), api.fd_grad(_uses_square, [x], 0), rtol=1e-6)
    finally:
        _square.__code__ = helper
