"""pprof's `profile.proto` as a protobuf message class, built at run time without protoc.

The schema is google/pprof's `proto/profile.proto` (proto3, so repeated numbers are packed),
written here as a `FileDescriptorProto`: the `protobuf` runtime (the optional extra `pprof`)
then parses a profile in its C implementation (upb), which checks every wire type and length.
No generated `_pb2` module is kept in the tree, and nothing is imported until a pprof file is
opened: `message_class()` builds the class once, on first use.
"""

from __future__ import annotations

import importlib
from functools import cache
from typing import Any

INSTALL = "pip install 'perfview[pprof]'"

# (message, ((field, number, type, repeated, message type), ...)); types as in descriptor.proto
_INT64, _UINT64, _BOOL, _STRING, _MESSAGE = 3, 4, 8, 9, 11
_MESSAGES: tuple[tuple[str, tuple[tuple[str, int, int, bool, str], ...]], ...] = (
    (
        "Profile",
        (
            ("sample_type", 1, _MESSAGE, True, "ValueType"),
            ("sample", 2, _MESSAGE, True, "Sample"),
            ("mapping", 3, _MESSAGE, True, "Mapping"),
            ("location", 4, _MESSAGE, True, "Location"),
            ("function", 5, _MESSAGE, True, "Function"),
            ("string_table", 6, _STRING, True, ""),
            ("drop_frames", 7, _INT64, False, ""),
            ("keep_frames", 8, _INT64, False, ""),
            ("time_nanos", 9, _INT64, False, ""),
            ("duration_nanos", 10, _INT64, False, ""),
            ("period_type", 11, _MESSAGE, False, "ValueType"),
            ("period", 12, _INT64, False, ""),
            ("comment", 13, _INT64, True, ""),
            ("default_sample_type", 14, _INT64, False, ""),
            ("doc_url", 15, _INT64, False, ""),
        ),
    ),
    ("ValueType", (("type", 1, _INT64, False, ""), ("unit", 2, _INT64, False, ""))),
    (
        "Sample",
        (
            ("location_id", 1, _UINT64, True, ""),
            ("value", 2, _INT64, True, ""),
            ("label", 3, _MESSAGE, True, "Label"),
        ),
    ),
    (
        "Label",
        (
            ("key", 1, _INT64, False, ""),
            ("str", 2, _INT64, False, ""),
            ("num", 3, _INT64, False, ""),
            ("num_unit", 4, _INT64, False, ""),
        ),
    ),
    (
        "Mapping",
        (
            ("id", 1, _UINT64, False, ""),
            ("memory_start", 2, _UINT64, False, ""),
            ("memory_limit", 3, _UINT64, False, ""),
            ("file_offset", 4, _UINT64, False, ""),
            ("filename", 5, _INT64, False, ""),
            ("build_id", 6, _INT64, False, ""),
            ("has_functions", 7, _BOOL, False, ""),
            ("has_filenames", 8, _BOOL, False, ""),
            ("has_line_numbers", 9, _BOOL, False, ""),
            ("has_inline_frames", 10, _BOOL, False, ""),
        ),
    ),
    (
        "Location",
        (
            ("id", 1, _UINT64, False, ""),
            ("mapping_id", 2, _UINT64, False, ""),
            ("address", 3, _UINT64, False, ""),
            ("line", 4, _MESSAGE, True, "Line"),
            ("is_folded", 5, _BOOL, False, ""),
        ),
    ),
    (
        "Line",
        (
            ("function_id", 1, _UINT64, False, ""),
            ("line", 2, _INT64, False, ""),
            ("column", 3, _INT64, False, ""),
        ),
    ),
    (
        "Function",
        (
            ("id", 1, _UINT64, False, ""),
            ("name", 2, _INT64, False, ""),
            ("system_name", 3, _INT64, False, ""),
            ("filename", 4, _INT64, False, ""),
            ("start_line", 5, _INT64, False, ""),
        ),
    ),
)
_PACKAGE = "perftools.profiles"


@cache
def message_class() -> Any:
    """The `perftools.profiles.Profile` message class (ImportError without `protobuf`)."""
    # imported by name: the protobuf runtime is an extra, and its types are not needed here
    descriptor_pb2 = importlib.import_module("google.protobuf.descriptor_pb2")
    descriptor_pool = importlib.import_module("google.protobuf.descriptor_pool")
    message_factory = importlib.import_module("google.protobuf.message_factory")
    file = descriptor_pb2.FileDescriptorProto(
        name="perfview/profile.proto", package=_PACKAGE, syntax="proto3"
    )
    for message, fields in _MESSAGES:
        proto = file.message_type.add(name=message)
        for name, number, kind, repeated, type_name in fields:
            field = proto.field.add(name=name, number=number, type=kind)
            field.label = field.LABEL_REPEATED if repeated else field.LABEL_OPTIONAL
            if type_name:
                field.type_name = f".{_PACKAGE}.{type_name}"
    pool = descriptor_pool.DescriptorPool()  # a pool of its own: no clash with other pprof users
    pool.Add(file)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{_PACKAGE}.Profile"))


__all__ = ["INSTALL", "message_class"]
