#!/bin/sh
# Per-user desktop integration for perfview on Linux/BSD (freedesktop.org desktops).
#
#   scripts/install_desktop.sh              install menu entry, MIME types and icon
#   scripts/install_desktop.sh --uninstall  remove them again
#
# Files go to ${XDG_DATA_HOME:-~/.local/share}/{applications,mime/packages,icons/hicolor/...};
# update-mime-database and update-desktop-database run when present. The work is done by
# perfview/desktop.py (same code as `perfview --install-desktop`), so the Exec line points at the
# installed `perfview` command, or at `python -m perfview` from this checkout when none exists.
# Set PYTHON to choose the interpreter (default: python3).
set -eu

repo=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
python=${PYTHON:-python3}

case "${1:-}" in
    "") action=install ;;
    --uninstall) action=uninstall ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "usage: $0 [--uninstall]" >&2; exit 2 ;;
esac

PYTHONPATH="$repo${PYTHONPATH:+:$PYTHONPATH}" exec "$python" -m perfview.desktop "$action"
