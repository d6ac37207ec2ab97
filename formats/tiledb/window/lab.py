"""The pipeline editor's engine (a `plugin.PipelineLab`): a copy of a chunk's filter
pipeline to change and apply to its cells, stage by stage, with sizes and timings, then
reversed back (teaching)."""
from __future__ import annotations

import time
from typing import List, Tuple

from ... import filters as F
from ...core.plugin import Experiment, OptionField
from ...filters.enums import FILTER_TYPES, FilterType


def describe_spec(spec: F.FilterSpec) -> str:
    return F.get(spec.type).describe(spec)


def default_spec(filter_type: int) -> F.FilterSpec:
    """A FilterSpec with TileDB's default options for `filter_type`."""
    return F.FilterSpec(filter_type, F.get(filter_type).default_options())


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
    """The editable options of `spec`, as its filter class declares them."""
    out: List[OptionField] = []
    for o in F.get(spec.type).options:
        e = o.editor
        if e is None or o.key not in spec.options:
            continue
        out.append(OptionField(o.key, e.label or o.label, e.kind, spec.options[o.key], e.minimum,
                               e.maximum, e.choices, e.special_text))
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
