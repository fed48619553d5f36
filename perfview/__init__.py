"""perfview: one native viewer for cProfile, torch.profiler traces and memory_profiler output.

This module must stay import-cheap: it never imports Qt, pandas or torch.
"""

__version__ = "0.1.0"
