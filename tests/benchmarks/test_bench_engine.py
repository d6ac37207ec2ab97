"""Engine benchmarks (on demand):

    python -m pytest tests/benchmarks/test_bench_engine.py --benchmark-only -o addopts=""

Targets (DESIGN.md): parse an array schema file < 5 ms."""
import glob
import os

from arrayscope import formats
from arrayscope.formats.core.document import Document
from arrayscope.formats.tiledb.parse.array import parse_schema_file


def test_parse_schema_file(benchmark, tiledb_array):
    path = tiledb_array("dtypes")  # 14 attributes: a large schema
    schema_file = sorted(p for p in glob.glob(os.path.join(path, "__schema", "__*"))
                         if os.path.isfile(p))[-1]

    def parse():
        doc = Document(schema_file)
        src = doc.open_source(schema_file)
        node, schema = parse_schema_file(doc, src, doc.ctx)
        doc.close()
        return schema

    schema = benchmark(parse)
    assert schema is not None and len(schema.attributes) == 14


def test_open_whole_array(benchmark, tiledb_array):
    path = tiledb_array("filter_stacks_array")
    benchmark(lambda: formats.open(path).close())
