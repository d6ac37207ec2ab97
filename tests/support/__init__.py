"""Helpers the tests share: the TileDB catalogue, tiledb-py oracles, GUI and mutation helpers."""
