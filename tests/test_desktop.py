"""Desktop integration: generated packaging files, validators, and a real per-user install.

The tool-based tests need the Debian/Ubuntu packages desktop-file-utils, libxml2-utils, xdg-utils,
shared-mime-info and libfile-mimeinfo-perl (xdg-mime's `mimetype` backend); each skips when its
tool is missing.
"""

from __future__ import annotations

import io
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from perfview import desktop
from tests.conftest import ROOT, sample

RESOURCES = ROOT / "resources"
PSTATS = "application/x-python-pstats"
TRACE_GZ = "application/x-chrome-trace-gzip"
MPROF = "application/x-mprof-data"


def _need(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        pytest.skip(f"{tool} is not installed")
    return path


def _run(*argv: str) -> str:
    proc = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=60)
    assert proc.returncode == 0, f"{argv}: {proc.stdout}{proc.stderr}"
    return proc.stdout.strip()


@pytest.fixture
def xdg_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point every XDG variable (and HOME) into tmp_path so nothing real is touched."""
    data = tmp_path / "data"
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_DATA_HOME", str(data))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("XDG_DATA_DIRS", f"{data}:/usr/local/share:/usr/share")
    # Force xdg-mime's generic backend (mimeinfo.cache, shared-mime-info) whatever the host runs.
    for var in (
        "XDG_CURRENT_DESKTOP",
        "DESKTOP_SESSION",
        "KDE_FULL_SESSION",
        "GNOME_DESKTOP_SESSION_ID",
    ):
        monkeypatch.delenv(var, raising=False)
    (tmp_path / "home").mkdir()
    return data


def test_repo_resources_match_generated_files() -> None:
    """resources/ is rendered output: `python -m perfview.desktop render resources` rewrites it."""
    assert (RESOURCES / "perfview.desktop").read_text() == desktop.render_desktop_entry()
    assert (RESOURCES / "perfview-mime.xml").read_text() == desktop.render_mime_xml()
    assert (RESOURCES / "perfview.svg").read_bytes() == desktop.icon_bytes()


def test_desktop_entry_lists_every_mime_type() -> None:
    text = desktop.render_desktop_entry()
    assert "\nExec=perfview %F\n" in text
    mime_line = next(line for line in text.splitlines() if line.startswith("MimeType="))
    assert mime_line.removeprefix("MimeType=").rstrip(";").split(";") == [
        m.name for m in desktop.MIME_TYPES
    ]


def test_mime_xml_declares_requested_globs() -> None:
    ns = {"m": "http://www.freedesktop.org/standards/shared-mime-info"}
    root = ET.fromstring(desktop.render_mime_xml())
    globs = {
        t.get("type"): [g.get("pattern") for g in t.findall("m:glob", ns)]
        for t in root.findall("m:mime-type", ns)
    }
    assert globs == {
        PSTATS: ["*.prof", "*.pstats"],
        "application/x-chrome-trace": ["*.pt.trace.json", "*.trace.json"],
        TRACE_GZ: ["*.pt.trace.json.gz", "*.trace.json.gz"],
        MPROF: ["mprofile_*.dat"],
        "application/x-memray-capture": ["memray-*.bin", "*.memray.bin", "*.memray"],
        "application/x-pytorch-cuda-memory-snapshot": ["*snapshot*.pickle", "*snapshot*.pickle.gz"],
        "application/x-perfview-workspace": ["*.perfview"],
        "application/x-speedscope-json": ["*.speedscope.json"],
        "application/x-gecko-profile": ["*.gecko.json"],
        "application/x-scalene-profile": ["*.scalene.json"],
        "application/x-pprof": ["*.pprof", "*.pb.gz"],
        "text/x-collapsed-stacks": ["*.folded", "*.collapsed", "*.austin"],
        "application/x-pyinstrument-session": ["*.pyisession"],
    }


def test_icon_is_svg() -> None:
    root = ET.fromstring(desktop.icon_bytes())
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert root.get("viewBox") == "0 0 128 128"


@pytest.mark.parametrize(
    ("arg", "expected"),
    [
        ("/usr/bin/perfview", "/usr/bin/perfview"),
        ("/opt/my apps/perfview", '"/opt/my apps/perfview"'),
        ("50%", "50%%"),
        ('a"b', '"a\\\\"b"'),  # quote escaped with \, then \ doubled by the string escape
        ("c:\\x y", '"c:\\\\\\\\x y"'),
        ("PYTHONPATH=/src", "PYTHONPATH=/src"),
    ],
)
def test_quote_exec_arg(arg: str, expected: str) -> None:
    assert desktop.quote_exec_arg(arg) == expected


def test_quote_exec_arg_rejects_newline() -> None:
    with pytest.raises(ValueError, match="newline"):
        desktop.quote_exec_arg("a\nb")


def test_try_exec_skips_env_prefix() -> None:
    text = desktop.render_desktop_entry(["env", "PYTHONPATH=/src", "/usr/bin/python3", "-m", "x"])
    assert "\nTryExec=/usr/bin/python3\n" in text
    assert "\nExec=env PYTHONPATH=/src /usr/bin/python3 -m x %F\n" in text


def test_resolve_command_runs_perfview() -> None:
    command = desktop.resolve_command()
    # An installed entry point resolves to its absolute path (e.g. a venv's bin/perfview).
    assert Path(command[-1]).name == "perfview" or command[-2:] == ["-m", "perfview"]


def test_desktop_file_validates(tmp_path: Path) -> None:
    tool = _need("desktop-file-validate")
    _run(tool, str(RESOURCES / "perfview.desktop"))
    installed = tmp_path / "perfview.desktop"
    installed.write_text(desktop.render_desktop_entry(["/opt/my apps/bin/perfview"]))
    assert _run(tool, str(installed)) == ""


def test_mime_xml_is_well_formed() -> None:
    tool = _need("xmllint")
    _run(tool, "--noout", str(RESOURCES / "perfview-mime.xml"), str(RESOURCES / "perfview.svg"))


def test_install_and_uninstall_files(tmp_path: Path) -> None:
    out = io.StringIO()
    root = tmp_path / "share"
    assert desktop.install(root=root, command=["/bin/perfview"], run_tools=False, out=out) == 0
    paths = desktop.InstallPaths(root)
    assert paths.desktop == root / "applications" / "perfview.desktop"
    assert paths.mime_xml == root / "mime" / "packages" / "perfview-mime.xml"
    assert paths.icon == root / "icons" / "hicolor" / "scalable" / "apps" / "perfview.svg"
    assert "\nExec=/bin/perfview %F\n" in paths.desktop.read_text()
    assert paths.mime_xml.read_text() == desktop.render_mime_xml()
    assert paths.icon.read_bytes() == desktop.icon_bytes()
    assert out.getvalue().count("installed ") == 3
    out = io.StringIO()
    assert desktop.uninstall(root=root, run_tools=False, out=out) == 0
    assert not any(p.exists() for p in paths.all())
    assert out.getvalue().count("removed ") == 3


def test_xdg_mime_sees_installed_types(xdg_home: Path, tmp_path: Path) -> None:
    """Full install through the real tools, then ask xdg-mime as a file manager would."""
    for tool in ("update-mime-database", "update-desktop-database", "mimetype"):
        _need(tool)
    xdg_mime = _need("xdg-mime")
    prof = sample("pstats/gprof2dot_print1.pstats")
    trace_gz = sample("kineto_cpu/hta_cpu_only_rank-34.pt.trace.json.gz")
    mprof = sample("mprof_dat/montepython_mprofile_20240116233958.dat")
    renamed = tmp_path / "mprofile_20240101000000.dat"
    shutil.copyfile(sample("mprof_dat/ctrml_mprofile.dat"), renamed)
    no_ext = tmp_path / "unknown"  # no glob matches: the 0xFB marshal magic decides
    shutil.copyfile(prof, no_ext)
    trace_no_ext = tmp_path / "trace_unknown"  # "schemaVersion" magic decides
    shutil.copyfile(sample("kineto_cpu/dtu_jc_resnet18_cpu_trace.json"), trace_no_ext)

    out = io.StringIO()
    assert desktop.install(out=out) == 0, out.getvalue()
    assert "ran update-mime-database" in out.getvalue()
    assert (xdg_home / "mime" / "packages" / "perfview-mime.xml").is_file()

    for path, mime in [(prof, PSTATS), (trace_gz, TRACE_GZ), (mprof, MPROF), (renamed, MPROF)]:
        assert _run(xdg_mime, "query", "filetype", str(path)) == mime, path
    assert _run(xdg_mime, "query", "filetype", str(no_ext)) == PSTATS
    assert _run(xdg_mime, "query", "filetype", str(trace_no_ext)) == "application/x-chrome-trace"
    for mime in (PSTATS, TRACE_GZ, MPROF):
        assert _run(xdg_mime, "query", "default", mime) == "perfview.desktop"

    assert desktop.uninstall(out=io.StringIO()) == 0
    assert _run(xdg_mime, "query", "default", PSTATS) == ""


def test_xdg_mime_sees_memory_captures(xdg_home: Path, tmp_path: Path) -> None:
    """memray captures and CUDA snapshots by name and, renamed, by their magic bytes."""
    for tool in ("update-mime-database", "update-desktop-database", "mimetype"):
        _need(tool)
    xdg_mime = _need("xdg-mime")
    memray_bin = tmp_path / "capture_unknown"  # LZ4 frame + inner `memray` header decides
    shutil.copyfile(sample("memray/async_analysis_linux_memray.bin"), memray_bin)
    named = tmp_path / "memray-job.123.bin"
    shutil.copyfile(memray_bin, named)
    snapshot = tmp_path / "state_unknown"  # pickle header + `segments` decides
    shutil.copyfile(sample("cuda_memory_snapshot/cs336_silmont_mem_snapshot.pickle"), snapshot)
    named_snapshot = tmp_path / "mem_snapshot.pickle"
    shutil.copyfile(snapshot, named_snapshot)
    assert desktop.install(out=io.StringIO()) == 0
    for path in (memray_bin, named):
        assert _run(xdg_mime, "query", "filetype", str(path)) == "application/x-memray-capture"
    for path in (snapshot, named_snapshot):
        mime = _run(xdg_mime, "query", "filetype", str(path))
        assert mime == "application/x-pytorch-cuda-memory-snapshot", path


def test_xdg_mime_sees_sampled_profile_types(xdg_home: Path, tmp_path: Path) -> None:
    """speedscope, collapsed stacks and pyinstrument sessions get perfview's types."""
    for tool in ("update-mime-database", "update-desktop-database", "mimetype"):
        _need(tool)
    xdg_mime = _need("xdg-mime")
    files = {
        "p.speedscope.json": ("speedscope/pyspy_cs336_multithread.speedscope.json",
                              "application/x-speedscope-json"),
        "s.folded": ("collapsed/brook_os_kernel_profile.folded", "text/x-collapsed-stacks"),
        "s.collapsed": ("collapsed/pylaprof_flamegraph.txt", "text/x-collapsed-stacks"),
        "r.austin": ("collapsed/austin4_repeat.austin", "text/x-collapsed-stacks"),
        "x.pyisession": ("pyinstrument/pyinstrument_pr436_dummy_saved.pyisession",
                         "application/x-pyinstrument-session"),
        # no glob of ours matches: the schema URL magic decides against plain JSON
        "profile.json": ("speedscope/austin2speedscope_austin-python.json",
                         "application/x-speedscope-json"),
    }  # fmt: skip
    for name, (rel, _mime) in files.items():
        shutil.copyfile(sample(rel), tmp_path / name)
    assert desktop.install(out=io.StringIO()) == 0
    for name, (_rel, mime) in files.items():
        assert _run(xdg_mime, "query", "filetype", str(tmp_path / name)) == mime, name
        assert _run(xdg_mime, "query", "default", mime) == "perfview.desktop"
    assert desktop.uninstall(out=io.StringIO()) == 0
