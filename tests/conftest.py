import os

import pytest

from arrayscope.formats.core import compiled

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# The test run is our own process, as the `arrayscope` command is (`compiled.own_process`),
# but test modules import kernel modules (and numba) at collection, before the gate could
# set numba.config: the variable, read by numba when first imported, covers them and the
# subprocesses the tests start. Importing the library sets nothing (test_no_numba.py).
os.environ.setdefault("NUMBA_CACHE_DIR", compiled.user_cache_dir())


@pytest.fixture(scope="session")
def tiledb_array(tmp_path_factory):
    """`tiledb_array(name)` -> path of that catalogue array, built once per test session."""
    from tests.support import tiledb_arrays

    root = tmp_path_factory.mktemp("tiledb_arrays")

    def get(name: str) -> str:
        return tiledb_arrays.build(name, str(root))

    return get
