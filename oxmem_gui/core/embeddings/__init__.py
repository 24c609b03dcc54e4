"""Turning text into vectors (contract §5): the deterministic and semantic backends, the semantic model's files
and its ONNX graph, the indexing pipeline's pure parts (text of a payload, normalization, chunks) and
re-embedding stored chunks. May import :mod:`..database` and :mod:`..errors` only."""
