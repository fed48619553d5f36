"""Runs until killed, with a child process of its own (the Cancel test).

Writes "<own pid> <child pid>" to the file named by argv[1] once both are running.
"""

import subprocess
import sys
import time

child = subprocess.Popen([sys.executable, "-c", "import time\nwhile True: time.sleep(0.05)"])
with open(sys.argv[1] + ".tmp", "w") as fh:
    fh.write(f"{__import__('os').getpid()} {child.pid}")
__import__("os").replace(sys.argv[1] + ".tmp", sys.argv[1])
print("long_running: started", flush=True)
while True:
    time.sleep(0.05)
