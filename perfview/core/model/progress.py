"""Progress reporting without Qt: loaders call `progress(fraction, message)`.

A progress callable may raise `LoadCancelled` to stop a load; loaders let it propagate.
"""

from collections.abc import Callable

Progress = Callable[[float, str], None]


def noop(fraction: float, message: str) -> None:
    """The default progress sink: ignores everything."""
