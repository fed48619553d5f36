"""Allocates memory in itself and in a child process for a moment (memory mode)."""

import subprocess
import sys
import time

CHILD = "import time; block = bytearray(40 * 1024 * 1024); time.sleep(0.6)"


def main():
    child = subprocess.Popen([sys.executable, "-c", CHILD])
    block = bytearray(30 * 1024 * 1024)
    time.sleep(0.4)
    child.wait()
    del block


if __name__ == "__main__":
    main()
