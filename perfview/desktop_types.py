"""The table of MIME types perfview registers on freedesktop.org systems.

Why its own module: the table is data (one record per format, with its globs and magic), long
and edited whenever a loader is added, while :mod:`perfview.desktop` holds the logic that renders
and installs it. Keeping them apart keeps both short; ``perfview.desktop`` re-exports
:class:`MimeType` and :data:`MIME_TYPES` so callers keep importing them from there.
"""

from __future__ import annotations

from dataclasses import dataclass


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
        name="application/x-gecko-profile",
        comment="Firefox Profiler profile (Gecko JSON: Firefox, samply, Python 3.15's sampler)",
        globs=("*.gecko.json",),
        sub_class_of="application/json",
        # Python's sampler and the Firefox Profiler start with the meta object
        magic_priority=60,
        magic=('<match type="string" value="{&quot;meta&quot;:{" offset="0:16"/>',),
    ),
    MimeType(
        name="application/x-scalene-profile",
        comment="Scalene profile (CPU, GPU and memory per line)",
        globs=("*.scalene.json",),  # `perfview record --mode scalene` names its output so
        sub_class_of="application/json",
    ),
    MimeType(
        name="application/x-pprof",
        comment="pprof profile (Go, pyroscope, Austin; protobuf)",
        globs=("*.pprof", "*.pb.gz"),
        sub_class_of="application/octet-stream",
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
