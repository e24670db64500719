"""A real inference server for integration tests: llama.cpp's server (llama-cpp-python) on a tiny model.

Reusable by any test that needs a genuine OpenAI-compatible server on loopback, with no
download: `write_tiny_llama(path)` writes a random-weight llama model with the `gguf`
package, and `llama_server(model_path)` starts `python -m llama_cpp.server` on a free
loopback port, yields its base URL (`http://127.0.0.1:PORT/v1`) and kills it at the end.
The pytest fixtures `tiny_llama_path` (session-wide) and `llama_base_url` wrap both:

    from llama_server import llama_base_url, tiny_llama_path  # noqa: F401  (fixtures)

    @pytest.mark.integration
    def test_it(llama_base_url): ...

The model: 2 layers, width 64, an SPM vocabulary of <unk>, <s>, </s>, the 256 byte
tokens and the printable ASCII characters (the space as U+2581). A random model that
emits byte tokens forming invalid UTF-8 makes the server hold text back, and one that
emits </s> stops early, so the output layer is biased toward the printable tokens: every
embedding carries a large constant in dimension 0, the blocks' output projections are
tiny (the residual stays close to the embedding), and the output rows of printable tokens
weigh dimension 0 by +4, the others by -4: after the final norm that is a logit gap of about
50 against noise of about 2, so no repetition penalty or sampler setting can pick a byte.
At temperature 0 it therefore always generates printable characters, one token per
streamed chunk. llama-cpp-python's server serves one request at a time.
Requires: `CMAKE_ARGS=-DLLAVA_BUILD=OFF pip install 'llama-cpp-python[server]==0.3.16' gguf==0.17.1`.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

N_EMBD, N_LAYER, N_HEAD, N_FF, N_CTX = 64, 2, 4, 128, 1024
MODEL_NAME = "tiny-random-llama"
SPACE = "\u2581"


def vocabulary() -> tuple:
    """(tokens, scores, types) of the SPM vocabulary: specials, 256 byte tokens, printable ASCII."""
    from gguf import TokenType
    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
    types = [TokenType.UNKNOWN, TokenType.CONTROL, TokenType.CONTROL] + [TokenType.BYTE] * 256
    printable = [SPACE] + [chr(c) for c in range(0x21, 0x7F)]
    tokens += printable
    types += [TokenType.NORMAL] * len(printable)
    scores = [0.0] * (3 + 256) + [-float(i) for i in range(len(printable))]
    return tokens, scores, types


def write_tiny_llama(path: Path, seed: int = 0) -> Path:
    """Write the tiny random-weight llama model (about 0.3 MB, float32) to `path`."""
    import numpy as np
    from gguf import GGUFWriter, LlamaFileType, TokenType
    rng = np.random.default_rng(seed)
    tokens, scores, types = vocabulary()
    n_vocab = len(tokens)
    writer = GGUFWriter(str(path), "llama")
    writer.add_name(MODEL_NAME)
    writer.add_context_length(N_CTX)
    writer.add_embedding_length(N_EMBD)
    writer.add_block_count(N_LAYER)
    writer.add_feed_forward_length(N_FF)
    writer.add_head_count(N_HEAD)
    writer.add_head_count_kv(N_HEAD)
    writer.add_rope_dimension_count(N_EMBD // N_HEAD)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_file_type(LlamaFileType.ALL_F32)
    writer.add_tokenizer_model("llama")
    writer.add_token_list(tokens)
    writer.add_token_scores(scores)
    writer.add_token_types([int(t) for t in types])
    writer.add_unk_token_id(0)
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    writer.add_add_bos_token(True)
    writer.add_add_eos_token(False)

    def tensor(name: str, *shape: int, scale: float = 0.02) -> None:
        writer.add_tensor(name, (rng.standard_normal(shape) * scale).astype(np.float32))

    embeddings = (rng.standard_normal((n_vocab, N_EMBD)) * 0.1).astype(np.float32)
    embeddings[:, 0] = 1.0
    writer.add_tensor("token_embd.weight", embeddings)
    writer.add_tensor("output_norm.weight", np.ones(N_EMBD, dtype=np.float32))
    output = (rng.standard_normal((n_vocab, N_EMBD)) * 0.3).astype(np.float32)
    printable = np.array([t == TokenType.NORMAL for t in types])
    output[:, 0] = np.where(printable, 4.0, -4.0)
    writer.add_tensor("output.weight", output)
    for i in range(N_LAYER):
        writer.add_tensor(f"blk.{i}.attn_norm.weight", np.ones(N_EMBD, dtype=np.float32))
        writer.add_tensor(f"blk.{i}.ffn_norm.weight", np.ones(N_EMBD, dtype=np.float32))
        for name in ("attn_q", "attn_k", "attn_v"):
            tensor(f"blk.{i}.{name}.weight", N_EMBD, N_EMBD, scale=0.2)
        tensor(f"blk.{i}.attn_output.weight", N_EMBD, N_EMBD, scale=0.002)
        tensor(f"blk.{i}.ffn_gate.weight", N_FF, N_EMBD, scale=0.2)
        tensor(f"blk.{i}.ffn_up.weight", N_FF, N_EMBD, scale=0.2)
        tensor(f"blk.{i}.ffn_down.weight", N_EMBD, N_FF, scale=0.002)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return Path(path)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _ready(base_url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{base_url}/models", timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


@contextlib.contextmanager
def llama_server(model_path: Path, n_ctx: int = N_CTX, threads: int = 1, start_timeout_s: float = 120.0,
                 log_path: Path | None = None):
    """Start llama.cpp's server on a free loopback port; yield its base URL; kill it (and wait) at the end."""
    port = free_port()
    base_url = f"http://127.0.0.1:{port}/v1"
    args = [sys.executable, "-m", "llama_cpp.server", "--model", str(model_path), "--model_alias", MODEL_NAME,
            "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(n_ctx), "--n_threads", str(threads),
            "--n_threads_batch", str(threads), "--interrupt_requests", "False"]
    log = open(log_path or os.devnull, "wb")
    process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "NO_PROXY": "*"})
    try:
        deadline = time.monotonic() + start_timeout_s
        while not _ready(base_url):
            if process.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited {process.returncode} before serving "
                                   f"(log: {log_path or 'pass log_path to keep it'})")
            if time.monotonic() > deadline:
                raise RuntimeError(f"llama_cpp.server not ready in {start_timeout_s:g}s")
            time.sleep(0.2)
        yield base_url
    finally:
        process.kill()
        process.wait()
        log.close()


@pytest.fixture(scope="session")
def tiny_llama_path(tmp_path_factory) -> Path:
    return write_tiny_llama(tmp_path_factory.mktemp("tiny_llama") / "tiny-llama.gguf")


@pytest.fixture
def llama_base_url(tiny_llama_path, tmp_path):
    with llama_server(tiny_llama_path, log_path=tmp_path / "llama_server.log") as base_url:
        yield base_url
