"""The service's settings (the ``serve`` command's flags), checked when they are made."""

import os
from dataclasses import dataclass, field

from ktrain_recipes.batch_policy import CALL_TOKENS, MODEL_BATCH
from ktrain_recipes.errors import RecipesError
from ktrain_recipes.config import check_whole, plain_numbers

# the most texts one model call may take: memory grows with it (onnxruntime keeps its peak), so a request of
# --max-batch texts is classified in calls of --max-call
MAX_CALL = 1024

# where `serve` listens unless told otherwise: this machine only
DEFAULT_HOST, DEFAULT_PORT = "127.0.0.1", 8000

BACKENDS = ("auto", "int8", "ktrain")
ENGINES = ("local", "ray")


@dataclass
class ServiceSettings:
    """How the service runs (the ``serve`` command's flags)."""

    predictor: str = field(metadata={"help": "a predictor folder written by train"})
    backend: str = field(default="auto", metadata={"help": "int8: the exported int8 ONNX model (no TensorFlow, no "
                                                   "pickle); ktrain: ktrain's predictor; auto: int8 when the "
                                                   "folder has it"})
    max_batch: int = field(default=MODEL_BATCH, metadata={"help": "most texts (or pairs) in one request"})
    max_call: int = field(default=MODEL_BATCH, metadata={
        "help": "most texts in one model call: the batcher joins requests up to it, and a larger request is classified "
                "in calls of this size, so that one request's memory stays bounded (at most 1024)"})
    max_call_tokens: int = field(default=CALL_TOKENS, metadata={
        "help": "most tokens in one model call: requests join a call until their tokens reach it, so that under load "
                "a short text waits for a call of about this size, not for --max-call texts (0: no limit). The int8 "
                "MiniLM is cheapest per token near 256 on a CPU (docs/serve/batch_sweep.json)"})
    max_wait_ms: float = field(default=0.0, metadata={"help": "how long a batch waits for more requests when the "
                                                      "model is idle (while it is busy, requests gather anyway)"})
    threads: int = field(default=max(1, (os.cpu_count() or 2) - 1),
                         metadata={"help": "the int8 model's threads (default: all cores but one, which the HTTP "
                                           "side keeps)"})
    max_chars: int = field(default=5000, metadata={"help": "longest text accepted, in characters"})
    max_body_bytes: int = field(default=1_000_000, metadata={"help": "largest request body accepted"})
    reload_interval: float = field(default=1.0, metadata={"help": "seconds between checks for a new save in the "
                                                          "folder (0: never reload)"})
    max_queue: int = field(default=1024, metadata={"help": "most texts waiting for the model; past it, requests "
                                                   "get 429 with Retry-After"})
    max_concurrent: int = field(default=256, metadata={"help": "most /predict requests in the server at once; past "
                                                        "it, requests get 429 with Retry-After at once"})
    timeout_ms: float = field(default=10_000.0, metadata={"help": "a request still waiting for the model after "
                                                          "this long gets 503 with Retry-After"})
    drain_s: float = field(default=10.0, metadata={"help": "on SIGTERM, how long requests in flight may take to "
                                                   "finish (the service is not ready meanwhile); those still "
                                                   "waiting then get JSON 503. 0: wait for all of them, with no "
                                                   "limit"})
    api_key_file: str | None = field(default=None, metadata={
        "help": "a file holding the API key clients must send as 'Authorization: Bearer KEY' (or set "
                "$KTRAIN_RECIPES_API_KEY); default: no key", "parse": str})
    cors_origin: str | None = field(default=None, metadata={
        "help": "comma-separated origins whose web pages may call the API (CORS); default: none", "parse": str})
    max_header_bytes: int = field(default=32_768, metadata={"help": "largest request line and headers accepted, "
                                                        "in bytes (past it: 431)"})
    max_headers: int = field(default=100, metadata={"help": "most headers in one request (past it: 431)"})
    header_timeout_s: float = field(default=10.0, metadata={"help": "seconds a client has to send a request's line "
                                                            "and headers (past it: 408, connection closed)"})
    body_timeout_s: float = field(default=30.0, metadata={"help": "seconds a client has to send a request's body "
                                                          "once its headers are in (past it: 408)"})
    # uvicorn's own default is 5 s, the same as httpx's idle expiry: a client could send its next request on a
    # connection in the instant the server closes it, and read a reset. Longer than clients' and balancers' idle
    # timeouts (AWS ALB: 60 s; nginx keeps 75 s), the client always closes an idle connection first.
    keep_alive_s: float = field(default=75.0, metadata={"help": "seconds an idle kept-alive connection stays open "
                                                         "(longer than the clients' and balancers' own idle timeout)"})
    engine: str = field(default="local", metadata={"help": "local: one process (uvicorn); ray: a Ray Serve "
                                                   "deployment of the same app, --replicas copies of the model"})
    replicas: int = field(default=1, metadata={"help": "with --engine ray: how many replicas, each with its own "
                                               "model and --threads CPUs"})
    ray_address: str | None = field(default=None, metadata={
        "help": "with --engine ray: a running cluster to deploy to (HOST:PORT, ray://HOST:PORT or auto); default: a "
                "local Ray started for the service", "parse": str})

    def __post_init__(self) -> None:
        plain_numbers(self)
        if not isinstance(self.predictor, (str, os.PathLike)):
            raise RecipesError(f"--predictor must be a predictor folder (a path), got {self.predictor!r}")
        for name in ("api_key_file", "cors_origin", "ray_address"):  # a number would be read as a file descriptor
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise RecipesError(f"--{name.replace('_', '-')} must be a string (a path, an origin, an address) or "
                                   f"left out, got {value!r}")
        for origin in self.origins():
            if origin != "*" and (origin.endswith("/") or "://" not in origin or origin.count("/") > 2):
                raise RecipesError(f"--cors-origin '{origin}' is not an origin: give scheme://host[:port], with no "
                                   "path or trailing slash (a browser sends it so, e.g. https://example.org)")
        if self.backend not in BACKENDS:
            raise RecipesError(f"--backend must be one of {', '.join(BACKENDS)}, got {self.backend!r}")
        if self.engine not in ENGINES:
            raise RecipesError(f"--engine must be one of {', '.join(ENGINES)}, got {self.engine!r}")
        if self.engine == "local" and (self.replicas != 1 or self.ray_address):
            raise RecipesError("--replicas and --ray-address are for --engine ray: add --engine ray, or leave them out")
        for name, least, most in [("max_batch", 1, 100_000), ("max_call", 1, MAX_CALL), ("max_chars", 1, 10_000_000),
                                  ("max_body_bytes", 1, 1 << 30), ("threads", 1, 1024), ("max_queue", 1, 10_000_000),
                                  ("max_concurrent", 1, 100_000), ("replicas", 1, 1000),
                                  ("max_call_tokens", 0, 10_000_000), ("max_header_bytes", 1024, 1 << 24),
                                  ("max_headers", 1, 10_000)]:
            check_whole(getattr(self, name), f"--{name.replace('_', '-')}", least, most)
        for name, least, most in [("max_wait_ms", 0, 1000), ("reload_interval", 0, 86_400),
                                  ("timeout_ms", 1, 600_000), ("drain_s", 0, 3600),
                                  ("header_timeout_s", 0.1, 3600), ("body_timeout_s", 0.1, 3600),
                                  ("keep_alive_s", 1, 3600)]:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not (least <= value <= most):
                raise RecipesError(f"--{name.replace('_', '-')} must be a number from {least} to {most}, "
                                   f"got {value!r}")
        if self.max_queue < self.max_batch:  # a full batch could never be queued: 429 for ever on an idle server
            raise RecipesError(f"--max-queue ({self.max_queue}) must be at least --max-batch ({self.max_batch})")

    def api_key(self) -> str | None:
        """The API key: from ``api_key_file``, else $KTRAIN_RECIPES_API_KEY, else None (no key asked).

        A key that was asked for and is empty (``--api-key-file ''``, an empty file, the variable set to nothing:
        an unset shell variable, typically) is refused rather than read as "no key"; so is a key file that is not
        a regular file (a FIFO would block the start), and a key that is not printable ASCII (HTTP headers carry
        bytes, and a client's encoding of other characters would not match).
        """
        if self.api_key_file is not None:
            key = self._read_key_file(self.api_key_file)
            where = f"--api-key-file '{self.api_key_file}'"
        elif "KTRAIN_RECIPES_API_KEY" in os.environ:
            key, where = os.environ["KTRAIN_RECIPES_API_KEY"].strip(), "$KTRAIN_RECIPES_API_KEY"
        else:
            return None
        if not key:
            raise RecipesError(f"{where} is empty: put the key in it, or leave it out to serve without a key")
        if not (key.isascii() and key.isprintable()):
            raise _not_ascii(where)
        return key

    @staticmethod
    def _read_key_file(name: str) -> str:
        import stat

        if not name:
            raise RecipesError("--api-key-file '' names no file (an unset shell variable?): give the key file's path")
        try:
            if not stat.S_ISREG(os.stat(name).st_mode):
                raise RecipesError(f"--api-key-file '{name}' is not a regular file: give a file holding the key")
            with open(name, "rb") as f:
                raw = f.read(4097)
        except OSError as exc:
            raise RecipesError(f"cannot read --api-key-file '{name}' ({exc.strerror})") from None
        if len(raw) > 4096:
            raise RecipesError(f"--api-key-file '{name}' is over 4 KB: it should hold one key")
        try:
            return raw.decode("ascii").strip()
        except UnicodeDecodeError:
            raise _not_ascii(f"--api-key-file '{name}'") from None

    def origins(self) -> list[str]:
        return [o.strip() for o in (self.cors_origin or "").split(",") if o.strip()]


def url_host(host: str) -> str:
    """``host`` as it goes in a URL: an IPv6 address in brackets (``http://[::]:8000/``)."""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def _not_ascii(where: str) -> RecipesError:
    return RecipesError(f"{where} holds characters other than printable ASCII: use letters, digits and punctuation "
                        "(e.g. the output of `openssl rand -hex 32`)")
