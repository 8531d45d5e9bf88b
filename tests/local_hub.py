"""Test-only: a small Hugging Face hub on 127.0.0.1, serving model and dataset repositories from a local folder.

It answers the routes ``huggingface_hub`` (0.36) calls for what the course does on Colab: ``hf_hub_download`` (HEAD
and GET ``/{repo}/resolve/{rev}/{file}`` with ``X-Repo-Commit`` and the ETag), ``snapshot_download`` and
``repo_info`` (``/api/models/{repo}[/revision/{rev}]``), and the dataset routes ``datasets.load_dataset`` walks
(``/api/datasets/{repo}[/revision/{rev}]``, ``/tree/{rev}/...``, ``/paths-info/{rev}``). With ``HF_ENDPOINT``
pointing here and ``HF_HOME`` at an empty folder, the hub client downloads into a cache laid out exactly as on
Colab: every file a link from ``snapshots/REV`` into ``blobs/``.

The repositories are folders: ``ROOT/models/ORG/NAME/...`` and ``ROOT/datasets/ORG/NAME/...``. An unknown repository
is answered as the hub answers it (401 with ``X-Error-Code: RepoNotFound``), a missing file with 404
``EntryNotFound``. Started by ``serving_hub`` (a subprocess, stopped by its PID); ``python tests/local_hub.py ROOT
--port P`` runs it alone. Every request is written to stderr, so that a test's failure shows what the client asked.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlparse


def repo_commit(folder: Path) -> str:
    """A 40-hex commit id for a repository folder: the sha1 of its files' names and contents."""
    h = hashlib.sha1()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        h.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


