"""Write tests/data/sampled/: real outputs of today's sampling profilers on a tiny script.

    python scripts/make_sampled_fixtures.py     (needs pyinstrument and py-spy installed)

The script is tests/data/scripts/cpu_hot.py run for 0.4 s, so in every file the function
with the most self time is `crunch`. Files: pyinstrument's JSON report and saved session
(`-r json`, `-r pyisession`) and py-spy's speedscope output, plus the same py-spy profile as
collapsed stacks (`--format raw`). Paths inside them are this machine's; that is fine.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "data" / "sampled"
SCRIPT = ROOT / "tests" / "data" / "scripts" / "cpu_hot.py"


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    pyinstrument = [sys.executable, "-m", "pyinstrument"]
    for renderer, name in (("json", "pyinstrument5.json"), ("pyisession", "cpu_hot.pyisession")):
        cmd = [*pyinstrument, "-r", renderer, "-o", str(OUT / name), str(SCRIPT), "0.4"]
        subprocess.run(cmd, check=True)
    spy = shutil.which("py-spy")
    if spy is None:
        print("py-spy is not installed; skipped its files", file=sys.stderr)
        return 1
    for fmt, name in (("speedscope", "pyspy.speedscope.json"), ("raw", "pyspy.folded")):
        cmd = [spy, "record", "--format", fmt, "--rate", "200", "--function", "-o"]
        subprocess.run(
            [*cmd, str(OUT / name), "--", sys.executable, str(SCRIPT), "0.4"], check=True
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
