"""A real S3 API on loopback: moto's server mode on 127.0.0.1 (a free port), with every
request it receives recorded, so tests can hold our own counts against the server's."""
from __future__ import annotations

import logging
import os
import socket
from typing import Callable, List, Tuple

import pytest

Request = Tuple[str, str, str, str]   # method, path, query, Range header


class S3Server:
    """The running server: its endpoint, the requests it received, helpers to fill it."""

    def __init__(self, endpoint: str):
        self.endpoint = endpoint
        self.requests: List[Request] = []
        self.ignore_range = False   # answer as a server that ignores `Range` (200, all of it)

    def client(self):
        import boto3

        return boto3.client("s3", endpoint_url=self.endpoint, region_name="us-east-1",
                            aws_access_key_id="testing", aws_secret_access_key="testing")

    def fs(self):
        import s3fs

        return s3fs.S3FileSystem(key="testing", secret="testing", skip_instance_cache=True,
                                 client_kwargs={"endpoint_url": self.endpoint,
                                                "region_name": "us-east-1"})

    def bucket(self, name: str) -> str:
        try:
            self.client().create_bucket(Bucket=name)
        except self.client().exceptions.BucketAlreadyOwnedByYou:
            pass
        return name

    def upload(self, local_dir: str, url: str) -> str:
        """Copy local folder `local_dir` to `s3://bucket/prefix` (`url`), file by file."""
        fs = self.fs()
        prefix = url[len("s3://"):].rstrip("/")
        for d, _dirs, files in os.walk(local_dir):
            for f in files:
                full = os.path.join(d, f)
                rel = os.path.relpath(full, local_dir).replace(os.sep, "/")
                with open(full, "rb") as fh:
                    fs.pipe_file(f"{prefix}/{rel}", fh.read())
        return url

    def count(self, fn: Callable[[], object]) -> Tuple[object, List[Request]]:
        """Run `fn`; (its result, the requests the server received meanwhile)."""
        start = len(self.requests)
        result = fn()
        return result, list(self.requests[start:])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def s3_server():
    """moto's S3 on 127.0.0.1; the standard AWS variables point fsspec/s3fs at it (so
    `s3://` URLs resolve there exactly as they would on AWS), restored afterwards."""
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    port = _free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    s3 = S3Server(f"http://127.0.0.1:{port}")
    app = server._server.app     # count what reaches the server, not what we think we sent

    def recording(environ, start_response):
        s3.requests.append((environ.get("REQUEST_METHOD", ""), environ.get("PATH_INFO", ""),
                            environ.get("QUERY_STRING", ""), environ.get("HTTP_RANGE", "")))
        if s3.ignore_range:
            environ.pop("HTTP_RANGE", None)
        return app(environ, start_response)
    server._server.app = recording
    env = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
           "AWS_DEFAULT_REGION": "us-east-1", "AWS_ENDPOINT_URL": s3.endpoint}
    with pytest.MonkeyPatch.context() as mp:
        for k, v in env.items():
            mp.setenv(k, v)
        for k in ("AWS_PROFILE", "AWS_SESSION_TOKEN"):
            mp.delenv(k, raising=False)
        try:
            yield s3
        finally:
            server.stop()
