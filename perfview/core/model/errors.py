"""Errors that carry one human sentence for the user (shown in the UI, printed by the CLI)."""


class LoadError(Exception):
    """A file could not be loaded. `str(err)` is a complete sentence meant for the user."""


class UnknownFormat(LoadError):
    """No loader recognised the file's content."""


class EmptyProfile(LoadError):
    """The file is of a known format but holds nothing to show."""


class LoadCancelled(Exception):
    """Raised inside a loader when its progress callback asks to stop (the user pressed Cancel)."""
