"""Which system libraries Qt's X11 platform plugin cannot find, and the one line installing them.

Qt aborts the whole process when its xcb plugin does not load, naming only the first library
it tried (it blames libxcb-cursor0 even when that is installed and libxcb-icccm4 is not).
So the plugin that PySide6 ships is asked directly: `ldd` lists every library the loader
cannot resolve for it, and each is named with the Debian/Ubuntu package that holds it."""
from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
from typing import Callable, List, Optional

LDD_TIMEOUT_S = 20
_NOT_FOUND = re.compile(r"^\s*(\S+)\s+=>\s+not found\s*$")
_SONAME = re.compile(r"^lib(?P<name>.+)\.so\.(?P<version>[0-9][0-9.]*)$")
# the packages that break Debian's naming rule (below) among the libraries the plugin needs
_PACKAGE_EXCEPTIONS = {"libglib-2.0.so.0": "libglib2.0-0", "libgthread-2.0.so.0": "libglib2.0-0"}


def xcb_plugin() -> Optional[str]:
    """PySide6's libqxcb.so, None when PySide6 or the plugin is not there."""
    spec = importlib.util.find_spec("PySide6")
    for root in (spec.submodule_search_locations or []) if spec else []:
        path = os.path.join(root, "Qt", "plugins", "platforms", "libqxcb.so")
        if os.path.isfile(path):
            return path
    return None


def not_found(ldd_output: str) -> List[str]:
    """The sonames `ldd` could not resolve, each once, in its order."""
    out: List[str] = []
    for line in ldd_output.splitlines():
        m = _NOT_FOUND.match(line)
        if m and m.group(1) not in out:
            out.append(m.group(1))
    return out


def ldd(path: str) -> str:
    """`ldd path`'s output; '' where there is no ldd (not glibc) or it fails."""
    exe = shutil.which("ldd")
    if exe is None:
        return ""
    try:
        return subprocess.run([exe, path], capture_output=True, text=True,
                              timeout=LDD_TIMEOUT_S).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


def missing_libraries(lookup: Optional[Callable[[str], str]] = None) -> List[str]:
    """The sonames Qt's xcb plugin needs and the loader cannot find here (`lookup`: what
    lists a library's needs, `ldd` by default)."""
    plugin = xcb_plugin()
    return not_found((lookup or ldd)(plugin)) if plugin else []


def debian_package(soname: str) -> str:
    """The package holding `soname`, by Debian's rule (policy 8.1): `libfoo.so.N` is in
    `libfooN`, `libfoo-N` when foo ends in a digit; lower case."""
    if soname in _PACKAGE_EXCEPTIONS:
        return _PACKAGE_EXCEPTIONS[soname]
    m = _SONAME.match(soname)
    if not m:
        return soname
    name, version = m.group("name"), m.group("version").split(".")[0]
    sep = "-" if name[-1].isdigit() else ""
    return f"lib{name}{sep}{version}".lower()


def problem(lookup: Optional[Callable[[str], str]] = None) -> Optional[str]:
    """What to tell the user before Qt aborts, None when nothing is missing."""
    missing = missing_libraries(lookup)
    if not missing:
        return None
    packages = sorted(set(debian_package(s) for s in missing))
    return (f"Qt's X11 platform plugin cannot load: the system lacks {', '.join(missing)}. "
            f"On Debian/Ubuntu: `sudo apt-get install {' '.join(packages)}` (other systems: "
            f"the packages holding those libraries, e.g. xcb-util-wm and xcb-util-keysyms "
            f"on Fedora).")
