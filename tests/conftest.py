import os
import sys

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="session")
def tiledb_array(tmp_path_factory):
    """`tiledb_array(name)` -> path of that catalogue array, built once per test session."""
    import tiledb_arrays

    root = tmp_path_factory.mktemp("tiledb_arrays")

    def get(name: str) -> str:
        return tiledb_arrays.build(name, str(root))

    return get
