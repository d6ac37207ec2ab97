"""WEBP (18): each part (one tile of uint8 pixels, `y_extent` rows of `x_extent` bytes) is
a WebP image. Metadata: the part table (`parts.py`) with the encoded image sizes; tiles of
WebP-filtered attributes are not chunked.

arrayscope has no image dependency: the encoded images are shown and kept as bytes.
Decoding uses Pillow when it happens to be installed (optional); re-encoding is never
attempted (libwebp's output depends on its version and settings)."""
from __future__ import annotations

import io

from ..cursor import Cursor
from ..tiledb.enums import FilterType
from .base import DataInfo, Filter, FilterError, FilterSpec, RunContext, Stage
from .parts import parse_parts, read_parts, rest_md, split

MODES = {1: "RGB", 2: "BGR", 3: "RGBA", 4: "BGRA"}


def _decode(img: bytes, fmt: int) -> bytes:
    try:
        from PIL import Image  # optional
    except ImportError:
        raise FilterError("WEBP: decoding WebP images needs an image codec, and arrayscope "
                          "has none (install Pillow to decode them); the encoded images are "
                          "kept as bytes") from None
    mode = MODES.get(fmt)
    if mode is None:
        raise FilterError(f"WEBP: input format {fmt} is not RGB/BGR/RGBA/BGRA")
    with Image.open(io.BytesIO(img)) as im:
        rgb = im.convert("RGBA" if len(mode) == 4 else "RGB")
        raw = rgb.tobytes()
    if mode.startswith("BGR"):
        import numpy as np
        px = np.frombuffer(raw, dtype=np.uint8).reshape(-1, len(mode)).copy()
        px[:, [0, 2]] = px[:, [2, 0]]
        raw = px.tobytes()
    return raw


class Webp(Filter):
    type = FilterType.WEBP
    deterministic = False

    def parse_metadata(self, spec: FilterSpec, cur: Cursor, info: DataInfo) -> None:
        parse_parts(cur)

    def reverse(self, spec, stage: Stage, info: DataInfo, run: RunContext) -> Stage:
        sizes, rest = read_parts(stage, spec.name)
        parts = split(stage.data_bytes, sizes, spec.name, len(stage.metadata_bytes))
        fmt = int(spec.options.get("format", 0))
        return Stage(rest_md(rest), [b"".join(_decode(bytes(p), fmt) for p in parts)])

    def forward(self, spec, stage: Stage, info: DataInfo, run: RunContext) -> Stage:
        raise FilterError("WEBP: arrayscope does not encode WebP images (libwebp's output "
                          "depends on its version); the stored images are checked by decoding")
