"""The TileDB files annotated to the byte: schema, pipeline, tiles, fragment metadata, commits,
groups (format_spec/)."""
