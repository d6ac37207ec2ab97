import os

import pytest

# before any test module imports numba: its cache in the user's folder (compiled.use_user_cache)
import arrayscope.formats  # noqa: F401

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


@pytest.fixture(scope="session")
def tiledb_array(tmp_path_factory):
    """`tiledb_array(name)` -> path of that catalogue array, built once per test session."""
    from tests.support import tiledb_arrays

    root = tmp_path_factory.mktemp("tiledb_arrays")

    def get(name: str) -> str:
        return tiledb_arrays.build(name, str(root))

    return get
