"""Accelerators: numba kernels (chosen by `core/compiled.py`, the one decision, compiled or numpy),
C codec entry points, the libc bulk reader. Outside `filters/`, so the filter registry's walk never imports
numba."""
