"""Comparing two runs: aligned tables with deltas, the differential tree, the compare views."""
