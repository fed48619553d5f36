"""A CPU-bound script for the sampling recorder: nearly all its time is in `crunch`."""

import sys
import time


def crunch(n: int) -> int:
    total = 0
    for i in range(n):
        total += i * i % 7
    return total


def light() -> None:
    time.sleep(0.001)


def main(seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        crunch(200_000)
        light()


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 1.0)
    sys.exit(int(sys.argv[2]) if len(sys.argv) > 2 else 0)
