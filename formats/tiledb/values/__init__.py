"""The `values` command for TileDB: fields decoded to typed cells, coordinates."""