class Hub(BaseHTTPRequestHandler):
    root: Path
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # noqa: A002  (the base class's name)
        sys.stderr.write("hub: " + format % args + "\n")

    # -- answers
    def _send(self, status: int, body: bytes = b"", headers: dict | None = None, head: bool = False) -> None:
        self.send_response(status)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def _json(self, value, head: bool = False) -> None:
        self._send(200, json.dumps(value).encode(), {"Content-Type": "application/json"}, head)

    def _error(self, status: int, code: str, message: str, head: bool = False) -> None:
        self._send(status, json.dumps({"error": message}).encode(),
                   {"Content-Type": "application/json", "X-Error-Code": code, "X-Error-Message": message}, head)

    # -- routing
    def _repo(self, kind: str, parts: list[str]) -> tuple[Path | None, list[str]]:
        """The repository folder named by the first two parts (org/name), or by the first alone for the hub's
        canonical ids without an owner (``bert-base-uncased``: a folder holding files, not an owner's folder), and
        the parts after it."""
        if parts and (self.root / kind / parts[0] / "config.json").is_file():
            return self.root / kind / parts[0], parts[1:]
        if len(parts) < 2:
            return None, parts
        folder = self.root / kind / parts[0] / parts[1]
        return (folder if folder.is_dir() else None), parts[2:]

    def do_HEAD(self):  # noqa: N802
        self._route(head=True)

    def do_GET(self):  # noqa: N802
        self._route(head=False)

    def do_POST(self):  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode() if length else ""
        self._route(head=False, form=body)

    def _route(self, head: bool, form: str | None = None) -> None:
        url = urlparse(self.path)
        parts = [unquote(p) for p in url.path.strip("/").split("/") if p]
        if parts[:1] == ["api"] and len(parts) >= 2 and parts[1] in ("models", "datasets"):
            kind = parts[1]
            repo, rest = self._repo(kind, parts[2:])
            if repo is None:
                return self._error(401, "RepoNotFound", "Repository not found", head)
            return self._api(kind, repo, rest, head, parse_qs(url.query), form)
        kind = "models"
        if parts[:1] == ["datasets"]:
            kind, parts = "datasets", parts[1:]
        repo, rest = self._repo(kind, parts)
        if repo is None:
            return self._error(401, "RepoNotFound", "Repository not found", head)
        if len(rest) >= 3 and rest[0] == "resolve":
            return self._file(repo, "/".join(rest[2:]), head)
        return self._error(404, "EntryNotFound", "no such route", head)

    def _info(self, kind: str, repo: Path) -> dict:
        files = sorted(str(p.relative_to(repo)) for p in repo.rglob("*") if p.is_file())
        one_part = repo.parent.name == kind
        repo_id = repo.name if one_part else f"{repo.parent.name}/{repo.name}"
        return {"id": repo_id, "modelId": repo_id, "sha": repo_commit(repo), "private": False, "disabled": False,
                "gated": False, "lastModified": "2026-12-01T00:00:00.000Z", "tags": [], "cardData": {},
                "siblings": [{"rfilename": f} for f in files], "downloads": 0, "likes": 0}

    def _entry(self, repo: Path, path: Path) -> dict:
        rel = str(path.relative_to(repo))
        if path.is_dir():
            return {"type": "directory", "path": rel, "oid": hashlib.sha1(rel.encode()).hexdigest()}
        data = path.read_bytes()
        return {"type": "file", "path": rel, "size": len(data), "oid": hashlib.sha1(data).hexdigest(),
                "lastCommit": {"id": repo_commit(repo), "title": "", "date": "2026-12-01T00:00:00.000Z"}}

    def _api(self, kind: str, repo: Path, rest: list[str], head: bool, query: dict, form: str | None) -> None:
        if not rest or rest[0] == "revision":
            return self._json(self._info(kind, repo), head)
        if rest[0] == "tree" and len(rest) >= 2:
            folder = repo.joinpath(*rest[2:]) if len(rest) > 2 else repo
            if not folder.is_dir():
                return self._error(404, "EntryNotFound", f"{'/'.join(rest[2:])} does not exist", head)
            recursive = query.get("recursive", ["false"])[0].lower() in ("1", "true")
            found = folder.rglob("*") if recursive else folder.iterdir()
            return self._json([self._entry(repo, p) for p in sorted(found)], head)
        if rest[0] == "paths-info":
            asked = parse_qs(form or "").get("paths", [])
            if form and form.lstrip().startswith("{"):
                asked = json.loads(form).get("paths", [])
            return self._json([self._entry(repo, repo / p) for p in asked if (repo / p).exists()], head)
        if rest[0] in ("parquet", "croissant"):  # no converted copies: the client reads the files themselves
            return self._error(404, "EntryNotFound", "not converted", head)
        return self._error(404, "EntryNotFound", "no such route", head)

    def _file(self, repo: Path, rel: str, head: bool) -> None:
        path = repo / rel
        if ".." in Path(rel).parts or not path.is_file():
            return self._error(404, "EntryNotFound", f"{rel} does not exist", head)
        data = path.read_bytes()
        etag = hashlib.sha256(data).hexdigest()
        self._send(200, data, {"Content-Type": "application/octet-stream", "ETag": f'"{etag}"',
                               "X-Repo-Commit": repo_commit(repo), "Accept-Ranges": "bytes"}, head)


def serve(root: Path, host: str, port: int) -> None:
    handler = type("BoundHub", (Hub,), {"root": root})
    server = ThreadingHTTPServer((host, port), handler)
    print(f"hub on http://{host}:{server.server_address[1]}", flush=True)
    server.serve_forever()


@contextmanager
def serving_hub(root: Path):
    """Start the hub on 127.0.0.1 in a subprocess; yield its URL; stop it by its PID. Its requests go to
    ``ROOT.log`` beside the folder."""
    import subprocess

    from ktrain_recipes_tools.studies.serve_bench import free_port, stop

    import httpx
    import time

    port = free_port()
    log = root.parent / f"{root.name}.log"  # the requests it answered: a file, so a long test never fills a pipe
    with open(log, "w") as sink:
        proc = subprocess.Popen([sys.executable, __file__, str(root), "--port", str(port)],
                                stdout=subprocess.DEVNULL, stderr=sink, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        end = time.monotonic() + 30
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"the local hub exited with {proc.returncode}: {log.read_text()[-2000:]}")
            try:
                httpx.get(url + "/api/models/none/none", timeout=2)
                break
            except httpx.TransportError:
                if time.monotonic() > end:
                    raise RuntimeError("the local hub did not answer within 30 s") from None
                time.sleep(0.1)
        yield url
    finally:
        stop(proc)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    serve(args.root, args.host, args.port)
