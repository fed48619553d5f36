#!/usr/bin/env bash
# The whole test suite: lint, format, types, import contracts, then pytest.
# Called by the README's test command and by .ci/run. Exit status is non-zero on any failure,
# including pytest collecting no tests (its exit 5).
set -u
case "${1:-}" in
  -h|--help) echo "usage: bash scripts/check.sh [PYTEST_ARGS...]  (lint, format, types, import contracts, pytest)"; exit 0 ;;
esac
cd "$(dirname "$0")/.."

# This command never installs system packages. Tests that need a validator (desktop-file-validate,
# xmllint, update-mime-database) skip with a reason where it is absent; .ci/run installs them for CI.

status=0
step() { echo "== $*"; "$@" || { echo "FAILED: $*"; status=1; }; }
step python3 -m ruff check .
step python3 -m ruff format --check .
step python3 -m mypy
# Through python3 rather than the `lint-imports` script: console scripts installed with
# `python3 -m pip` are not on PATH under pyenv until a rehash.
step python3 -c "import sys; from importlinter.cli import lint_imports_command as c; sys.argv[0] = 'lint-imports'; c()"
# duckdb's bindings (nanobind) print "leaked instance" lines at interpreter exit, after
# pytest's summary; the summary is repeated last so it stays the run's closing line.
log="$(mktemp)"
python3 -m pytest "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
summary="$(grep -E '^(=+ )?[0-9]+ (passed|failed)|^(=+ )?no tests ran' "$log" | tail -1)"
rm -f "$log"
if [ "$rc" = "5" ]; then echo "FAILED: pytest collected no tests"; rc=1; fi
[ "$rc" = "0" ] || status=1
[ -n "$summary" ] && printf "\n%s\n" "$summary"  # nanobind's last line has no newline
exit $status
