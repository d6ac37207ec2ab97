"""The application state without Qt: events to every panel in order, selection history,
findings, a closed document."""
from __future__ import annotations

import os

from arrayscope import formats
from arrayscope.explorer.session import Session
from arrayscope.explorer.state import AppState, DocumentChanged, FindingsAdded, SelectionChanged
from arrayscope.formats.core.findings import Finding
from tests.support.paths import SAMPLES


class Recorder:
    def __init__(self, log, name):
        self.log, self.name = log, name

    def state_changed(self, state, event):
        self.log.append((self.name, type(event).__name__, getattr(event, "origin", None)))


def test_events_history_and_findings():
    log = []
    st = AppState()
    st.subscribe(Recorder(log, "a"))
    st.subscribe(Recorder(log, "b"))
    assert not st.select(None) and log == []
    doc = formats.open(os.path.join(SAMPLES, "zarr_struct"))
    st.open(Session(doc))
    assert log == [("a", "DocumentChanged", None), ("b", "DocumentChanged", None)]
    chunk = doc.root.resolve("c/0/0")
    rec = chunk["Records"].child(1)
    assert st.select(chunk, "tree") and st.select(rec) and st.select(chunk["Records"])
    assert log[-1] == ("b", "SelectionChanged", None) and log[-6][2] == log[-5][2] == "tree"
    assert st.back() and st.current is rec and st.back() and st.current is chunk
    assert not st.back()
    assert log[-1] == ("b", "SelectionChanged", "history")
    assert st.forward() and st.current is rec
    st.select(doc.root)                   # a new step drops the forward history
    assert not st.forward() and st.back() and st.current is rec
    st.forget(chunk["Records"])           # a node that left the tree is never gone back to
    assert st.back() and st.current is chunk and not st.back()
    f = Finding("error", "parse-error", "c/0/0", 3, "c/0/0", "bad")
    st.add_findings([f])
    assert st.findings == [f] and log[-1][1] == "FindingsAdded"
    st.close()
    assert st.session is None and st.current is None and st.findings == []
    assert log[-1] == ("b", "DocumentChanged", None)
    st.add_findings([f])                  # nothing open: nothing to report
    assert st.findings == [] and isinstance(DocumentChanged(), DocumentChanged)
    assert SelectionChanged(doc.root).origin is None and FindingsAdded([]).findings == []
