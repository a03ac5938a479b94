"""LeNet-5 trained with nn.TrainOneStepCell on procedurally drawn digits.

A MindSpore 2.x program: replace ``ad_compiler`` by ``mindspore`` in the imports
and it runs on MindSpore (``--show-grad`` excepted: reading the generated gradient
source is this project's own feature). The data set (examples/digits.py) is drawn
on the fly from a fixed seed; nothing is downloaded.

    python examples/lenet.py                      # train, then print the test accuracy
    python examples/lenet.py --epochs 1 --train 600 --test 200
    python examples/lenet.py --show-grad conv2    # print conv2's generated gradient source
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import ad_compiler as ms
from ad_compiler import nn, ops

from digits import make_digits, split, standardize
from progress import progress


class LeNet5(nn.Cell):
    """LeNet-5 with the layers of MindSpore's model zoo and default initial values.

    Input: N x 1 x 32 x 32 images; output: N x num_class logits.
    """

    def __init__(self, num_class=10, num_channel=1):
        super().__init__()
        self.conv1 = nn.Conv2d(num_channel, 6, 5, pad_mode='valid')
        self.conv2 = nn.Conv2d(6, 16, 5, pad_mode='valid')
        self.fc1 = nn.Dense(16 * 5 * 5, 120)
        self.fc2 = nn.Dense(120, 84)
        self.fc3 = nn.Dense(84, num_class)
        self.relu = nn.ReLU()
        self.max_pool2d = nn.MaxPool2d(kernel_size=2, stride=2)
        self.flatten = nn.Flatten()

    def construct(self, x):
        x = self.max_pool2d(self.relu(self.conv1(x)))
        x = self.max_pool2d(self.relu(self.conv2(x)))
        x = self.flatten(x)
        x = self.relu(self.fc1(x))
        x = self.relu(self.fc2(x))
        return self.fc3(x)


# The input shape of each layer --show-grad can print (batch size first).
LAYER_INPUTS = {"conv1": (1, 32, 32), "conv2": (6, 14, 14), "fc1": (400,),
                "fc2": (120,), "fc3": (84,), "max_pool2d": (6, 28, 28)}


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--train", type=int, default=4000, help="training images")
    parser.add_argument("--test", type=int, default=1000, help="held-out test images")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=0.02)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--plain", action="store_true", help="text progress bar even with tqdm")
    parser.add_argument("--show-grad", metavar="LAYER", choices=sorted(LAYER_INPUTS) + ["net"],
                        help="print the generated gradient source of LAYER (or of the whole "
                             "net with its loss) and exit")
    return parser.parse_args(argv)


def load_data(args):
    images, labels = make_digits(args.train + args.test, seed=args.seed)
    return split(standardize(images), labels,
                 test_fraction=args.test / (args.train + args.test))


def evaluate(net, images, labels, batch_size=500):
    """The fraction of ``images`` whose largest logit is at the label."""
    net.set_train(False)
    correct = 0
    for start in range(0, len(images), batch_size):
        logits = net(ms.Tensor(images[start:start + batch_size]))
        predicted = ops.argmax(logits, 1).asnumpy()
        correct += int((predicted == labels[start:start + batch_size]).sum())
    net.set_train(True)
    return correct / len(images)


def train(train_net, images, labels, args):
    """``args.epochs`` epochs of shuffled batches (the last partial batch dropped)."""
    rng = np.random.default_rng(args.seed)
    steps = len(images) // args.batch_size
    history = []
    for epoch in range(args.epochs):
        order = rng.permutation(len(images))
        bar = progress(steps, f"epoch {epoch + 1}/{args.epochs}", plain=args.plain)
        losses = []
        for step in range(steps):
            batch = order[step * args.batch_size:(step + 1) * args.batch_size]
            loss = train_net(ms.Tensor(images[batch]), ms.Tensor(labels[batch]))
            losses.append(float(loss))
            bar.update(losses[-1])
        bar.close()
        print(f"epoch {epoch + 1}/{args.epochs}: mean loss {np.mean(losses):.4f}")
        history.append(losses)
    return history


def show_grad(net, loss_fn, layer, batch_size):
    """The generated source of ``layer``'s gradient (in its input and its Parameters)."""
    if layer == "net":
        cell = nn.WithLossCell(net, loss_fn)
        args = (np.zeros((batch_size, 1, 32, 32), np.float32),
                np.zeros(batch_size, np.int32))
        return ms.adjoint_source(cell, *args, grad_position=None,
                                 weights=cell.trainable_params())
    cell = getattr(net, layer)
    x = np.zeros((batch_size,) + LAYER_INPUTS[layer], np.float32)
    params = cell.trainable_params()
    return ms.adjoint_source(cell, x, grad_position=0, weights=params or None, sens_param=True)


def main(argv=None):
    args = parse_args(argv)
    ms.set_context(mode=ms.GRAPH_MODE, device_target="CPU")
    ms.set_seed(args.seed)
    net = LeNet5()
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction='mean')
    if args.show_grad:
        print(show_grad(net, loss_fn, args.show_grad, args.batch_size))
        return None
    start = time.perf_counter()
    (train_x, train_y), (test_x, test_y) = load_data(args)
    print(f"data: {len(train_x)} training and {len(test_x)} test images "
          f"({time.perf_counter() - start:.1f}s)")
    optimizer = nn.Momentum(net.trainable_params(), learning_rate=args.lr, momentum=0.9)
    train_net = nn.TrainOneStepCell(nn.WithLossCell(net, loss_fn), optimizer)
    train_net.set_train()
    history = train(train_net, train_x, train_y, args)
    accuracy = evaluate(net, test_x, test_y)
    seconds = time.perf_counter() - start
    print(f"test accuracy {accuracy:.2%} on {len(test_x)} held-out images, {seconds:.1f}s in all")
    return {"history": history, "accuracy": accuracy, "seconds": seconds}


if __name__ == "__main__":
    main()
