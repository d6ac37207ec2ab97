"""The pipeline editor's engine (a `plugin.PipelineLab`): a copy of a chunk's filter
pipeline to change and apply to its cells, stage by stage, with sizes and timings, then
reversed back (teaching)."""
from __future__ import annotations

import time
from typing import List, Tuple, cast

from .. import filters as F
from ..plugin import Experiment, OptionField
from .enums import COMPRESSOR_OF_FILTER, FILTER_TYPES, Datatype, FilterType


def describe_spec(spec: F.FilterSpec) -> str:
    o = spec.options
    if "level" in o:
        return f"{spec.name}({o['level']})"
    if "max_window" in o:
        return f"{spec.name}(window={o['max_window']})"
    if "scale" in o:
        return f"{spec.name}(scale={o['scale']}, offset={o['offset']}, width={o['byte_width']})"
    return spec.name


def default_spec(filter_type: int) -> F.FilterSpec:
    """A FilterSpec with TileDB's default options for `filter_type`."""
    opts: dict = {}
    if filter_type in COMPRESSOR_OF_FILTER:
        opts = {"compressor": COMPRESSOR_OF_FILTER[filter_type], "level": -1}
        if filter_type in (FilterType.DOUBLE_DELTA, FilterType.DELTA):
            opts["reinterpret"] = Datatype.ANY
    elif filter_type in (FilterType.BIT_WIDTH_REDUCTION, FilterType.POSITIVE_DELTA):
        opts = {"max_window": 256}
    elif filter_type == FilterType.SCALE_FLOAT:
        opts = {"scale": 1.0, "offset": 0.0, "byte_width": 8}
    return F.FilterSpec(filter_type, opts)


def available_filters() -> List[Tuple[int, str]]:
    """Filter types this build can apply forward (for the editor's Add menu)."""
    out = []
    for t, name in FILTER_TYPES.items():
        if t in (FilterType.NONE, FilterType.DEPRECATED):
            continue
        f = F.get(t)
        if not F.is_known(t) or type(f).forward is F.Filter.forward:
            continue
        out.append((t, name))
    return out


def option_fields(spec: F.FilterSpec) -> List[OptionField]:
    o = spec.options
    out: List[OptionField] = []
    if "level" in o:
        out.append(OptionField("level", "Level", "int", cast(int, o["level"]), -1, 22, special_text="default"))
    if "max_window" in o:
        out.append(OptionField("max_window", "Max window", "int", cast(int, o["max_window"]), 1, 1 << 30))
    if "scale" in o:
        for key in ("scale", "offset"):
            out.append(OptionField(key, key.capitalize(), "float", cast(float, o[key]), -1e12, 1e12))
        out.append(OptionField("byte_width", "Byte width", "choice", o["byte_width"],
                               choices=tuple((str(w), w) for w in (1, 2, 4, 8))))
    return out


class TileDBLab:
    """An editable copy of a chunk's pipeline; steps are `FilterSpec`s."""

    def __init__(self, specs: List[F.FilterSpec], info: F.DataInfo):
        self.specs = specs
        self.info = info

    def original(self) -> List[object]:
        return [F.FilterSpec(s.type, dict(s.options)) for s in self.specs]

    def available(self) -> List[Tuple[str, object]]:
        return [(name, t) for t, name in available_filters()]

    def new_step(self, step_id: object) -> object:
        return default_spec(int(step_id))  # type: ignore[call-overload]

    def describe(self, step: object) -> str:
        assert isinstance(step, F.FilterSpec)
        return describe_spec(step)

    def options(self, step: object) -> List[OptionField]:
        assert isinstance(step, F.FilterSpec)
        return option_fields(step)

    def set_option(self, step: object, key: str, value: object) -> None:
        assert isinstance(step, F.FilterSpec)
        step.options[key] = value

    def run(self, steps: List[object], cells: bytes, key=None) -> Experiment:
        specs = [s for s in steps if isinstance(s, F.FilterSpec)]
        info = self.info
        ex = Experiment(["cells"] + [describe_spec(s) for s in specs], [len(cells)])
        infos = F.stage_infos(specs, info)
        run = F.RunContext(key, len(cells))
        stage = F.Stage([], [cells])
        for k, spec in enumerate(specs):
            t0 = time.perf_counter()
            try:
                stage = F.get(spec.type).forward(spec, stage, infos[k], run)
            except Exception as e:
                ex.error, ex.failed_at = f"{spec.name}: {type(e).__name__}: {e}", k
                return ex
            ex.seconds.append(time.perf_counter() - t0)
            ex.sizes.append(stage.nbytes)
        try:
            back = F.reverse_chunk(specs, stage.metadata_bytes, stage.data_bytes, info,
                                   F.RunContext(key, len(cells)))
            ex.round_trip = back.error is None and back.cells == cells
        except Exception:
            ex.round_trip = False
        return ex
