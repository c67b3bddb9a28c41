"""Issue trackers as sources (GitHub exports)."""
