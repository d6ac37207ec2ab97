"""Writers of TileDB files, from the same layouts the parsers read: a generic tile
(`generic_tile`) and a fragment-metadata file (`fragment_metadata`). Used by salvage to
rewrite a damaged fragment without libtiledb; nothing here opens a dataset."""
