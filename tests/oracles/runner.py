"""The loop every writer oracle shares: N examples from one printed seed, a writer's own
refusal counted (not a failure), a failing example's dataset kept for the report."""
from __future__ import annotations

import os
import random
import shutil
import tempfile
from typing import Callable

import numpy as np

EXAMPLES = int(os.environ.get("AS_ORACLE_EXAMPLES", "100"))
SEED = int(os.environ.get("AS_GEN_SEED") or random.randrange(2**32))


class WriterRefused(Exception):
    """The writer would not write this example (its own limitation, not ours)."""


def run_examples(name: str, write: Callable[[np.random.Generator, str], object],
                 check: Callable[[str, object], None]) -> None:
    print(f"{name}: AS_GEN_SEED={SEED} AS_ORACLE_EXAMPLES={EXAMPLES}", flush=True)
    refused, failures = 0, []
    for i in range(EXAMPLES):
        rng = np.random.default_rng([SEED, i])
        folder = tempfile.mkdtemp(prefix=f"oracle-{name}-")
        try:
            try:
                truth = write(rng, folder)
            except WriterRefused:
                refused += 1
                continue
            try:
                check(folder, truth)
            except AssertionError as e:
                kept = tempfile.mkdtemp(prefix=f"oracle-{name}-fail-{i}-")
                shutil.copytree(folder, kept, dirs_exist_ok=True)
                failures.append(f"example {i} (kept at {kept}): {str(e)[:1500]}")
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    print(f"{name}: {EXAMPLES - refused} checked, {refused} refused by the writer, "
          f"{len(failures)} failed", flush=True)
    assert not failures, "\n".join(failures)
