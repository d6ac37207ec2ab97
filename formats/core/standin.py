"""Files that stand in for the real bytes: what a checkout, a sync or a download leaves where a
dataset's file should be. Named as such (`stand-in-file`), not parsed into nonsense.

- a git-lfs pointer: the three text lines `git lfs` commits in place of a tracked file
  (https://github.com/git-lfs/git-lfs/blob/main/docs/spec.md), left by a clone made
  without `git lfs pull`;
- an HTML page: what a web server or a proxy answers for a missing object (a "404" page
  saved by `wget`/`curl` under the object's name);
- an object store's XML error document (S3 `<Error><Code>NoSuchKey</Code>...`), saved the
  same way.

Only the first bytes are looked at; binary formats never start so (a TileDB file starts
with a little-endian version or count, a compressed chunk with its codec's magic)."""
from __future__ import annotations

import re
from typing import Optional

from .findings import STAND_IN
from .node import Node, hex_preview
from .source import ByteSource
from .status import Status

HEAD = 512   # bytes read to decide

_LFS = (b"version https://git-lfs.github.com/spec/v1\n", b"version https://hawser.github.com/spec/v1\n")
_LFS_OID = re.compile(rb"^oid sha256:([0-9a-f]{64})$", re.M)
_LFS_SIZE = re.compile(rb"^size (\d+)$", re.M)
_HTML = re.compile(rb"^\s*(<!doctype html|<html[\s>])", re.I)
_XML_ERROR = re.compile(rb"^\s*<\?xml[^>]*>\s*<Error>", re.I)
_TITLE = re.compile(rb"<title>([^<]{0,120})</title>", re.I)
_CODE = re.compile(rb"<Code>([^<]{0,80})</Code>")


def stand_in(head: bytes) -> Optional[str]:
    """What the file starting with `head` stands in for the real one as, or None."""
    if head.startswith(_LFS):
        oid, size = _LFS_OID.search(head), _LFS_SIZE.search(head)
        what = "a git-lfs pointer file"
        if oid and size:
            what += f" (object sha256:{oid.group(1)[:12].decode()}…, {int(size.group(1))} bytes)"
        return what + ": the real file was never fetched (`git lfs pull`)"
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:]
    if _HTML.match(head):
        title = _TITLE.search(head)
        return "an HTML page" + (f" ({title.group(1).decode('utf-8', 'replace').strip()!r})"
                                 if title else "") + \
            ": a web server's answer saved in place of the file"
    if _XML_ERROR.match(head):
        code = _CODE.search(head)
        return "an object store's XML error document" + \
            (f" ({code.group(1).decode('utf-8', 'replace')})" if code else "") + \
            ": saved in place of the file"
    return None


def parse_failed(node: Node) -> bool:
    """Whether the parse of a file found an error anywhere in what it built (a deferred
    part's children are not built for this). A file is looked at as a stand-in only then:
    a clean open reads no byte more (on an object store, one request per file more), and a
    real file that happens to hold such text (a chunk of an uncompressed byte array) and
    parses is never called one."""
    stack = [node]
    while stack:
        n = stack.pop()
        if n.status == Status.ERROR:
            return True
        if isinstance(n.children, list):
            stack.extend(n.children)
    return False


def stand_in_node(src: ByteSource, name: str, what: Optional[str] = None) -> Optional[Node]:
    """The node file `src` (named `name`; `what`: how the message names it, by default
    its name) is shown as when it is a stand-in — one error over its bytes, said once as
    what it is, not parsed — or None when it is not one."""
    if not src.size:
        return None
    standing = stand_in(src.read(0, HEAD))
    if standing is None:
        return None
    node = Node(name, "file", src, 0, src.size)
    node.add(Node("unparsed", "unparsed", src, 0, src.size, status=Status.ERROR, code=STAND_IN,
                  display=hex_preview(src.read(0, 16)), message=f"{what or name} is {standing}"))
    return node
