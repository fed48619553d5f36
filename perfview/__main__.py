"""`python -m perfview` behaves exactly like the `perfview` command."""

from perfview.cli import run

if __name__ == "__main__":
    run()
