"""save_checkpoint / load_checkpoint / load_param_into_net: round trips, MindSpore's
return values, filters, errors; the file is a plain .npz archive."""
import numpy as np
import pytest

import ad_compiler as ms
from ad_compiler import nn


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(4, 3)
        self.bn = nn.BatchNorm1d(3)

    def construct(self, x):
        return self.bn(self.fc(x))


def _net(seed):
    np.random.seed(seed)
    return Net()


def test_round_trip_of_a_trained_cell(tmp_path):
    src = _net(0)
    src.set_train()
    x = np.random.default_rng(0).normal(size=(8, 4)).astype(np.float32)
    opt = nn.SGD(src.trainable_params(), 0.1)
    grads = ms.grad(lambda x: (src(x) ** 2).sum(), None, opt.parameters)(x)  # moves bn stats
    opt(grads)
    ms.save_checkpoint(src, str(tmp_path / "net"))
    path = tmp_path / "net.ckpt"                    # MindSpore appends .ckpt
    assert path.exists()
    with np.load(path, allow_pickle=False) as data:   # a plain .npz archive
        assert sorted(data.files) == sorted(p.name for p in src.get_parameters())

    params = ms.load_checkpoint(str(path))
    assert list(params) == [p.name for p in src.get_parameters()]
    assert all(isinstance(p, ms.Parameter) and p.name == k for k, p in params.items())
    dst = _net(1)
    assert ms.load_param_into_net(dst, params) == ([], [])
    for a, b in zip(src.get_parameters(), dst.get_parameters()):
        assert a.name == b.name and b.asnumpy().dtype == np.float32
        np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())
    dst.set_train(False)
    src.set_train(False)
    np.testing.assert_array_equal(dst(x).asnumpy(), src(x).asnumpy())


def test_load_checkpoint_with_net_and_what_is_not_loaded(tmp_path):
    src = _net(0)
    f = str(tmp_path / "a.ckpt")
    ms.save_checkpoint(src.trainable_params(), f, append_dict={"epoch": 3, "tag": "best"})
    params = ms.load_checkpoint(f)
    assert int(params["epoch"].asnumpy()) == 3 and params["tag"] == "best"
    dst = _net(1)
    not_loaded, unused = ms.load_param_into_net(dst, params)
    assert not_loaded == ["bn.moving_mean", "bn.moving_variance"]
    assert unused == ["epoch", "tag"]
    dst2 = _net(2)
    ms.load_checkpoint(f, net=dst2)
    np.testing.assert_array_equal(dst2.fc.weight.asnumpy(), src.fc.weight.asnumpy())


def test_list_of_dicts_dict_and_filters(tmp_path):
    f = str(tmp_path / "b.ckpt")
    w = np.arange(6, dtype=np.float32).reshape(2, 3)
    ms.save_checkpoint([{"name": "layer.w", "data": ms.Tensor(w)},
                        {"name": "head.b", "data": ms.Tensor(np.ones(2, np.float32))}], f)
    assert list(ms.load_checkpoint(f, filter_prefix="head")) == ["layer.w"]
    assert list(ms.load_checkpoint(f, specify_prefix=["head"])) == ["head.b"]
    assert list(ms.load_checkpoint(f, choice_func=lambda n: n.endswith("w"))) == ["layer.w"]
    again = str(tmp_path / "c.ckpt")
    ms.save_checkpoint(ms.load_checkpoint(f), again)    # a dict, as load_checkpoint returns
    np.testing.assert_array_equal(ms.load_checkpoint(again)["layer.w"].asnumpy(), w)


def test_dtype_conversion_and_shape_errors(tmp_path):
    dst = _net(0)
    params = {"fc.bias": ms.Parameter(np.ones(3, np.float64), name="fc.bias")}
    assert ms.load_param_into_net(dst, params)[1] == []
    assert dst.fc.bias.asnumpy().dtype == np.float32
    with pytest.raises(RuntimeError, match="float32 in the net and float64"):
        ms.load_param_into_net(dst, params, strict_load=True)
    bad = {"fc.weight": ms.Parameter(np.ones((4, 3), np.float32), name="fc.weight")}
    with pytest.raises(RuntimeError, match=r"\(3, 4\) in the net and \(4, 3\)"):
        ms.load_param_into_net(dst, bad)


@pytest.mark.parametrize("call, exc", [
    (lambda p: ms.load_param_into_net(object(), {}), TypeError),
    (lambda p: ms.load_param_into_net(_net(0), [1]), TypeError),
    (lambda p: ms.load_param_into_net(_net(0), {"fc.bias": np.ones(3)}), TypeError),
    (lambda p: ms.load_checkpoint(str(p / "missing.ckpt")), ValueError),
    (lambda p: ms.save_checkpoint(object(), str(p / "x")), TypeError),
    (lambda p: ms.save_checkpoint(_net(0), str(p / "x"), enc_key=b"k" * 16), ValueError),
    (lambda p: ms.save_checkpoint([1.0], str(p / "x")), TypeError),
])
def test_errors(tmp_path, call, exc):
    with pytest.raises(exc):
        call(tmp_path)


def test_a_file_that_is_not_a_checkpoint(tmp_path):
    f = tmp_path / "junk.ckpt"
    f.write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="not a checkpoint"):
        ms.load_checkpoint(str(f))


def test_a_checkpoint_of_a_wrapped_net_loads_by_prefix(tmp_path):
    """MindSpore's second pass: entries named 'prefix + name' load the net's Parameters
    (not with strict_load); ckpt_not_load still lists them, as MindSpore's does."""
    src = _net(0)
    f = str(tmp_path / "wrapped.ckpt")
    ms.save_checkpoint([{"name": "network." + p.name, "data": p} for p in src.get_parameters()], f)
    params = ms.load_checkpoint(f)
    dst = _net(1)
    not_loaded, unused = ms.load_param_into_net(dst, params)
    assert not_loaded == [] and len(unused) == 6
    for a, b in zip(src.get_parameters(), dst.get_parameters()):
        np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())
    strict = _net(2)
    assert len(ms.load_param_into_net(strict, params, strict_load=True)[0]) == 6
