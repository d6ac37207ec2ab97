"""WEBP (18): each part (one tile of uint8 pixels, `y_extent` rows of `x_extent` bytes) is
a WebP image. Metadata: the part table (`parts.py`) with the encoded image sizes; tiles of
WebP-filtered attributes are not chunked.

Images are decoded and encoded with Pillow (a runtime dependency; without it the images are
kept as bytes and the tile is reported as not checked, never as damage). Lossless images
decode bit-exact; lossy ones to what libwebp gives any reader. Forward encodes with the
filter's settings: libwebp's output depends on its version, so the forward check accepts a
re-encoding that differs (`deterministic = False`) and the stored images are checked by
decoding."""
from __future__ import annotations

import io

from ..core.cursor import Cursor
from ..core.fielddoc import doc
from .base import DataInfo, Filter, FilterError, FilterSpec, RunContext, Stage
from .enums import WEBP_FORMATS, FilterType
from .options import Option
from .parts import parse_parts, read_parts, rest_md, split, table

MODES = {1: "RGB", 2: "BGR", 3: "RGBA", 4: "BGRA"}


def _decode(img: bytes, fmt: int) -> bytes:
    try:
        from PIL import Image  # optional
    except ImportError:
        raise FilterError("WEBP: decoding WebP images needs an image codec, and arrayscope "
                          "has none (install Pillow to decode them); the encoded images are "
                          "kept as bytes", kind=FilterError.NO_CODEC) from None
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


def _encode(pixels: bytes, mode: str, row: int, lossless: bool, quality: float) -> bytes:
    try:
        from PIL import Image
    except ImportError:
        raise FilterError("WEBP: encoding needs Pillow, which is not installed",
                          kind=FilterError.NO_CODEC) from None
    import numpy as np

    ch = len(mode)
    if row <= 0 or row % ch or len(pixels) % row:
        raise FilterError(f"WEBP: {len(pixels)} bytes are not rows of {row} bytes of {mode} "
                          f"pixels")
    px = np.frombuffer(pixels, np.uint8).reshape(len(pixels) // row, row // ch, ch)
    if mode.startswith("BGR"):
        px = px[:, :, [2, 1, 0] + ([3] if ch == 4 else [])]
    img = Image.fromarray(np.ascontiguousarray(px), "RGBA" if ch == 4 else "RGB")
    out = io.BytesIO()
    img.save(out, "WEBP", lossless=lossless, quality=quality, exact=True)
    return out.getvalue()
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
        fmt = int(spec.options.get("format", 0))
        mode = MODES.get(fmt)
        if mode is None:
            raise FilterError(f"WEBP: input format {fmt} is not RGB/BGR/RGBA/BGRA")
        row = int(spec.options.get("x_extent", 0) or 0)
        lossless = bool(spec.options.get("lossless", False))
        quality = float(spec.options.get("quality", 100.0))
        images = [_encode(bytes(p), mode, row, lossless, quality) for p in stage.data]
        return Stage([table([len(i) for i in images])] + list(stage.metadata), [b"".join(images)])
