"""File ▸ Salvage…: a new dataset holding what of the opened one verifies clean
(`formats.salvage`), run in a worker process (`taskprocess.TaskProcess`), never in the
window's. A dry run's report comes first as a preview; Write then writes OUT and shows
the final report (closing that dialog lets the write finish; the status bar tells).
`install(window)` registers it."""
from __future__ import annotations

import os
from typing import Optional

from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QLabel,
    QPlainTextEdit,
    QVBoxLayout,
)

from arrayscope.formats.core.context import key_name
from arrayscope.formats.salvage import task as T

from .taskprocess import TaskProcess
from .windowmenus import menu


class SalvageDialog(QDialog):
    """The report of one run: the preview (Write / Cancel) or the result (Close)."""

    def __init__(self, parent, title: str):
        super().__init__(parent)
        self.setWindowTitle(title)
        self.summary = QLabel("Salvaging… (verify reads every tile first)")
        self.summary.setWordWrap(True)
        self.text = QPlainTextEdit()
        self.text.setReadOnly(True)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(self.summary)
        lay.addWidget(self.text)
        lay.addWidget(self.buttons)
        self.resize(720, 420)

    def show_result(self, res: T.SalvageResult, preview: bool) -> None:
        self.summary.setText(("Preview — nothing written yet. " if preview else "")
                             + res.summary)
        self.text.setPlainText("\n".join(res.lines) or "nothing lost")
        self.buttons.clear()
        if preview and res.written:
            self.buttons.addButton("Write", QDialogButtonBox.ButtonRole.AcceptRole)
            self.buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
            self.buttons.accepted.connect(self.accept)
        else:
            self.buttons.addButton(QDialogButtonBox.StandardButton.Close)


class Salvage:
    def __init__(self, window):
        self.win = window
        self.worker = TaskProcess(window)
        self.dialog: Optional[SalvageDialog] = None
        self.result: Optional[T.SalvageResult] = None   # the last run's (tests read it)
        a = QAction("Sal&vage…", window)
        a.setStatusTip("Write a new dataset with everything of this one that verifies clean, "
                       "and report what was lost")
        a.triggered.connect(self.salvage_dialog)
        f = menu(window, "&File")
        shot = next((x for x in f.actions() if x.text().startswith("Save &Screenshot")), None)
        if shot is not None:
            f.insertAction(shot, a)
        else:
            f.addAction(a)
        self.action = a

    def salvage_dialog(self) -> None:
        path = self.win.path
        if not path or not os.path.isdir(path):
            self.win.st_value.setText("Salvage: open an array or dataset folder first")
            return
        out, _ = QFileDialog.getSaveFileName(
            self.win, "Salvage to a new folder", path.rstrip("/") + "-salvaged",
            options=QFileDialog.Option.DontConfirmOverwrite)
        if out:
            self.start(out)

    def start(self, out: str) -> SalvageDialog:
        """Preview the salvage of the opened dataset to `out`; Write in the preview runs
        it. Returns the dialog (shown, not modal: the window stays usable)."""
        path = self.win.path
        key = getattr(self.win, "key", None)
        self.worker.share_key(key)
        job = T.SalvageTask(path, out, key_name(key) if key else None, dry=True)
        dlg = SalvageDialog(self.win, f"Salvage {os.path.basename(path.rstrip('/'))}")
        dlg.rejected.connect(self.worker.kill)      # cancelled: the run ends with its process
        dlg.accepted.connect(lambda: self._write(job))
        self.dialog = dlg
        self._run(job, dlg)
        dlg.show()
        return dlg

    def _write(self, dry: T.SalvageTask) -> None:
        job = T.SalvageTask(dry.path, dry.out, dry.key_id, dry=False)
        dlg = SalvageDialog(self.win, f"Salvaged to {os.path.basename(job.out)}")
        # closing it does not stop the write (a killed write would leave OUT half made):
        # the status bar says when it is done
        self.dialog = dlg
        self._run(job, dlg)
        dlg.show()

    def _run(self, job: T.SalvageTask, dlg: SalvageDialog) -> None:
        def done(ok: bool, value) -> None:
            res = value if ok else T.SalvageResult(2, f"salvage failed: {value}", [], False)
            self.result = res
            dlg.show_result(res, preview=job.dry)
            if not job.dry:
                self.win.st_value.setText(f"Salvage: {res.summary}")
        self.worker.submit(T.run, job, done)


def install(window) -> Salvage:
    s = Salvage(window)
    window.salvage = s
    return s
