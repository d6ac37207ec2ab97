"""Finding codes are one enumeration (`findings.Code`) and statuses one vocabulary
(`status.Status`): every code the engine or the window writes is a member, with its
severity and what it means."""
from __future__ import annotations

import ast
import json
import os
from typing import Iterator, List, Tuple

from arrayscope.formats.core import findings
from arrayscope.formats.core.findings import Code, Finding
from arrayscope.formats.core.status import Status
from tests.core.test_architecture import _modules
from tests.support.paths import REPO


def _code_expressions(tree: ast.AST) -> Iterator[ast.expr]:
    """Every expression given as a finding's or a node's code: `Finding(status, CODE, ...)`,
    `code=...` in any call, `x.code = ...` (one by one in a tuple assignment)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Name) and node.func.id == "Finding" and len(node.args) > 1:
                yield node.args[1]
            yield from (k.value for k in node.keywords if k.arg == "code")
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Attribute) and target.attr == "code":
                    yield node.value
                elif isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple):
                    for t, v in zip(target.elts, node.value.elts):
                        if isinstance(t, ast.Attribute) and t.attr == "code":
                            yield v


def _unknown(expr: ast.expr) -> List[str]:
    """The parts of a code expression that name no member: a string that is not a code's
    word, an upper-case name that is not a member's (lower-case names are variables)."""
    if isinstance(expr, ast.IfExp):
        return _unknown(expr.body) + _unknown(expr.orelse)
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return [] if expr.value in {c.value for c in Code} else [repr(expr.value)]
    name = expr.attr if isinstance(expr, ast.Attribute) else expr.id if isinstance(expr, ast.Name) else ""
    if name.isupper() and name not in Code.__members__:
        return [name]
    return []


def _unlisted_codes() -> List[Tuple[str, int, str]]:
    out = []
    for folder in ("formats", "explorer"):
        for _module, path in _modules(folder):
            with open(path, encoding="utf-8") as fh:
                tree = ast.parse(fh.read(), path)
            for expr in _code_expressions(tree):
                out.extend((os.path.relpath(path, REPO), expr.lineno, u) for u in _unknown(expr))
    return out


def test_every_code_written_is_in_the_enumeration():
    assert _unlisted_codes() == []


def test_the_scan_sees_codes_written_outside_it(tmp_path, monkeypatch):
    import tests.core.test_finding_codes as me

    f = tmp_path / "bad.py"
    f.write_text('Finding("error", "made-up-code", "", 0, "", "m")\n'
                 'n = Node("x", "field", None, 0, 0, code=NOT_A_CODE)\n'
                 'n.status, n.code = ERROR, "also-made-up"\n'
                 'm.code = NO_KEY if k else "parse-error"\n')
    monkeypatch.setattr(me, "_modules", lambda folder: [("m", str(f))] if folder == "formats" else [])
    monkeypatch.setattr(me, "REPO", str(tmp_path))
    assert sorted(u for _p, _l, u in _unlisted_codes()) == ["'also-made-up'", "'made-up-code'", "NOT_A_CODE"]


def test_each_code_once_with_its_severity_and_meaning():
    assert len(Code) == len(Code.__members__) > 50      # no two names for one word
    for code in Code:
        assert isinstance(code.severity, Status) and code.severity != Status.OK
        assert len(code.about) > 10 and code.value == code.value.lower()
    assert Code("chunk-decode-failed") is Code.CHUNK_DECODE and Code.CHUNK_DECODE.severity == Status.ERROR
    assert Code.WRITER_QUIRK.severity == Status.INFO and Code.NO_KEY.severity == Status.WARNING
    # the module's names are the members themselves, every member by its name
    named = {n: v for n, v in vars(findings).items() if isinstance(v, Code)}
    assert named == dict(Code.__members__)


def test_status_is_one_vocabulary_carried_as_words():
    assert [s.value for s in sorted(Status, key=lambda s: s.rank)] == ["ok", "info", "warning", "error"]
    f = Finding(Status.WARNING, Code.NO_KEY, "a0.tdb", 12, "", "no key")
    text = json.dumps([f.to_json()])
    assert json.loads(text)[0]["status"] == "warning" and json.loads(text)[0]["code"] == "no-key"
    back = Finding(**json.loads(text)[0])               # as the window reads verify's worker
    assert back == f and back.status is Status.WARNING
    assert f.line() == "a0.tdb:12: warning: no key" and f"{Code.NO_KEY}" == "no-key"
