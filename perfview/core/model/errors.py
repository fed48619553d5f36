"""Errors that carry one human sentence for the user (shown in the UI, printed by the CLI)."""


class LoadError(Exception):
    """A file could not be loaded. `str(err)` is a complete sentence meant for the user."""


class UnknownFormat(LoadError):
    """No loader recognised the file's content."""


class EmptyProfile(LoadError):
    """The file is of a known format but holds nothing to show."""


class LoadCancelled(Exception):
    """Raised inside a loader when its progress callback asks to stop (the user pressed Cancel)."""


# Warnings that say a file was cut short and only part of it loaded. The trace loader writes
# them (one wording each, here, so readers can tell); a multi-rank job marks a rank whose file
# says one as partial and leaves it out of straggler scoring (a rank that stops early looks
# late or slow for the wrong reason).
def truncated_after(events: int) -> str:
    return f"the file is truncated after {events:,} events; loaded what was complete"


GZIP_ENDS_EARLY = "the gzip stream ends early; loaded what was decompressed"
GZIP_CORRUPT = "the gzip stream is corrupt; loaded what was decompressed before the damage"
_PARTIAL_STARTS = ("the file is truncated after ", GZIP_ENDS_EARLY, GZIP_CORRUPT)


def is_partial(warning: str) -> bool:
    """Whether a loader warning says the file was cut short (only part of it loaded)."""
    return warning.startswith(_PARTIAL_STARTS)
