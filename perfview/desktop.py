"""Desktop integration for freedesktop.org systems (Linux, BSD): menu entry, MIME types, icon.

Why the packaging files are *generated* here instead of read from ``resources/``: the top-level
``resources/`` folder is not package data, so an installed wheel cannot see it. Generating both
files from one table (:data:`MIME_TYPES`) also keeps the ``.desktop`` ``MimeType=`` list and the
shared-mime-info XML in step by construction. ``resources/perfview.desktop`` and
``resources/perfview-mime.xml`` are the rendered output (``python -m perfview.desktop render
resources``) for distribution packagers; ``tests/test_desktop.py`` fails if they drift. The only
runtime asset read from the package is the icon, ``perfview/resources/icons/perfview.svg``,
which the existing ``resources/icons/*.svg`` package-data glob already ships.

This module is Qt-free so ``perfview --install-desktop`` works without a display.
"""

from __future__ import annotations

import argparse
import importlib.resources
import importlib.util
import os
import re
import shutil
import site
import subprocess
import sys
import sysconfig
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from perfview.core import atomic

APP_ID = "perfview"
DESKTOP_NAME = f"{APP_ID}.desktop"
MIME_XML_NAME = f"{APP_ID}-mime.xml"
ICON_NAME = f"{APP_ID}.svg"


@dataclass(frozen=True)
class MimeType:
    """One shared-mime-info type that perfview opens.

    ``magic`` holds ready-made ``<match>`` XML: magic only decides when no glob (or several)
    matches, so it mainly helps files renamed away from their usual pattern.
    """

    name: str
    comment: str
    globs: tuple[str, ...]
    sub_class_of: str | None
    magic_priority: int = 0
    magic: tuple[str, ...] = ()


MIME_TYPES: tuple[MimeType, ...] = (
    MimeType(
        name="application/x-python-pstats",
        comment="Python cProfile statistics",
        globs=("*.prof", "*.pstats"),
        sub_class_of=None,  # binary: every such type already derives from octet-stream
        magic_priority=50,
        # marshal dict (0xFB: '{' with the ref flag) whose first key is a tuple, ')' or ')'|0x80.
        magic=(
            '<match type="byte" value="0xfb" offset="0">\n'
            '  <match type="byte" value="0x29" offset="1"/>\n'
            '  <match type="byte" value="0xa9" offset="1"/>\n'
            "</match>",
        ),
    ),
    MimeType(
        name="application/x-chrome-trace",
        comment="Chrome trace (torch.profiler / Kineto)",
        globs=("*.pt.trace.json", "*.trace.json"),
        sub_class_of="application/json",
        magic_priority=60,
        magic=(
            # kineto writes a newline before '{', so search a range instead of offset 0.
            '<match type="string" value="&quot;schemaVersion&quot;" offset="0:256"/>',
            '<match type="string" value="&quot;traceEvents&quot;" offset="0:256"/>',
        ),
    ),
    MimeType(
        name="application/x-chrome-trace-gzip",
        comment="Compressed Chrome trace (torch.profiler / Kineto)",
        globs=("*.pt.trace.json.gz", "*.trace.json.gz"),
        sub_class_of="application/gzip",
    ),
    MimeType(
        name="application/x-mprof-data",
        comment="memory_profiler mprof data",
        globs=("mprofile_*.dat",),
        sub_class_of="text/plain",
        magic_priority=50,
        magic=(
            '<match type="string" value="CMDLINE " offset="0"/>',
            '<match type="string" value="FUNC " offset="0"/>',
        ),
    ),
    MimeType(
        name="application/x-memray-capture",
        comment="memray memory capture",
        # `memray run` names its output memray-<script>.<pid>.bin by default.
        globs=("memray-*.bin", "*.memray.bin", "*.memray"),
        sub_class_of=None,
        # above shared-mime-info's own LZ4 rule (60): a capture is a more specific LZ4 frame
        magic_priority=70,
        magic=(
            '<match type="string" value="memray\\0" offset="0"/>',
            # LZ4 frame (the default) whose first literals are the inner `memray` header.
            '<match type="big32" value="0x04224d18" offset="0">\n'
            '  <match type="string" value="memray" offset="7:32"/>\n'
            "</match>",
        ),
    ),
    MimeType(
        name="application/x-pytorch-cuda-memory-snapshot",
        comment="PyTorch CUDA memory snapshot",
        globs=("*snapshot*.pickle", "*snapshot*.pickle.gz"),
        sub_class_of=None,
        magic_priority=55,
        # pickle protocol 2-5 header, then a dict whose first key is `segments`.
        magic=(
            '<match type="byte" value="0x80" offset="0">\n'
            '  <match type="string" value="segments" offset="2:24"/>\n'
            "</match>",
        ),
    ),
    MimeType(
        name="application/x-perfview-workspace",  # core.workspace.MIME_TYPE
        comment="perfview workspace",
        globs=("*.perfview",),
        sub_class_of="application/json",
        magic_priority=60,
        magic=('<match type="string" value="&quot;perfview-workspace&quot;" offset="0:64"/>',),
    ),
    MimeType(
        name="application/x-speedscope-json",
        comment="speedscope profile (py-spy, pyinstrument, Austin)",
        globs=("*.speedscope.json",),
        sub_class_of="application/json",
        # above shared-mime-info's application/schema+json (80), which claims every file
        # starting with {"$schema": and which some tools check before globs
        magic_priority=90,
        magic=('<match type="string" value="speedscope.app/file-format-schema" offset="0:256"/>',),
    ),
    MimeType(
        name="text/x-collapsed-stacks",
        comment="Collapsed (folded) stacks",
        globs=("*.folded", "*.collapsed", "*.austin"),
        sub_class_of="text/plain",
    ),
    MimeType(
        name="application/x-pyinstrument-session",
        comment="pyinstrument saved session",
        globs=("*.pyisession",),
        sub_class_of="application/json",
    ),
)

