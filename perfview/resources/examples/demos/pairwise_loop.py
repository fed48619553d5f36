"""Pairwise distances between two point clouds: a Python double loop vs broadcasting.

slow (default): for each of the 40 x 50 = 2,000 pairs, index one row of each tensor, subtract,
    square, sum, take the square root and store one element. Every step is a separate operator
    call costing a few microseconds of dispatch, so ~16,000 tiny calls do 2,000 distances.
--fixed: one broadcast expression, ((a[:, None] - b[None]) ** 2).sum(-1).sqrt(), computes all
    2,000 distances in four operators.

Run it under perfview: `perfview examples run pairwise-loop [--fixed]`.
"""

from __future__ import annotations

import argparse
import builtins
import time

import torch

# perfview's recorder injects perfview_step() (it advances the profiler's schedule); plain runs
# get a no-op.
step = getattr(builtins, "perfview_step", lambda: None)


def distances_loop(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    out = torch.empty(a.shape[0], b.shape[0])
    for i in range(a.shape[0]):
        for j in range(b.shape[0]):
            d = a[i, :] - b[j, :]
            out[i, j] = (d**2).sum().sqrt()
    return out


def distances_broadcast(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return ((a[:, None] - b[None]) ** 2).sum(-1).sqrt()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fixed", action="store_true", help="the broadcast version")
    parser.add_argument("--iterations", type=int, default=4)
    parser.add_argument("--points", type=int, nargs=2, default=(40, 50), metavar=("N", "M"))
    args = parser.parse_args()
    torch.manual_seed(0)
    a, b = torch.randn(args.points[0], 3), torch.randn(args.points[1], 3)
    fn = distances_broadcast if args.fixed else distances_loop
    times = []
    for _ in range(args.iterations):
        t0 = time.perf_counter()
        d = fn(a, b)
        times.append(time.perf_counter() - t0)
        step()
    expected = torch.cdist(a, b)
    assert torch.allclose(d, expected, atol=1e-5), "wrong distances"
    form = "fixed (broadcast)" if args.fixed else "slow (double loop)"
    print(
        f"pairwise-loop {form}: {d.numel()} distances, best of {len(times)}: "
        f"{min(times) * 1e3:.2f} ms"
    )


if __name__ == "__main__":
    main()
