"""View geometry without Qt: flame/icicle rectangles, timeline tracks, colours."""
