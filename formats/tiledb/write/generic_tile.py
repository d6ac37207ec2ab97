"""A generic tile written (format_spec/generic_tile.md): the header (`GENERIC_HEADER`), the
serialized filter pipeline, then the payload as a tile (`NUM_CHUNKS`, per chunk
`CHUNK_HEADER`, its metadata and filtered data), each chunk run forward through the
pipeline's filters (`formats/filters`, each filter's `forward`).

The header's constants and the pipeline are those of a generic tile the same writer made
(`GenericTileForm.of`): a rewritten fragment-metadata file keeps its array's pipeline (GZIP,
and AES-256-GCM under the same key when the array is encrypted)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional

from ...filters import FilterSpec, RunContext, Stage, get, stage_infos
from ..model.fragment_model import GENERIC_INFO
from ..parse.rawtile import GT_HEAD_SIZE, TileError, generic_specs, peek_generic_tile
from ..parse.tile_layout import CHUNK_HEADER, GENERIC_HEADER, NUM_CHUNKS

# libtiledb splits a tile into chunks of at most 64 KiB (`constants::max_tile_chunk_size`);
# a generic tile's cells are single bytes, so every chunk but the last has exactly that.
CHUNK_SIZE = 64 * 1024


@dataclass(frozen=True)
class GenericTileForm:
    """What every generic tile of one file shares: the header's format version, datatype,
    cell size and encryption type, and the serialized pipeline (with its parsed filters)."""

    version: int
    datatype: int
    cell_size: int
    encryption: int
    pipeline: bytes
    specs: tuple

    @classmethod
    def of(cls, source, offset: int) -> "GenericTileForm":
        """The form of the generic tile at `offset` of `source` (TileError when its header
        or pipeline cannot be read)."""
        head = peek_generic_tile(source, offset)
        if head is None:
            raise TileError(f"generic tile at {offset}: header runs past the end", offset)
        version, _p, _t, datatype, cell_size, enc, psize = GENERIC_HEADER.unpack_from(
            source.read(offset, GT_HEAD_SIZE))
        specs = generic_specs(source, offset, psize)
        return cls(version, datatype, cell_size, enc,
                   bytes(source.read(offset + GT_HEAD_SIZE, psize)), tuple(specs))


def encode_chunk(specs: List[FilterSpec], data: bytes, key: Optional[bytes]) -> Stage:
    """One chunk of a generic tile's payload run forward through `specs`."""
    infos = stage_infos(list(specs), GENERIC_INFO)
    stage = Stage([], [data] if data else [])
    for k, spec in enumerate(specs):
        stage = get(spec.type).forward(spec, stage, infos[k],
                                       RunContext(key=key, original_length=len(data)))
    return stage


def encode_generic_tile(payload: bytes, form: GenericTileForm, key: Optional[bytes]) -> bytes:
    """The bytes of a generic tile holding `payload`, in `form` (`key`: the array's AES key,
    needed when the form's pipeline encrypts)."""
    chunks = [payload[i:i + CHUNK_SIZE] for i in range(0, len(payload), CHUNK_SIZE)] or [b""]
    body = [NUM_CHUNKS.pack(len(chunks))]
    for c in chunks:
        st = encode_chunk(list(form.specs), c, key)
        md, data = st.metadata_bytes, st.data_bytes
        body += [CHUNK_HEADER.pack(len(c), len(data), len(md)), md, data]
    tile = b"".join(body)
    head = GENERIC_HEADER.pack(form.version, len(tile), len(payload), form.datatype,
                               form.cell_size, form.encryption, len(form.pipeline))
    return head + form.pipeline + tile
