"""The TileDB array as a model (no nodes): the array and fragment models, the directory layout,
timestamped names, listings, format versions, group members."""
