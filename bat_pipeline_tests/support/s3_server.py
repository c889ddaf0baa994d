"""A real S3 server for tests: moto's (`moto_server`, from moto[server]) as a process on
127.0.0.1, in a session of its own, stopped on the way out. The processes under test reach
it as they would reach AWS, through the standard variables (`s3_env`): botocore, and so
s3fs, take the endpoint from AWS_ENDPOINT_URL."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx

from bat_pipeline.resources.ports import free_port
from bat_pipeline_tests.support import local_http
from bat_pipeline_tests.support.paths import VENV_BIN
from bat_pipeline_tests.support.polling import wait_for

START_TIMEOUT_S = 30


@dataclass
class S3Server:
    endpoint: str
    process: subprocess.Popen

    @property
    def env(self) -> dict[str, str]:
        """What a process needs to use this server as its S3 (moto takes any key)."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_DEFAULT_REGION": "us-east-1",
        }

    def filesystem(self):
        """An s3fs filesystem on this server, listings read fresh, for a test's own looks."""
        import s3fs

        return s3fs.S3FileSystem(
            endpoint_url=self.endpoint,
            key="testing",
            secret="testing",
            use_listings_cache=False,
            skip_instance_cache=True,
        )

    def bucket(self, name: str) -> str:
        """Create a bucket; its URL."""
        self.filesystem().mkdir(name)
        return f"s3://{name}"


def _answers(endpoint: str) -> bool:
    try:
        return local_http.get(endpoint, timeout=1).status_code < 500
    except httpx.HTTPError:
        return False


@contextlib.contextmanager
def s3_server(log: Path) -> Iterator[S3Server]:
    """moto's S3 server on a free port of 127.0.0.1, its output in `log`."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [str(VENV_BIN / "moto_server"), "-H", "127.0.0.1", "-p", str(port)],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    endpoint = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: process.poll() is not None or _answers(endpoint), START_TIMEOUT_S, what="moto_server")
        assert process.poll() is None, log.read_text(errors="replace")[-2000:]
        yield S3Server(endpoint, process)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
