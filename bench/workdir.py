"""The benchmark's working folders under $CANON_HOME/bench/work: corpora generated once per
(size, seed, share, generator source) and reused while unchanged, and the copies a section mutates."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from bench import gen_corpus
from bench.timing import log, now


def fresh_dir(p: Path) -> Path:
    shutil.rmtree(p, ignore_errors=True)
    p.mkdir(parents=True)
    return p


def corpus_dir(work: Path, n: int, seed: int, share: float) -> Path:
    """Generated once per (n, seed, share, generator source); reused while the stamp matches."""
    d = work / "corpora" / f"docs{n}-seed{seed}-share{share}"
    script = gen_corpus.gen_synth_script()
    stamp = json.dumps({"n": n, "seed": seed, "share": share,
                        "gen": gen_corpus.tree_digest_files([Path(gen_corpus.__file__)] + ([script] if script else []))})
    st = d / ".stamp"
    if st.exists() and st.read_text() == stamp:
        # mutations of earlier runs are undone by regenerating: check the digest of the tree
        dig = d / ".digest"
        if dig.exists() and dig.read_text() == gen_corpus.tree_digest(d):
            return d
    fresh_dir(d)
    t = now()
    s = gen_corpus.generate(d, n, seed, share)
    log(f"generated corpus {d.name} in {now() - t:.1f} s: {s['synth_docs']} gen_synth + {s['analytical_docs']} "
        f"analytical{'; ' + s['note'] if s['note'] else ''}")
    st.write_text(stamp)
    (d / ".digest").write_text(gen_corpus.tree_digest(d))
    return d


def working_copy(src: Path, dest: Path) -> Path:
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns(".stamp", ".digest"))
    return dest
