"""Quick start: a 3-layer MLP trained with the MindSpore 2.x functional loop.

``value_and_grad(forward_fn, None, optimizer.parameters, has_aux=True)`` gives the
loss, the logits and the gradients of the optimizer's Parameters in one compiled
call; ``optimizer(grads)`` updates them. Replace ``ad_compiler`` by ``mindspore``
in the imports and this is a MindSpore program.

    python examples/mlp.py
"""
from __future__ import annotations

import argparse

import numpy as np

import ad_compiler as ms
from ad_compiler import nn

from digits import make_digits, split, standardize


class Network(nn.Cell):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.dense_relu_sequential = nn.SequentialCell(
            nn.Dense(32 * 32, 128), nn.ReLU(),
            nn.Dense(128, 64), nn.ReLU(),
            nn.Dense(64, 10))

    def construct(self, x):
        x = self.flatten(x)
        logits = self.dense_relu_sequential(x)
        return logits


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--train", type=int, default=4000)
    parser.add_argument("--test", type=int, default=1000)
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args(argv)

    ms.set_seed(0)
    images, labels = make_digits(args.train + args.test, seed=2)
    (train_x, train_y), (test_x, test_y) = split(standardize(images), labels,
                                                 args.test / (args.train + args.test))
    model = Network()
    loss_fn = nn.CrossEntropyLoss()
    optimizer = nn.Momentum(model.trainable_params(), learning_rate=0.01, momentum=0.9)

    def forward_fn(data, label):
        logits = model(data)
        loss = loss_fn(logits, label)
        return loss, logits

    grad_fn = ms.value_and_grad(forward_fn, None, optimizer.parameters, has_aux=True)

    def train_step(data, label):
        (loss, _), grads = grad_fn(data, label)
        optimizer(grads)
        return loss

    losses = []
    for epoch in range(args.epochs):
        model.set_train()
        order = np.random.permutation(len(train_x))
        epoch_losses = []
        for start in range(0, len(order) - args.batch_size + 1, args.batch_size):
            batch = order[start:start + args.batch_size]
            loss = train_step(ms.Tensor(train_x[batch]), ms.Tensor(train_y[batch]))
            epoch_losses.append(float(loss))
        model.set_train(False)
        predicted = model(ms.Tensor(test_x)).argmax(1).asnumpy()
        accuracy = float((predicted == test_y).mean())
        print(f"epoch {epoch + 1}: mean loss {np.mean(epoch_losses):.4f}, "
              f"test accuracy {accuracy:.2%}")
        losses.append(epoch_losses)
    return {"history": losses, "accuracy": accuracy}


if __name__ == "__main__":
    main()
