"""The pipeline panel's stage list: one row per filter stage of a TileDB chunk (reversed or
not, its forward check, its metadata nodes), or per codec stage of a Zarr chunk.

Each row's `Qt.UserRole` data says what it stands for: ("disk", n), ("stage", k) or
("node", node)."""
from __future__ import annotations

from typing import Dict

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush
from PySide6.QtWidgets import QTreeWidget, QTreeWidgetItem

from . import stages as S
from . import theme
from .chunkstate import ChunkState

CHECK_TEXT = {"identical": "✓ identical", "re-encoded": "≈ re-encoded", "different": "✗ different",
              "failed": "✗ failed"}


class StageTree(QTreeWidget):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.setColumnCount(4)
        self.setHeaderLabels(["Stage", "Bytes", "Status", "Forward check"])
        self.setRootIsDecorated(True)
        self.setUniformRowHeights(True)
        self.setAlternatingRowColors(True)
        h = self.header()
        h.setStretchLastSection(True)
        self.setColumnWidth(0, 190)
        self.setColumnWidth(1, 64)
        self.setColumnWidth(2, 70)

    def show_chunk(self, st: ChunkState) -> None:
        """The stored chunk, then its filters from the disk side, as far as `st` has gone."""
        self.clear()
        ci = st.ci
        specs = ci.specs
        n = len(specs)
        run = st.run
        checks = {c.k: c for c in st.checks}
        md_nodes = metadata_nodes(st)
        top = QTreeWidgetItem([S.stage_title(specs, n),
                               f"{ci.metadata_length + ci.filtered_length:,}", "stored", ""])
        top.setData(0, Qt.UserRole, ("disk", n))
        top.setIcon(0, theme.kind_icon("payload"))
        self.addTopLevelItem(top)
        for k in range(n - 1, -1, -1):
            spec = specs[k]
            stage = run.stages[k] if run is not None else None
            if stage is not None:
                status, icon = ("reversed", theme.status_icon("ok"))
            elif run is not None and run.failed_at == k:
                status, icon = ("failed", theme.status_icon("error"))
            else:
                status, icon = ("pending", theme.kind_icon("padding"))
            size = f"{stage.nbytes:,}" if stage is not None else ""
            label = f"⟲ {k + 1}. {S.describe_spec(spec)}"
            it = QTreeWidgetItem([label, size, status, ""])
            it.setIcon(0, icon)
            it.setData(0, Qt.UserRole, ("stage", k))
            it.setToolTip(0, f"reverse filter {k + 1} ({spec.name}): gives {S.stage_title(specs, k).lower()}")
            if status == "failed":
                it.setText(2, "failed")
                it.setToolTip(2, str(run.error))
                it.setForeground(2, QBrush(theme.error_color()))
                err = QTreeWidgetItem([str(run.error), "", "", ""])
                err.setForeground(0, QBrush(theme.error_color()))
                it.addChild(err)
                it.setExpanded(True)
            chk = checks.get(k)
            if chk is not None:
                it.setText(3, CHECK_TEXT[chk.status])
                it.setToolTip(3, chk.text)
                col = {"identical": theme.ok_color(), "re-encoded": theme.warning_color()}.get(
                    chk.status, theme.error_color())
                it.setForeground(3, QBrush(col))
            for mn in md_nodes.get(k, []):
                c = QTreeWidgetItem([mn.name, f"{mn.size:,}", "", mn.display_text()])
                c.setData(0, Qt.UserRole, ("node", mn))
                c.setIcon(0, theme.kind_icon(mn.kind))
                c.setToolTip(3, mn.display_text())
                it.addChild(c)
            self.addTopLevelItem(it)
            if md_nodes.get(k) and status != "failed":
                it.setExpanded(k == n - 1)

    def show_zarr(self, zc) -> None:
        """The stored Zarr chunk, each codec stage (already reversed at open) and its records."""
        fn = zc.file_node
        self.clear()
        top = QTreeWidgetItem(["Stored chunk", f"{fn.size:,}", "stored", ""])
        top.setData(0, Qt.UserRole, ("node", fn))
        top.setIcon(0, theme.kind_icon("payload"))
        self.addTopLevelItem(top)
        for st in zc.stages:
            bad = any(n.status == "error" for n in st.walk())
            out = st.display_text()
            it = QTreeWidgetItem([f"⟲ {st.name}", f"{st.size:,}", "failed" if bad else "reversed", out])
            it.setIcon(0, theme.status_icon("error" if bad else "ok"))
            it.setData(0, Qt.UserRole, ("node", st))
            it.setToolTip(0, f"{st.name}: its input bytes ({getattr(st.source, 'name', '')}); "
                             f"{out}")
            for c in st.iter_children():
                ci = QTreeWidgetItem([c.name, f"{c.size:,}", "", c.display_text()])
                ci.setData(0, Qt.UserRole, ("node", c))
                ci.setIcon(0, theme.kind_icon(c.kind))
                it.addChild(ci)
            self.addTopLevelItem(it)
        rec = zc.records
        if rec is not None:
            it = QTreeWidgetItem(["Records", f"{rec.size:,}", "decoded", rec.display_text()])
            it.setIcon(0, theme.kind_icon("cells"))
            it.setData(0, Qt.UserRole, ("node", rec))
            self.addTopLevelItem(it)


def metadata_nodes(st: ChunkState) -> Dict[int, list]:
    """On-disk chunk metadata nodes by filter index, plus those of reversed stages."""
    out: Dict[int, list] = {}
    specs = st.ci.specs
    groups = []
    if st.chunk_node is not None:
        md = st.chunk_node.find("Chunk metadata")
        if md is not None:
            groups.append(md)
    for k, node in st.nodes.items():
        m = node.find("Stage metadata")
        if m is not None:
            groups.append(m)
    for g in groups:
        for c in g.iter_children():
            parts = c.name.split(" ")
            if len(parts) > 2 and parts[0] == "Filter" and parts[1].isdigit():
                k = int(parts[1]) - 1
                if 0 <= k < len(specs):
                    out.setdefault(k, []).append(c)
    return out

