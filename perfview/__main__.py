"""The `perfview` command (its console script calls `run`) and `python -m perfview`."""

import os
import sys


def run() -> None:
    """`perfview.cli.main`, with a quick exit after a headless command.

    OpenBLAS starts a thread per core, which spins for a while after any BLAS call; perfview
    does no linear algebra worth threads, and on a 2-core machine those spins took CPU from
    the trace scanner's threads. It must be set before numpy loads, hence here, before
    `perfview.cli` is imported; a user's own setting wins."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from perfview.cli import main, opens_window

    if opens_window(sys.argv[1:]):
        from perfview import preload, startup_gc

        startup_gc.hold()  # the window's start-up makes little garbage (see startup_gc)
        preload.start(sys.argv[1:])  # a big .prof parses on the other core (see preload)
    sys.exit(main(quick_exit=True))


if __name__ == "__main__":
    run()
