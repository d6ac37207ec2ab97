"""The display check names every system library Qt's xcb plugin lacks and the one apt-get
line installing them (issue 31, item 8; stock Debian 12 lacks libxcb-icccm4 and
libxcb-keysyms1 while Qt blames libxcb-cursor0)."""
from __future__ import annotations

import sys

import pytest

from arrayscope.explorer import app, xcbcheck

# what ldd printed for PySide6's libqxcb.so on such a machine (a library twice: ldd lists
# what each needing library needs)
LDD = """\
\tlinux-vdso.so.1 (0x00007f53d1ad9000)
\tlibQt6XcbQpa.so.6 => /venv/PySide6/Qt/lib/libQt6XcbQpa.so.6 (0x00007f53d1a0b000)
\tlibxkbcommon-x11.so.0 => not found
\tlibxcb-cursor.so.0 => /lib/x86_64-linux-gnu/libxcb-cursor.so.0 (0x00007f53d1921000)
\tlibxcb-icccm.so.4 => not found
\tlibxcb-keysyms.so.1 => not found
\tlibX11.so.6 => not found
\tlibxcb-icccm.so.4 => not found
\tlibglib-2.0.so.0 => not found
"""


def test_every_missing_library_is_named_with_its_package(monkeypatch):
    monkeypatch.setattr(xcbcheck, "xcb_plugin", lambda: "/venv/PySide6/Qt/plugins/platforms/libqxcb.so")
    seen = []
    msg = xcbcheck.problem(lambda path: seen.append(path) or LDD)
    assert seen == ["/venv/PySide6/Qt/plugins/platforms/libqxcb.so"]
    for soname in ("libxkbcommon-x11.so.0", "libxcb-icccm.so.4", "libxcb-keysyms.so.1",
                   "libX11.so.6", "libglib-2.0.so.0"):
        assert soname in msg
    assert "libxcb-cursor.so.0" not in msg   # installed: not blamed
    assert msg.count("apt-get") == 1
    assert ("`sudo apt-get install libglib2.0-0 libx11-6 libxcb-icccm4 libxcb-keysyms1 "
            "libxkbcommon-x11-0`") in msg
    assert xcbcheck.problem(lambda path: LDD.replace("not found", "/lib/x.so (0x1)")) is None


def test_debian_package_names():
    assert [xcbcheck.debian_package(s) for s in (
        "libxcb-cursor.so.0", "libxcb-icccm.so.4", "libxcb-keysyms.so.1", "libxcb-render-util.so.0",
        "libX11-xcb.so.1", "libGL.so.1", "libxkbcommon-x11.so.0", "libgthread-2.0.so.0")] == [
        "libxcb-cursor0", "libxcb-icccm4", "libxcb-keysyms1", "libxcb-render-util0",
        "libx11-xcb1", "libgl1", "libxkbcommon-x11-0", "libglib2.0-0"]


def test_the_window_check_uses_it(monkeypatch):
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setenv("DISPLAY", ":0")
    monkeypatch.setattr(xcbcheck, "xcb_plugin", lambda: "/x/libqxcb.so")
    monkeypatch.setattr(xcbcheck, "ldd", lambda path: LDD)
    assert "libxcb-keysyms1" in app.display_problem()
    monkeypatch.setattr(xcbcheck, "ldd", lambda path: "")
    assert app.display_problem() is None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ldd")
def test_the_real_plugin_is_found_and_read():
    plugin = xcbcheck.xcb_plugin()
    assert plugin is not None and plugin.endswith("libqxcb.so")
    out = xcbcheck.ldd(plugin)
    assert "libxcb.so.1" in out   # ldd read it; what it lacks depends on the machine
    assert set(xcbcheck.missing_libraries()) == set(xcbcheck.not_found(out))