# Characters that force quoting of an Exec argument (Desktop Entry spec, "The Exec key").
_EXEC_RESERVED = frozenset(" \t\n\"'\\><~|&;$*?#()`")


def quote_exec_arg(arg: str) -> str:
    """Quote one argument for a desktop-entry ``Exec`` value.

    Two escape layers apply: quoting for the command line, then the generic string escape that
    doubles every backslash, so a literal backslash ends up as four in the file.
    """
    if "\n" in arg or "\r" in arg:
        raise ValueError(f"cannot put a newline in an Exec argument: {arg!r}")
    arg = arg.replace("%", "%%")
    if arg and not _EXEC_RESERVED.intersection(arg):
        return arg
    inner = re.sub(r'(["`$\\])', r"\\\1", arg)
    return f'"{inner}"'.replace("\\", "\\\\")


def _program(command: Sequence[str]) -> str:
    """The executable that ``TryExec`` should check: skip an ``env VAR=value`` prefix."""
    args = list(command)
    if args and Path(args[0]).name == "env":
        args = [a for a in args[1:] if "=" not in a] or args
    return args[0]


def render_desktop_entry(command: Sequence[str] = (APP_ID,)) -> str:
    """The ``.desktop`` text with ``Exec`` running ``command`` (argv list) on the selected files."""
    exec_cmd = " ".join(quote_exec_arg(a) for a in command)
    mime_list = "".join(f"{t.name};" for t in MIME_TYPES)
    return f"""[Desktop Entry]
Type=Application
Version=1.4
Name=perfview
GenericName=Profile Viewer
Comment=View cProfile, torch.profiler trace and memory_profiler results
Icon={APP_ID}
TryExec={quote_exec_arg(_program(command))}
Exec={exec_cmd} %F
Terminal=false
StartupNotify=true
StartupWMClass={APP_ID}
Categories=Development;Profiling;Qt;
Keywords=profile;profiler;cProfile;pstats;torch;trace;flame graph;memory;
MimeType={mime_list}
Actions=new-window;

[Desktop Action new-window]
Name=New Window
Exec={exec_cmd} --new-window %F
"""


