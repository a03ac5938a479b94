"""Procedurally drawn handwritten-style digits: a small, reproducible image data set.

Each digit 0-9 is a few strokes (lines and elliptic arcs) in a unit box. An image
draws one digit into a ``size`` x ``size`` canvas after a random affine map
(scale, aspect, rotation, slant, shift), with each stroke point jittered, a
random pen thickness and anti-aliased edges, then adds Gaussian noise. Pixels are
float32 in [0, 1]; labels are int32. The same seed gives the same images; nothing
is downloaded.

>>> images, labels = make_digits(20, seed=0)
>>> images.shape, images.dtype, labels.dtype
((20, 1, 32, 32), dtype('float32'), dtype('int32'))
"""
from __future__ import annotations

import numpy as np

__all__ = ["make_digits", "split", "standardize", "render_ascii"]


def _arc(cx, cy, rx, ry, start, stop, n=9):
    """Points of an elliptic arc; angles in degrees, 0 = right, 90 = down."""
    t = np.radians(np.linspace(start, stop, n))
    return np.stack([cx + rx * np.cos(t), cy + ry * np.sin(t)], axis=1)


def _line(*points):
    return np.array(points, dtype=np.float64)


# Each digit: a list of polylines in the unit box (x to the right, y down).
STROKES = {
    0: [_arc(0.5, 0.5, 0.3, 0.45, 0, 360, 14)],
    1: [_line((0.3, 0.25), (0.55, 0.05), (0.55, 0.95))],
    2: [np.concatenate([_arc(0.5, 0.3, 0.3, 0.25, 180, 400),
                        _line((0.15, 0.95), (0.85, 0.95))])],
    3: [_arc(0.5, 0.28, 0.28, 0.23, 200, 450), _arc(0.5, 0.73, 0.32, 0.24, 270, 520)],
    4: [_line((0.65, 0.95), (0.65, 0.05), (0.12, 0.65), (0.88, 0.65))],
    5: [np.concatenate([_line((0.8, 0.05), (0.25, 0.05)),
                        _arc(0.5, 0.68, 0.32, 0.27, 220, 520)])],
    6: [_arc(0.55, 0.5, 0.3, 0.45, 300, 150), _arc(0.5, 0.7, 0.25, 0.23, 0, 360, 12)],
    7: [_line((0.15, 0.05), (0.85, 0.05), (0.4, 0.95))],
    8: [_arc(0.5, 0.28, 0.24, 0.22, 0, 360, 12), _arc(0.5, 0.72, 0.3, 0.24, 0, 360, 12)],
    9: [_arc(0.5, 0.3, 0.27, 0.24, 0, 360, 12), _line((0.77, 0.3), (0.6, 0.95))],
}


def _segments(digit: int, count: int) -> np.ndarray:
    """``(count, 2, 2)``: the digit's stroke segments, the last repeated to ``count``."""
    segs = [np.stack([p[:-1], p[1:]], axis=1) for p in STROKES[digit]]
    segs = np.concatenate(segs)
    return np.concatenate([segs, np.repeat(segs[-1:], count - len(segs), axis=0)])


_MAX_SEGMENTS = max(sum(len(p) - 1 for p in strokes) for strokes in STROKES.values())


def _transforms(rng, n, size):
    """Random affine maps from the unit box to pixel coordinates: ``(n, 2, 2)``, ``(n, 2)``."""
    scale = rng.uniform(0.55, 0.8, n) * size
    aspect = rng.uniform(0.75, 1.15, n)
    angle = np.radians(rng.uniform(-12, 12, n))
    slant = rng.uniform(-0.3, 0.3, n)
    cos, sin = np.cos(angle), np.sin(angle)
    rot = np.stack([np.stack([cos, -sin], -1), np.stack([sin, cos], -1)], -2)
    shape = np.zeros((n, 2, 2))
    shape[:, 0, 0] = scale * aspect
    shape[:, 0, 1] = scale * slant
    shape[:, 1, 1] = scale
    matrix = rot @ shape
    shift = size / 2 + rng.uniform(-3, 3, (n, 2))
    return matrix, shift - matrix @ np.array([0.5, 0.5])


def _distances(points, pixels):
    """``(n, P)``: distance of each pixel to the nearest segment of each image."""
    ax, ay = points[:, None, :, 0, 0], points[:, None, :, 0, 1]   # (n, 1, S)
    dx = points[:, None, :, 1, 0] - ax
    dy = points[:, None, :, 1, 1] - ay
    px, py = pixels[None, :, None, 0], pixels[None, :, None, 1]  # (1, P, 1)
    rx, ry = px - ax, py - ay
    t = np.clip((rx * dx + ry * dy) / np.maximum(dx * dx + dy * dy, 1e-6), 0.0, 1.0)
    rx -= t * dx
    ry -= t * dy
    return np.sqrt(np.min(rx * rx + ry * ry, axis=-1))


def make_digits(n: int, size: int = 32, seed: int = 0, noise: float = 0.1):
    """``n`` images ``(n, 1, size, size)`` float32 and their labels ``(n,)`` int32."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 10, n).astype(np.int32)
    base = np.stack([_segments(d, _MAX_SEGMENTS) for d in range(10)])  # (10, S, 2, 2)
    points = base[labels] + rng.normal(0.0, 0.02, (n, 1, 1, 2))       # whole-stroke wobble
    points = points + rng.normal(0.0, 0.01, points.shape)              # per-point jitter
    matrix, offset = _transforms(rng, n, size)
    points = np.einsum("nij,nsej->nsei", matrix, points) + offset[:, None, None, :]
    ys, xs = np.mgrid[0:size, 0:size] + 0.5
    pixels = np.stack([xs.ravel(), ys.ravel()], axis=1).astype(np.float32)
    thickness = rng.uniform(1.0, 2.6, (n, 1))
    images = np.empty((n, size * size), np.float32)
    for start in range(0, n, 64):
        chunk = slice(start, start + 64)
        dist = _distances(points[chunk].astype(np.float32), pixels)
        images[chunk] = np.clip(thickness[chunk] / 2 + 0.5 - dist, 0.0, 1.0)
    images += rng.normal(0.0, noise, images.shape) * rng.uniform(0.0, 1.0, (n, 1))
    np.clip(images, 0.0, 1.0, out=images)
    return images.reshape(n, 1, size, size), labels


def split(images, labels, test_fraction: float = 0.2):
    """``(train_images, train_labels), (test_images, test_labels)``; the test set is the
    last ``test_fraction`` of the images."""
    cut = len(images) - int(round(len(images) * test_fraction))
    return (images[:cut], labels[:cut]), (images[cut:], labels[cut:])


def standardize(images):
    """Roughly zero mean and unit variance (the statistics of the generated images)."""
    return (images - np.float32(0.11)) / np.float32(0.3)


def render_ascii(image) -> str:
    """A text picture of one ``(1, H, W)`` or ``(H, W)`` image."""
    shades = " .:-=+*#%@"
    rows = np.asarray(image).reshape(image.shape[-2:])
    return "\n".join("".join(shades[min(int(v * 10), 9)] for v in row) for row in rows)


if __name__ == "__main__":
    images, labels = make_digits(10, seed=1)
    for image, label in zip(images, labels):
        print(label)
        print(render_ascii(image))
