"""A chain of element-wise operators (tanh-approximated GELU written out by hand) vs fused.

slow (default): nine back-to-back element-wise operators (mul, add, tanh, …) on the same
    (256, 1024) tensor; each one reads and writes the whole tensor (on a GPU: one kernel each,
    with a launch gap between them).
--fixed: the same function through torch.compile, which fuses the chain into one loop (one
    kernel). Compiling takes seconds the first time, so it happens before profiling starts
    (the first iteration is outside the recorded steps). Where torch.compile is unavailable
    (no C compiler), torch.jit.script is used instead.

Run it under perfview: `perfview examples run elementwise-chain [--fixed]`.
"""

from __future__ import annotations

import argparse
import builtins
import time
from collections.abc import Callable

import torch

step = getattr(builtins, "perfview_step", lambda: None)


def gelu_by_hand(x: torch.Tensor) -> torch.Tensor:
    y = x * 0.5
    z = x * x
    z = z * x
    z = z * 0.044715
    z = z + x
    z = z * 0.7978845608
    z = torch.tanh(z)
    z = z + 1.0
    return y * z


def fused(fn: Callable[[torch.Tensor], torch.Tensor]) -> Callable[[torch.Tensor], torch.Tensor]:
    try:
        compiled = torch.compile(fn)
        compiled(torch.randn(256, 1024))  # compile now, not inside a profiled step
        return compiled
    except Exception as exc:  # no C compiler / unsupported platform
        print(f"torch.compile failed ({type(exc).__name__}); using torch.jit.script")
        return torch.jit.script(fn)  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fixed", action="store_true", help="the torch.compile'd version")
    parser.add_argument("--iterations", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=20, help="calls per iteration")
    args = parser.parse_args()
    torch.manual_seed(0)
    x = torch.randn(256, 1024)
    fn = fused(gelu_by_hand) if args.fixed else gelu_by_hand
    times = []
    for _ in range(args.iterations):
        t0 = time.perf_counter()
        for _ in range(args.repeat):
            y = fn(x)
        times.append(time.perf_counter() - t0)
        step()
    expected = torch.nn.functional.gelu(x, approximate="tanh")
    assert torch.allclose(y, expected, atol=1e-4), "wrong result"
    form = "fixed (torch.compile)" if args.fixed else "slow (eager chain)"
    print(
        f"elementwise-chain {form}: {args.repeat} calls per iteration, best of {len(times)}: "
        f"{min(times) * 1e3:.2f} ms"
    )


if __name__ == "__main__":
    main()
