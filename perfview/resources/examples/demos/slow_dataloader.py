"""A small MLP trained from a DataLoader whose samples are slow to produce.

slow (default): num_workers=0, so every sample's loading (a 0.25 ms stand-in for reading and
    decoding a file) happens in the training process, between the training steps.
--fixed: num_workers=16 with persistent workers and prefetching load batches in parallel while
    the model trains (plus pin_memory=True when a GPU is used, for asynchronous copies). Enough
    workers that a batch is ready sooner than a step computes (~15 ms): 32 ms of loading per
    batch / 16 workers = 2 ms. (The loading here waits rather than computes, so 16 workers are
    fine on a machine with fewer cores; for CPU-bound decoding use about one per spare core.)
    The workers start one after another (seconds on a busy machine), so the fixed form runs
    one unrecorded pass first, and the recording skips the first 22 steps (the schedule's wait
    and warm-up): it profiles steady state, as one would in a real job. Batches come back
    through the "file_system" sharing strategy: the default passes each tensor's file
    descriptor in a handshake with the worker's process (two round trips per tensor), and on a
    busy machine every round trip waits for the scheduler to run that worker (8-10 ms per
    batch, traced on 2 cores beside two CPU hogs, enough to look input bound).

Run it under perfview: `perfview examples run slow-dataloader [--fixed]`.
"""

from __future__ import annotations

import argparse
import builtins
import time
import warnings

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

step = getattr(builtins, "perfview_step", lambda: None)


class SlowDataset(Dataset[tuple[torch.Tensor, torch.Tensor]]):
    """Random samples, each taking `delay` seconds to 'read' (time.sleep stands in for I/O)."""

    def __init__(self, n: int, delay: float) -> None:
        gen = torch.Generator().manual_seed(0)
        self.x = torch.randn(n, 256, generator=gen)
        self.y = torch.randint(0, 10, (n,), generator=gen)
        self.delay = delay

    def __len__(self) -> int:
        return len(self.y)

    def __getitem__(self, i: int) -> tuple[torch.Tensor, torch.Tensor]:
        time.sleep(self.delay)
        return self.x[i], self.y[i]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fixed", action="store_true", help="worker processes (+ pinned memory)")
    parser.add_argument("--iterations", type=int, default=32)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--delay", type=float, default=0.00025, help="seconds per sample")
    args = parser.parse_args()
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    data = SlowDataset(args.batch * args.iterations, args.delay)
    if args.fixed:
        warnings.filterwarnings("ignore", message="This DataLoader will create")  # see above
        torch.multiprocessing.set_sharing_strategy("file_system")  # type: ignore[no-untyped-call]
        loader = DataLoader(data, batch_size=args.batch, num_workers=16, persistent_workers=True,
                            prefetch_factor=2, pin_memory=device == "cuda")  # fmt: skip
    else:
        loader = DataLoader(data, batch_size=args.batch)
    model = nn.Sequential(nn.Linear(256, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
                          nn.Linear(1024, 10)).to(device)  # fmt: skip
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = nn.CrossEntropyLoss()
    if args.fixed:  # one unrecorded pass starts the persistent workers: later epochs of a job
        for _batch in loader:  # never pay that start-up, whatever the machine's load
            pass
    times = []
    t0 = time.perf_counter()
    for x, y in loader:
        x = x.to(device, non_blocking=True)
        y = y.to(device, non_blocking=True)
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        step()
        times.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
    steady = sorted(times[1:])[len(times[1:]) // 2]  # the first step also starts the workers
    form = "fixed (16 workers)" if args.fixed else "slow (no workers)"
    print(
        f"slow-dataloader {form}: median step {steady * 1e3:.1f} ms "
        f"(first step {times[0] * 1e3:.0f} ms; {args.batch} samples a step)"
    )


if __name__ == "__main__":
    main()
