"""A tiny torch workload: a few matmuls, stepping perfview's schedule when one is active."""

import torch


def train_step(a, b):
    return torch.mm(a, b).relu().sum()


def main():
    a = torch.randn(64, 64)
    b = torch.randn(64, 64)
    for _ in range(4):
        train_step(a, b)
        perfview_step()  # noqa: F821  (injected by perfview record; a no-op without a schedule)


if __name__ == "__main__":
    main()
