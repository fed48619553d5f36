"""`python -m perfview` behaves exactly like the `perfview` command."""

import sys

from perfview.cli import main

if __name__ == "__main__":
    sys.exit(main())
