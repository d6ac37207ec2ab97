"""Helpers the tests share: the TileDB catalogue, tiledb-py oracles, GUI and mutation helpers."""


def metadata_dict(md) -> dict:
    """The key/values an array metadata file leaves (a later entry overrides or deletes)."""
    out: dict = {}
    for e in md.entries:
        if e.deleted:
            out.pop(e.key, None)
        else:
            out[e.key] = e.value
    return out