def _mime_type_xml(mime: MimeType) -> list[str]:
    lines = [f'  <mime-type type="{mime.name}">', f"    <comment>{mime.comment}</comment>"]
    if mime.sub_class_of:
        lines.append(f'    <sub-class-of type="{mime.sub_class_of}"/>')
    lines += [f'    <glob pattern="{g}"/>' for g in mime.globs]
    if mime.magic:
        lines.append(f'    <magic priority="{mime.magic_priority}">')
        lines += [f"      {line}" for m in mime.magic for line in m.splitlines()]
        lines.append("    </magic>")
    lines.append("  </mime-type>")
    return lines


def render_mime_xml() -> str:
    """shared-mime-info package XML declaring every type in :data:`MIME_TYPES`."""
    lines = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        "<!-- Generated by `python -m perfview.desktop render resources`; do not edit. -->",
        '<mime-info xmlns="http://www.freedesktop.org/standards/shared-mime-info">',
    ]
    for mime in MIME_TYPES:
        lines += _mime_type_xml(mime)
    lines.append("</mime-info>")
    return "\n".join(lines) + "\n"


def icon_bytes() -> bytes:
    """The SVG application icon shipped in the package (also the window icon)."""
    return (importlib.resources.files("perfview") / "resources" / "icons" / ICON_NAME).read_bytes()


def _source_tree_root() -> Path | None:
    """Folder holding the ``perfview`` package when it runs from a checkout, else None.

    A fresh interpreter started by the desktop would not find such a package, so the Exec line
    must set ``PYTHONPATH`` for it.
    """
    spec = importlib.util.find_spec(APP_ID)
    if spec is None or spec.origin is None:
        return None
    root = Path(spec.origin).resolve().parent.parent
    site_dirs = {sysconfig.get_paths()[k] for k in ("purelib", "platlib")}
    site_dirs.update(site.getsitepackages())
    site_dirs.add(site.getusersitepackages())
    return None if any(Path(d).resolve() == root for d in site_dirs if d) else root


def resolve_command() -> list[str]:
    """argv that starts perfview: the installed ``perfview`` script, else ``python -m perfview``."""
    found = shutil.which(APP_ID)
    if found:
        # Keep symlinks (pipx, ~/.local/bin): that path survives upgrades of the target.
        return [os.path.abspath(found)]
    command = [sys.executable, "-m", APP_ID]
    root = _source_tree_root()
    return ["env", f"PYTHONPATH={root}", *command] if root else command


def data_home() -> Path:
    """``$XDG_DATA_HOME`` or its default ``~/.local/share``."""
    value = os.environ.get("XDG_DATA_HOME", "")
    return Path(value) if os.path.isabs(value) else Path.home() / ".local" / "share"


@dataclass(frozen=True)
class InstallPaths:
    """Where each file lands under one XDG data dir."""

    root: Path

    @property
    def desktop(self) -> Path:
        return self.root / "applications" / DESKTOP_NAME

    @property
    def mime_xml(self) -> Path:
        return self.root / "mime" / "packages" / MIME_XML_NAME

    @property
    def icon(self) -> Path:
        return self.root / "icons" / "hicolor" / "scalable" / "apps" / ICON_NAME

    def all(self) -> tuple[Path, Path, Path]:
        return (self.desktop, self.mime_xml, self.icon)


