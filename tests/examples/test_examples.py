"""The examples (examples/): they train in a tiny configuration, and stay MindSpore programs.

The full runs (LeNet-5 to its stated accuracy) are commands in examples/README.md;
here each example runs as a command in a tiny configuration (seconds) and must
lower its loss and beat chance.
"""
from __future__ import annotations

import ast
import importlib
import io
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"

# The names the examples may use from ad_compiler: each is in MindSpore 2.x's API.
MINDSPORE_NAMES = {
    "ms": {"set_context", "GRAPH_MODE", "set_seed", "Tensor", "value_and_grad"},
    "nn": {"Cell", "Conv2d", "Dense", "ReLU", "MaxPool2d", "Flatten", "SequentialCell",
           "SoftmaxCrossEntropyWithLogits", "CrossEntropyLoss", "Momentum", "WithLossCell",
           "TrainOneStepCell"},
    "ops": {"argmax"},
}


@pytest.fixture
def example(monkeypatch):
    """Import an example module by name, with examples/ on the path (as when run)."""
    monkeypatch.syspath_prepend(str(EXAMPLES))
    loaded = []

    def load(name):
        loaded.append(name)
        return importlib.import_module(name)

    yield load
    for name in loaded + ["digits", "progress"]:
        sys.modules.pop(name, None)


def run_example(name, *args):
    """Run ``examples/NAME`` as a user does, with one BLAS thread (the tiny products of
    these runs only wait for each other on more threads when the machine is busy)."""
    env = dict(os.environ, PYTHONPATH=str(EXAMPLES.parent), OPENBLAS_NUM_THREADS="1",
               OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    done = subprocess.run([sys.executable, str(EXAMPLES / name), *args], env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return done.stdout, done.stderr


def epoch_losses(out):
    return [float(m) for m in re.findall(r"mean loss (\d+\.\d+)", out)]


def accuracy(out):
    return float(re.findall(r"test accuracy (\d+\.\d+)%", out)[-1]) / 100


def test_digits_are_reproducible_float32_images_of_every_class(example):
    digits = example("digits")
    images, labels = digits.make_digits(300, seed=3)
    again, same_labels = digits.make_digits(300, seed=3)
    other, _ = digits.make_digits(300, seed=4)
    assert images.shape == (300, 1, 32, 32) and images.dtype == np.float32
    assert labels.dtype == np.int32 and set(labels) == set(range(10))
    np.testing.assert_array_equal(images, again)
    np.testing.assert_array_equal(labels, same_labels)
    assert not np.array_equal(images, other)
    assert images.min() >= 0.0 and images.max() <= 1.0
    (train_x, train_y), (test_x, test_y) = digits.split(images, labels, test_fraction=0.2)
    assert len(train_x) == len(train_y) == 240 and len(test_x) == len(test_y) == 60


def test_digits_differ_between_classes_more_than_within(example):
    digits = example("digits")
    images, labels = digits.make_digits(600, seed=5)
    flat = images.reshape(len(images), -1)
    means = np.stack([flat[labels == d].mean(0) for d in range(10)])
    nearest = np.argmin(((flat[:, None, :] - means[None]) ** 2).sum(-1), axis=1)
    assert (nearest == labels).mean() > 0.5  # a nearest-mean classifier already beats chance


def test_lenet_trains_in_a_tiny_configuration():
    out, err = run_example("lenet.py", "--train", "400", "--test", "200", "--epochs", "2",
                           "--batch-size", "16", "--lr", "0.05", "--plain")
    first, second = epoch_losses(out)
    assert second < first - 0.2, out
    assert accuracy(out) > 0.25, out  # chance is 0.1
    assert "epoch 2/2 [" in err and "loss " in err  # the progress bar with the loss


def test_mlp_quick_start_trains_in_a_tiny_configuration():
    out, _ = run_example("mlp.py", "--train", "600", "--test", "200", "--epochs", "2",
                         "--batch-size", "32")
    first, second = epoch_losses(out)
    assert second < first - 0.15, out
    assert accuracy(out) > 0.2, out


@pytest.mark.parametrize("layer,calls", [
    ("conv2", ["def Conv2d_grad(", "conv_transpose(", "conv_filter("]),
    ("fc1", ["def Dense_grad(", "dfc1_weight", "dfc1_bias"]),
    ("max_pool2d", ["def MaxPool2d_grad(", "max_pool_scatter("]),
    ("net", ["def WithLossCell_grad(", "dconv1_weight", "dfc3_bias"]),
])
def test_show_grad_prints_the_generated_gradient_of_one_layer(example, capsys, layer, calls):
    lenet = example("lenet")
    assert lenet.main(["--show-grad", layer, "--batch-size", "4"]) is None
    source = capsys.readouterr().out
    for call in calls:
        assert call in source
    compile(source, "<generated>", "exec")  # the printed text is the Python that runs


def test_text_progress_bar_shows_steps_and_loss(example):
    progress = example("progress")
    stream = io.StringIO()
    bar = progress.TextBar(3, "epoch 1/1", stream=stream, interval=0.0)
    for loss in (2.5, 1.25, 0.5):
        bar.update(loss)
    bar.close()
    last = stream.getvalue().split("\r")[-1]
    assert last.startswith("epoch 1/1 [" + "#" * progress.TextBar.width + "] 3/3  loss 0.5000")
    assert last.endswith("\n")


def test_tqdm_bar_when_installed(example):
    pytest.importorskip("tqdm")
    bar = example("progress").progress(2, "epoch 1/1")
    bar.update(1.0)
    bar.update(0.5)
    bar.close()


def _ad_compiler_names(path):
    """``{alias: {attribute, ...}}`` for the aliases of ad_compiler, nn and ops in ``path``."""
    tree = ast.parse(path.read_text())
    used = {"ms": set(), "nn": set(), "ops": set()}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and node.value.id in used:
            used[node.value.id].add(node.attr)
    return used, tree


@pytest.mark.parametrize("name", ["lenet.py", "mlp.py"])
def test_examples_use_only_mindspore_names(name):
    used, tree = _ad_compiler_names(EXAMPLES / name)
    imports = {(n.module, a.name) for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
               for a in n.names if n.module and n.module.startswith("ad_compiler")}
    assert imports <= {("ad_compiler", "nn"), ("ad_compiler", "ops")}
    used["ms"].discard("adjoint_source")  # --show-grad: this project's own addition
    for alias, names in used.items():
        assert names <= MINDSPORE_NAMES[alias], (alias, names - MINDSPORE_NAMES[alias])
    source = (EXAMPLES / name).read_text()
    assert source.count("ms.adjoint_source(") == (2 if name == "lenet.py" else 0)


def test_dask_logistic_regression_fits_on_a_local_cluster(example):
    """examples/dask_logistic.py in a tiny configuration (one worker): the loss goes
    down and the weights move toward the model that made the labels."""
    pytest.importorskip("distributed", reason="the dask extra is not installed")
    result = example("dask_logistic").main(["--rows", "40000", "--chunk", "10000",
                                            "--steps", "4", "--workers", "1", "--quiet"])
    assert result["loss"] < np.log(2) - 0.1          # log 2 at w = 0
    w = result["w"]
    assert w[0] > 0.2 and w[1] < -0.2 and abs(w[3]) < 0.1
