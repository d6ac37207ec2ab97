"""The `arrayscope` command: the window, and the display-free subcommands of `explorer/commands/`."""
from __future__ import annotations

import argparse
import importlib
import sys
from types import ModuleType
from typing import Dict, List, Optional

from . import commands
from .commands.common import add_key_file, add_remote_arguments, fail, remote_session
from .version import installed_version


def subcommands() -> Dict[str, ModuleType]:
    """name -> module, for every subcommand module in explorer/commands/."""
    import pkgutil

    found = {}
    for info in pkgutil.iter_modules(commands.__path__):
        mod = _subcommand(info.name)
        if mod is not None:
            found[info.name] = mod
    return dict(sorted(found.items()))


def _subcommand(name: str) -> Optional[ModuleType]:
    """The subcommand module `name` of explorer/commands/, imported alone (a command loads
    its own imports only), or None when there is no such subcommand."""
    if not name.isidentifier() or name.startswith("_"):
        return None
    full = f"{commands.__name__}.{name}"
    try:
        mod = importlib.import_module(full)
    except ModuleNotFoundError as e:
        if e.name != full:   # the subcommand's own import failed: say so
            raise
        return None
    return mod if hasattr(mod, "run") and hasattr(mod, "add_arguments") else None


def _run_subcommand(mod: ModuleType, name: str, argv: List[str]) -> int:
    p = argparse.ArgumentParser(prog=f"arrayscope {name}", description=mod.HELP)
    mod.add_arguments(p)
    p.add_argument("--stats", action="store_true",
                   help="print the requests made and bytes transferred on stderr at the end")
    add_remote_arguments(p)
    args = p.parse_args(argv)
    from arrayscope import formats

    try:
        with remote_session(args):
            return mod.run(args)
    except formats.OpenError as e:
        return fail(str(e))
    except KeyboardInterrupt:   # Ctrl+C: the run ends quietly (worker processes end with it)
        print(file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into `head` and the like
        sys.stderr.close()
        return 0
    except (OSError, ValueError) as e:  # key file problems and the like
        return fail(str(e))
    finally:
        if args.stats:
            from arrayscope.formats.core.remote import TOTAL

            print(TOTAL.line(), file=sys.stderr)


def _mistyped_subcommand(argv: List[str], subs: Dict[str, ModuleType]) -> Optional[str]:
    """What to say when the first word is no path but close to a subcommand's name."""
    import difflib
    import os

    if not argv or argv[0].startswith("-") or os.path.exists(argv[0]) or "://" in argv[0]:
        return None
    close = difflib.get_close_matches(argv[0], list(subs), n=1)
    if not close:
        return None
    return f"{argv[0]!r} is no subcommand and no file: did you mean `arrayscope {close[0]}`?"


def _note(message: str) -> None:
    print(f"arrayscope: {message}", file=sys.stderr, flush=True)


def main(argv: Optional[List[str]] = None) -> int:
    from arrayscope.formats.core import compiled

    compiled.own_process(notice=_note)   # our process: numba's cache folder, the compile note
    argv = list(sys.argv[1:] if argv is None else argv)
    sub = _subcommand(argv[0]) if argv else None
    if sub is not None:
        return _run_subcommand(sub, argv[0], argv[1:])
    subs = subcommands()
    typo = _mistyped_subcommand(argv, subs)
    if typo:
        return fail(typo)
    listing = "\n".join(f"  {name:<10} {mod.HELP}" for name, mod in subs.items())
    p = argparse.ArgumentParser(
        prog="arrayscope", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Hex/structure explorer for array storage formats (TileDB, SCDL, Zarr).",
        epilog=f"subcommands (arrayscope SUBCOMMAND --help):\n{listing}")
    p.add_argument("path", nargs="?", help="file or array/archive directory to open")
    p.add_argument("--sample", action="store_true", help="open a bundled sample TileDB array")
    p.add_argument("--screenshot", metavar="OUT.png", help="render offscreen, save, exit")
    p.add_argument("--select", metavar="NODE/PATH", help="node to select (with --screenshot)")
    p.add_argument("--version", action="version", version=f"arrayscope {installed_version()}")
    add_key_file(p)
    args = p.parse_args(argv)
    try:
        from .app import run_gui
    except ImportError as e:
        return fail(f"the window needs PySide6: {e}")
    return run_gui(args)


if __name__ == "__main__":
    raise SystemExit(main())
