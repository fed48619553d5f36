"""Exits with status 3 after a little work: perfview's exit code must be 3."""

import sys


def some_work():
    return sorted(range(10000), reverse=True)[0]


some_work()
sys.exit(3)
