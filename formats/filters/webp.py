"""WEBP (18): each part (one tile of uint8 pixels, `y_extent` rows of `x_extent` bytes) is
a WebP image. Metadata: the part table (`parts.py`) with the encoded image sizes; tiles of
WebP-filtered attributes are not chunked.

arrayscope has no image dependency: the encoded images are shown and kept as bytes.
Decoding uses Pillow when it happens to be installed (optional); re-encoding is never
attempted (libwebp's output depends on its version and settings)."""
from __future__ import annotations

import io

from ..cursor import Cursor
from ..fielddoc import doc
from ..tiledb.enums import WEBP_FORMATS, FilterType
from .base import DataInfo, Filter, FilterError, FilterSpec, RunContext, Stage
from .options import Option
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


D_QUALITY = doc("WebP quality (0–100)", spec="filters/webp.md")
D_WEBP_FMT = doc("WebP input format (colour channel layout of the cells)", spec="filters/webp.md")
D_LOSSLESS = doc("1 for lossless WebP", spec="filters/webp.md")
D_EXTENT = doc("Tile extent of the image in this dimension", spec="filters/webp.md")
D_PAD = doc("Struct padding written verbatim from the C struct of WebP options")


class Webp(Filter):
    type = FilterType.WEBP
    options = (
        Option("quality", "Quality", "f32", D_QUALITY),
        Option("format", "Input format", "u8", D_WEBP_FMT, enum=WEBP_FORMATS),
        Option("lossless", "Lossless", "bool", D_LOSSLESS),
        Option("y_extent", "Y extent", "u16", D_EXTENT),
        Option("x_extent", "X extent", "u16", D_EXTENT),
    )
    option_padding = D_PAD
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
