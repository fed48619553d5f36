"""A tiny CPU training loop, recorded by scripts/bench/bench_load.py as its "torch CPU + Python
stacks" trace shape
(`perfview record --mode torch --with-stack -o OUT -- scripts/bench/bench_train_cpu.py`).

The shared samples hold no trace with `python_function` events and stacks; this one has both:
a small conv net plus an MLP head, a few optimizer steps, each step in helper functions so the
recorded Python call stack is a few frames deep. Run alone it just trains and prints the loss.
"""

from __future__ import annotations

import argparse

if __name__ == "__main__":  # --help answers without importing torch
    _parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    _parser.add_argument("steps", type=int, nargs="?", default=8, help="optimizer steps")
    STEPS = _parser.parse_args().steps

import torch
from torch import nn


def make_model() -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(4),
        nn.Flatten(),
        nn.Linear(16 * 16, 64),
        nn.ReLU(),
        nn.Linear(64, 10),
    )


def batch(step: int) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(step)
    return torch.randn(16, 3, 32, 32, generator=gen), torch.randint(0, 10, (16,), generator=gen)


def train_step(model: nn.Module, opt: torch.optim.Optimizer, step: int) -> float:
    x, y = batch(step)
    opt.zero_grad(set_to_none=True)
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return float(loss.detach())


def main(steps: int) -> None:
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = make_model()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    for step in range(steps):
        loss = train_step(model, opt, step)
    print(f"{steps} steps, last loss {loss:.3f}")


if __name__ == "__main__":
    main(STEPS)
