"""The core: sources, nodes, cursor, records, documents, the engine, plugin protocols, findings,
verify and health orchestration, executors, remote and local file access. Imports no format
plugin, no filter (tests/core/test_architecture.py)."""