def _run_tool(argv: Sequence[str], out: TextIO) -> bool:
    """Run one database tool; a missing tool is only reported (not every system ships it)."""
    if shutil.which(argv[0]) is None:
        print(f"skipped {argv[0]}: not installed", file=out)
        return True
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        print(
            f"error: {' '.join(argv)} failed ({proc.returncode}): {proc.stderr.strip()}", file=out
        )
        return False
    print(f"ran {' '.join(argv)}", file=out)
    return True


def _update_databases(paths: InstallPaths, out: TextIO) -> bool:
    ok = _run_tool(["update-mime-database", str(paths.root / "mime")], out)
    ok = _run_tool(["update-desktop-database", str(paths.desktop.parent)], out) and ok
    # Icon themes notice new icons by the theme folder's mtime (icon theme spec).
    hicolor = paths.root / "icons" / "hicolor"
    if hicolor.is_dir():
        os.utime(hicolor)
    return ok


def _unsupported_platform(out: TextIO) -> bool:
    if sys.platform in ("darwin", "win32"):
        print(
            "error: --install-desktop targets freedesktop.org desktops (Linux/BSD); on macOS "
            "use an .app bundle, on Windows an installer that registers a ProgId (see README).",
            file=out,
        )
        return True
    return False


def install(
    *,
    root: Path | None = None,
    command: Sequence[str] | None = None,
    run_tools: bool = True,
    out: TextIO | None = None,
) -> int:
    """Install the menu entry, MIME types and icon for the current user; returns an exit code.

    ``root`` defaults to ``$XDG_DATA_HOME``; ``command`` to :func:`resolve_command`.
    """
    out = out or sys.stdout
    if root is None and _unsupported_platform(out):
        return 1
    paths = InstallPaths(root or data_home())
    argv = list(command) if command else resolve_command()
    contents = (render_desktop_entry(argv).encode(), render_mime_xml().encode(), icon_bytes())
    try:
        for path, data in zip(paths.all(), contents, strict=True):
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic.write_bytes(path, data)  # a crash never leaves a half .desktop file
            print(f"installed {path}", file=out)
    except OSError as exc:
        print(f"error: {exc}", file=out)
        return 1
    print(f"Exec command: {' '.join(argv)}", file=out)
    ok = not run_tools or _update_databases(paths, out)
    return 0 if ok else 1


def uninstall(
    *, root: Path | None = None, run_tools: bool = True, out: TextIO | None = None
) -> int:
    """Remove what :func:`install` wrote and refresh the databases; returns an exit code."""
    out = out or sys.stdout
    if root is None and _unsupported_platform(out):
        return 1
    paths = InstallPaths(root or data_home())
    try:
        for path in paths.all():
            if path.exists():
                path.unlink()
                print(f"removed {path}", file=out)
            else:
                print(f"not installed: {path}", file=out)
    except OSError as exc:
        print(f"error: {exc}", file=out)
        return 1
    ok = not run_tools or _update_databases(paths, out)
    return 0 if ok else 1


def render(folder: Path) -> None:
    """Write the packaging files (``Exec=perfview``) and the source icon into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    atomic.write_text(folder / DESKTOP_NAME, render_desktop_entry())
    atomic.write_text(folder / MIME_XML_NAME, render_mime_xml())
    atomic.write_bytes(folder / ICON_NAME, icon_bytes())


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m perfview.desktop install|uninstall|render DIR`` (used by install_desktop.sh)."""
    parser = argparse.ArgumentParser(prog="python -m perfview.desktop", description=__doc__)
    parser.add_argument("action", choices=("install", "uninstall", "render"))
    parser.add_argument("folder", nargs="?", type=Path, help="render: output folder")
    parser.add_argument("--data-home", type=Path, help="install root (default $XDG_DATA_HOME)")
    args = parser.parse_args(argv)
    if args.action == "render":
        if args.folder is None:
            parser.error("render needs a folder")
        render(args.folder)
        return 0
    if args.action == "install":
        return install(root=args.data_home)
    return uninstall(root=args.data_home)


if __name__ == "__main__":
    sys.exit(main())
