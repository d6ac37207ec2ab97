"""The start page: open buttons, the bundled samples, recent files."""
from __future__ import annotations

import os
from typing import List

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from .. import resources
from . import theme

SAMPLES_DIR = os.path.join(os.path.dirname(os.path.abspath(resources.__file__)), "samples")
SAMPLE_NOTES = {
    "tiledb_dense": "TileDB dense 2-D array: six attributes, each with another filter stack "
                    "(ByteShuffle+Zstd, BitShuffle+LZ4, PositiveDelta+BitWidthReduction+Gzip, RLE, "
                    "DoubleDelta+checksum, none); two fragments; array metadata",
    "tiledb_sparse": "TileDB sparse array: var-length strings, a nullable float, an enumeration",
    "tiledb_encrypted": "TileDB array encrypted with AES-256-GCM (key: tiledb_encrypted.key)",
    "scdl": "SCDL single-cell archive: header.sch, CSR data / row_ptr / col_ptr, neighbours, "
            "feature indices (NPY + Parquet)",
    "zarr_struct": "Zarr v3 array of a nested struct dtype (id, pos.x, pos.y, label, ok): "
                   "zstd with checksum, 2-D chunks with edge padding",
    "zarr_v2_blosc": "Zarr v2 struct array: Blosc (LZ4, byte shuffle) chunks",
}
DEFAULT_SAMPLE = "tiledb_dense"


def samples() -> List[str]:
    if not os.path.isdir(SAMPLES_DIR):
        return []
    out = []
    for name in sorted(os.listdir(SAMPLES_DIR)):
        if name.endswith(".key") or name.startswith("."):
            continue
        out.append(os.path.join(SAMPLES_DIR, name))
    return out


def sample_key_file(path: str):
    """The key file of a bundled sample (only samples: other keys come from --key-file,
    $ARRAYSCOPE_KEY or File > Encryption Key File)."""
    path = os.path.abspath(path).rstrip("/")
    if os.path.dirname(path) != os.path.abspath(SAMPLES_DIR):
        return None
    k = path + ".key"
    return k if os.path.exists(k) else None


class StartPage(QWidget):
    openFile = Signal()
    openDir = Signal()
    openPath = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        title = QLabel("<span style='font-size:22pt; font-weight:600'>arrayscope</span>", self)
        sub = QLabel("See every byte of TileDB arrays, SCDL archives and Zarr struct arrays: "
                     "what it means, which filter made it, and whether it is right.", self)
        sub.setWordWrap(True)
        icon = QLabel(self)
        icon.setPixmap(theme.app_icon().pixmap(64, 64))
        b1 = QPushButton("Open File…", self)
        b2 = QPushButton("Open Directory…", self)
        b1.clicked.connect(self.openFile.emit)
        b2.clicked.connect(self.openDir.emit)
        hint = QLabel("…or drop a file or an array directory here.", self)
        hint.setStyleSheet("color: gray")
        self.samples = QListWidget(self)
        self.samples.setWordWrap(True)
        self.samples.setSpacing(2)
        self.samples.itemActivated.connect(self._activated)
        self.samples.itemDoubleClicked.connect(self._activated)
        self.recent = QListWidget(self)
        self.recent.itemActivated.connect(self._activated)
        self.recent.itemDoubleClicked.connect(self._activated)
        for p in samples():
            name = os.path.basename(p)
            it = QListWidgetItem(f"{name}\n{SAMPLE_NOTES.get(name, '')}")
            it.setData(Qt.ItemDataRole.UserRole, p)
            it.setToolTip(p)
            it.setIcon(theme.kind_icon("dir" if os.path.isdir(p) else "file"))
            self.samples.addItem(it)
        head = QHBoxLayout()
        head.addWidget(icon)
        tl = QVBoxLayout()
        tl.addWidget(title)
        tl.addWidget(sub)
        head.addLayout(tl, 1)
        btns = QHBoxLayout()
        btns.addWidget(b1)
        btns.addWidget(b2)
        btns.addWidget(hint)
        btns.addStretch(1)
        grid = QGridLayout()
        grid.addWidget(QLabel("<b>Bundled samples</b> (double-click to open)", self), 0, 0)
        grid.addWidget(QLabel("<b>Recent</b>", self), 0, 1)
        grid.addWidget(self.samples, 1, 0)
        grid.addWidget(self.recent, 1, 1)
        grid.setRowStretch(1, 1)   # the lists fill the page (no empty page under them)
        grid.setColumnStretch(0, 3)
        grid.setColumnStretch(1, 2)
        box = QFrame(self)
        box.setMaximumWidth(1000)
        bl = QVBoxLayout(box)
        bl.addLayout(head)
        bl.addSpacing(8)
        bl.addLayout(btns)
        bl.addSpacing(8)
        bl.addLayout(grid, 1)
        outer = QHBoxLayout(self)
        outer.addStretch(1)
        outer.addWidget(box, 6)
        outer.addStretch(1)

    def set_recent(self, paths: List[str]) -> None:
        self.recent.clear()
        for p in paths:
            it = QListWidgetItem(os.path.basename(p.rstrip("/")) + f"\n{p}")
            it.setData(Qt.ItemDataRole.UserRole, p)
            it.setToolTip(p)
            it.setIcon(theme.kind_icon("dir" if os.path.isdir(p) else "file"))
            self.recent.addItem(it)
        if not paths:
            it = QListWidgetItem("(nothing opened yet)")
            it.setFlags(Qt.ItemFlag.NoItemFlags)
            self.recent.addItem(it)

    def _activated(self, item) -> None:
        p = item.data(Qt.ItemDataRole.UserRole)
        if p:
            self.openPath.emit(p)


def default_sample() -> str:
    """The bundled sample `--sample` and File ▸ Open Sample open."""
    return os.path.join(SAMPLES_DIR, DEFAULT_SAMPLE)
