"""The bundled demo scripts: classic PyTorch slow-downs, each with its fix.

Each demo is one script under `perfview/resources/examples/demos/` that runs its slow form by
default and the fixed form with `--fixed`, plus how to record it (`perfview record --mode torch`
options: a schedule so that warm-up such as torch.compile stays outside the recorded steps, and
with_stack / record_shapes where the advice needs them) and the recommendation the slow form
should trigger. `perfview examples` and the GUI's Help ▸ Examples read this table; the test
suite records every demo both ways and checks the advice fires only for the slow one.

Stdlib only (runner code never imports torch or Qt).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from perfview.runner.spec import RunSpec
from perfview.runner.spec_args import add_arguments, spec_from_args

DEMOS_DIR = Path(__file__).resolve().parent.parent / "resources" / "examples" / "demos"


@dataclass(frozen=True)
class Demo:
    """One demo: script file, what it shows, recorder options, and the advice it should get."""

    name: str
    script: str  # file name in DEMOS_DIR
    summary: str
    record_args: tuple[str, ...]  # `perfview record` options (mode excluded)
    finding: str  # title of the recommendation the slow form triggers

    @property
    def path(self) -> Path:
        return DEMOS_DIR / self.script

    def script_args(self, fixed: bool) -> list[str]:
        return ["--fixed"] if fixed else []


DEMOS: dict[str, Demo] = {
    d.name: d
    for d in (
        Demo(
            "pairwise-loop",
            "pairwise_loop.py",
            "pairwise distances by a Python double loop over rows vs broadcasting",
            ("--with-stack", "--schedule", "1,1,1"),
            "Element-wise Python loop over tensors",
        ),
        Demo(
            "elementwise-chain",
            "elementwise_chain.py",
            "nine unfused element-wise operators (hand-written GELU) vs torch.compile",
            ("--record-shapes", "--schedule", "1,1,1"),
            "Chains of unfused element-wise operators",
        ),
        Demo(
            "slow-dataloader",
            "slow_dataloader.py",
            "MLP training fed by a single-process DataLoader vs worker processes",
            # eight recorded steps: one step slowed by a busy machine is not 10 % of them
            ("--with-stack", "--schedule", "20,2,8"),
            "Steps are input (DataLoader) bound",
        ),
    )
}


def record_argv(demo: Demo, output: str, fixed: bool) -> list[str]:
    """The `perfview record` arguments that record `demo` (slow or fixed) to `output`."""
    return [
        "--mode",
        "torch",
        *demo.record_args,
        "-o",
        output,
        "--",
        str(demo.path),
        *demo.script_args(fixed),
    ]


def demo_spec(name: str, fixed: bool, output: str | None = None) -> RunSpec:
    """The RunSpec recording demo `name` (output None: a new runs folder), as `perfview record`
    would parse its options; the GUI pre-fills its Run dialog with it."""
    parser = argparse.ArgumentParser(prog="perfview examples run")
    add_arguments(parser)
    argv = record_argv(DEMOS[name], output or "", fixed)
    if not output:  # record_argv always names -o; drop the empty one
        i = argv.index("-o")
        del argv[i : i + 2]
    return spec_from_args(parser.parse_args(argv))


__all__ = ["DEMOS", "DEMOS_DIR", "Demo", "demo_spec", "record_argv"]
