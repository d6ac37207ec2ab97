"""The display-free subcommands: one module each.

A module here is a subcommand named after it; it defines `HELP` (one line), `add_arguments(parser)`
and `run(args) -> exit code`. `explorer/cli.py` finds them, so a new subcommand is one new module.
"""
