"""A small CPU-bound script for the recorder tests (cprofile mode).

`--report FILE` writes how the script saw its world (argv, cwd, sys.path[0], __name__), so tests
can check it ran like `python script.py`.
"""

import json
import os
import sys


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def crunch(rounds):
    return sum(fib(15) for _ in range(rounds))


if __name__ == "__main__":
    if "--report" in sys.argv:
        target = sys.argv[sys.argv.index("--report") + 1]
        with open(target, "w") as fh:
            json.dump(
                {"argv": sys.argv, "cwd": os.getcwd(), "path0": sys.path[0], "name": __name__},
                fh,
            )
    print("crunch =", crunch(5))
