"""The structures that make a warm `ask` fast, checked for what they must not
change (these are not timing tests):

- `match_objects` over the catalog's MatchIndex returns exactly what scoring
  every catalog entry returns (names, misspellings, reordered words, ids,
  distinctive words, domains);
- the per-(role, policy) visible sets are reused while the policy is the same
  and recomputed when its revision or its rules change (a revocation is
  enforced on the next question), or when the document list is replaced;
- the chunk index carries a LABEL_LIST index on `allowed_roles` and, above a
  row threshold, an IVF_FLAT vector index; search through it stays a role
  prefilter and returns the exact scan's results;
- search reads only ids for the ranked lists and the wide columns for the final
  hits only: the same hits and attributes as before;
- a pinned table handle is never reused once its LanceDB version is pruned.
"""

from __future__ import annotations

import datetime as dt
import json
import random
from pathlib import Path

import lancedb
import pytest
from lancedb.index import IvfSq

from canon.ask import links
from canon.ask.context import ask_context
from canon.ask.pipeline import AskContext, ask
from canon.ask.understanding.match import Catalog, ObjectEntry, match_objects, match_objects_exhaustive, object_catalog
from canon.index import publish as index
from canon.index import search as index_search
from canon.index import tuning as index_tuning
from canon.index.embedding.hashing import HashingEmbedder
from canon.models.documents import Document
from canon.registry import store as registry
from canon.registry.contracts import load_contract
from canon.registry.gate import gate
from canon.registry.policy import Policy, RevokeRule
from canon.sources.corpus.reader import read_corpus

ROOT = Path(__file__).resolve().parents[1]
DOSSIER = ROOT / "tests" / "fixtures" / "dossier"
HARD = ROOT / "tests" / "gold_hard"
D = dt.date.fromisoformat


def _key(matches):
    return [(m.object_id, m.score, m.name, m.domain, sorted(m.kinds)) for m in matches]


def _hard_docs() -> list[Document]:
    return gate(read_corpus(HARD / "corpus"), load_contract(ROOT / "contracts" / "knowledge.yml"),
                today=D("2026-11-30")).documents


def _questions(docs: list[Document], gold: list[dict], n: int = 60) -> list[str]:
    rng = random.Random(7)
    qs = [c["question"] for c in gold]
    titles = [d.title for d in docs]
    for t in rng.sample(titles, min(n, len(titles))):
        words = t.split()
        i = rng.randrange(len(t))
        qs += [f"What does the {t} say?", t[:i] + t[i + 1:], " ".join(reversed(words)),
               f"which model supports {t.lower()} for 2026-08-31", t.upper() + " please"]
    qs += [d.object_id for d in docs[:20]] + [d.object_id.replace(".", " ") for d in docs[:20]]
    qs += ["", "?", "the the the", "net revnue", "customers count as active", "rebate memo", "mrr", "gmv v2"]
    return qs


@pytest.mark.parametrize("corpus", ["dossier", "hard"])
def test_indexed_match_objects_equals_scoring_every_entry(corpus, dossier_docs):
    if corpus == "dossier":
        docs, gold = dossier_docs, json.loads((DOSSIER / "gold.json").read_text())
    else:
        docs, gold = _hard_docs(), json.loads((HARD / "gold.json").read_text())
    catalog = object_catalog(docs)
    questions = _questions(docs, gold)
    match_objects(questions[0], catalog)          # the first question scans; the index is built on the second
    match_objects(questions[1], catalog)
    assert catalog.match_index is not None
    nonempty = 0
    for q in questions:
        fast, every = match_objects(q, catalog), match_objects_exhaustive(q, catalog)
        assert _key(fast) == _key(every), q
        nonempty += bool(every)
    assert nonempty > len(questions) // 3      # the examples do match objects


def test_match_index_candidates_cover_every_way_an_entry_scores():
    """A catalog built to hit each scoring path: phrase, fuzzy core, scattered words, distinctive words."""
    cat = Catalog()
    cat["metric.finance.net_revenue"] = ObjectEntry("metric.finance.net_revenue", {"metric_definition"},
                                                    {"net revenue"}, "finance", {"metric finance net revenue"})
    cat["metric.saas.active_customers"] = ObjectEntry("metric.saas.active_customers", {"metric_definition"},
                                                      {"active customers"}, "saas", set())
    cat["memo.finance.rebate_reserve"] = ObjectEntry("memo.finance.rebate_reserve", {"restricted_memo"},
                                                     {"q4 rebate reserve scenario"}, "finance", set())
    cat["metric.retail.mrr"] = ObjectEntry("metric.retail.mrr", {"metric_definition"}, {"mrr"}, "retail", set())
    cat.distinctive = {"memo.finance.rebate_reserve": {"rebate", "reserve", "scenario"},
                       "metric.retail.mrr": {"mrr"}}
    cases = {
        "what is net revenue": "metric.finance.net_revenue",                      # written out whole
        "what is net revnue for august": "metric.finance.net_revenue",            # misspelled: partial_ratio
        "which customers count as active in saas": "metric.saas.active_customers",  # scattered words
        "what does the memo on rebates and reserves say": "memo.finance.rebate_reserve",  # distinctive words
        "metric finance net revenue": "metric.finance.net_revenue",               # the object id
        "retail mrr": "metric.retail.mrr",                                        # a short name, whole word
    }
    match_objects("warm", cat)
    for q, expected in cases.items():
        every = match_objects_exhaustive(q, cat)
        assert expected in {m.object_id for m in every}, q
        assert _key(match_objects(q, cat)) == _key(every), q
    assert cat.match_index is not None


# ------------------------------------------------------------------ links


def _scan_referenced(doc, docs, kind):   # what links._referenced computed before its index
    return [d for d in docs if d.kind == kind and d.doc_id != doc.doc_id and d.object_id in doc.text
            and (f"{d.object_id}.v{d.version}" in doc.text or f"{d.object_id}.v" not in doc.text)]


def _scan_siblings(object_id, docs, kind):
    fam = links._family(object_id)
    return [d for d in docs if d.kind == kind and fam is not None and links._family(d.object_id) == fam
            and d.object_id != object_id]


def test_indexed_links_equal_scanning_every_document(dossier_docs):
    base = dict(status="approved", authority=90, valid_from=D("2026-01-01"), allowed_roles=("analyst",))
    crafted = [
        Document(doc_id="m1", object_id="model.a.x", kind="model_schema", title="x", version="1", text="t", **base),
        Document(doc_id="m2", object_id="model.a.x_long", kind="model_schema", title="x", version="2",
                 text="t", **base),
        Document(doc_id="m3", object_id="model.a.x_long", kind="model_schema", title="x", version="3",
                 text="t", **base),
        Document(doc_id="m4", object_id="model.finance.fct_revenue", kind="model_schema", title="r",
                 version="2", text="t", **base),
        Document(doc_id="q1", object_id="metric.a.x", kind="metric_definition", title="x", version="1",
                 text="uses model.a.x and model.a.x_long.v3 and my_model.finance.fct_revenue_old", **base),
        Document(doc_id="q2", object_id="metric.a.y", kind="metric_definition", title="y", version="1",
                 text="model.a.x_long model.finance.fct_revenue.v2 model.a.x", **base),
    ]
    for docs in (dossier_docs, _hard_docs(), crafted + dossier_docs):
        docs = list(docs)
        seen = 0
        for kind in ("model_schema", "lineage", "metric_definition"):
            index = links.KindIndex(docs, kind)
            for d in docs:
                got = links._referenced(d, index)
                assert got == _scan_referenced(d, docs, kind), (d.doc_id, kind)
                assert links.siblings(d.object_id, index) == _scan_siblings(d.object_id, docs, kind)
                seen += bool(got)
        assert seen > 0
    q1 = {d.doc_id for d in links._referenced(crafted[4], links.KindIndex(crafted, "model_schema"))}
    assert q1 == {"m1", "m3", "m4"}    # x (no version named), x_long only as v3, and a substring hit


# ------------------------------------------------------------------ visible sets


@pytest.fixture
def workspace(dossier_index):
    return dossier_index


Q_V2 = "What is the net revenue definition for 2026-08-31?"


def test_visible_set_is_cached_per_role_and_policy_and_invalidated_by_a_new_revision(workspace):
    con, lance, emb = workspace
    ctx = ask_context(con, lance, registry.load_documents(con), Policy(revision="r1"), embedder=emb,
                      log_answers=False)
    assert ask(ctx, Q_V2, "analyst").action == "answer"
    view = ctx.view("analyst")
    assert ctx.view("analyst") is view                           # reused: same role, same policy
    assert "metric.net_revenue.v2" in view.shown_ids
    assert ctx.view("finance_controller") is not view            # per role

    # A new policy revision revoking the object: the next question is denied.
    ctx.policy = Policy(revision="r2", revoke=[RevokeRule(role="analyst", object_id="metric.finance.net_revenue")])
    revoked = ctx.view("analyst")
    assert revoked is not view and "metric.net_revenue.v2" not in revoked.shown_ids
    assert "metric.net_revenue.v2" in revoked.revoked            # excluded from retrieval too
    assert ask(ctx, Q_V2, "analyst").action == "deny"

    # Same revision, other rules: still recomputed (visibility depends on the rules, not the label).
    ctx.policy = Policy(revision="r2")
    assert "metric.net_revenue.v2" in ctx.view("analyst").shown_ids
    assert ask(ctx, Q_V2, "analyst").action == "answer"

    # The policy object edited in place (a rule appended): recomputed as well.
    ctx.policy.revoke.append(RevokeRule(role="analyst", doc_id="metric.net_revenue.*"))
    assert ask(ctx, Q_V2, "analyst").action == "deny"


def test_replacing_the_documents_rebuilds_catalog_objects_and_views(workspace):
    con, lance, emb = workspace
    docs = registry.load_documents(con)
    ctx = ask_context(con, lance, docs, Policy(), embedder=emb, log_answers=False)
    assert ask(ctx, Q_V2, "analyst").action == "answer"
    catalog, by_object, view = ctx.catalog, ctx.by_object, ctx.view("analyst")
    v2 = next(d for d in docs if d.doc_id == "metric.net_revenue.v2")
    other = v2.model_copy(update={"doc_id": "metric.marketplace_net_revenue.v1",
                                  "object_id": "metric.marketplace.net_revenue",
                                  "supersedes": None, "title": "Marketplace net revenue"})
    ctx.docs = docs + [other]
    assert ctx.catalog is not catalog and "metric.marketplace.net_revenue" in ctx.catalog
    assert ctx.by_object is not by_object and ctx.view("analyst") is not view
    assert ask(ctx, "What is the net revenue definition for 2026-08-31?", "analyst").action == "clarify"


def test_resolution_uses_the_object_map_with_the_same_outcome(workspace):
    from canon.ask.resolve import resolve_object

    con, lance, emb = workspace
    docs = registry.load_documents(con)
    ctx = AskContext(docs=docs, policy=Policy(), con=con)
    for obj in {d.object_id for d in docs}:
        for day in (None, D("2026-06-30"), D("2026-08-31")):
            a = resolve_object(docs, obj, day, "analyst", ctx.policy)
            b = resolve_object(ctx.by_object[obj], obj, day, "analyst", ctx.policy)
            assert (a.chosen and a.chosen.doc_id, a.response and a.response.action) == \
                   (b.chosen and b.chosen.doc_id, b.response and b.response.action), (obj, day)


# ------------------------------------------------------------------ index structures


def _doc(i: int, roles: tuple[str, ...]) -> Document:
    words = ["revenue", "refund", "churn", "margin", "ledger", "cohort", "freshness", "backfill", "invoice", "rebate"]
    rng = random.Random(i)
    text = " ".join(rng.choice(words) + str(rng.randrange(40)) for _ in range(30)) + f" item{i}."
    return Document(doc_id=f"wiki.t{i}", object_id=f"wiki.test.t{i}", kind="wiki", title=f"Test page {i}",
                    status="approved", authority=50, version="1", valid_from=D("2026-01-01"),
                    allowed_roles=roles, text=text)


@pytest.fixture
def big_index(tmp_path):
    """A small table published by canon.index.publish.publish, then given the tuned indexes as the publish hook
    does (threshold lowered so a test-sized table crosses it)."""
    con = registry.connect(tmp_path / "canon.duckdb")
    docs = [_doc(i, ("analyst",) if i % 3 else ("finance_controller",)) for i in range(400)]
    emb = HashingEmbedder(dimensions=64)
    index.publish(con, tmp_path / "lancedb", docs, emb, policy_revision="none", run_id="r1")
    rev = index.served_revision(con)
    yield con, tmp_path / "lancedb", emb, docs, rev
    con.close()


def _tuned(lance: Path, rev: dict, **kw) -> dict:
    tbl = lancedb.connect(str(lance)).open_table(rev["lance_table"])
    out = index_tuning.tune_indexes(tbl, **kw)
    return {**rev, "lance_version": tbl.version, "revision_id": rev["revision_id"] + "-tuned", "_tune": out}


def test_tune_indexes_adds_the_role_index_and_the_vector_index_only_above_the_threshold(big_index):
    con, lance, emb, docs, rev = big_index
    low = _tuned(lance, rev, ann_min_rows=10_000)
    tbl = lancedb.connect(str(lance)).open_table(rev["lance_table"])
    names = {i.name: i.index_type for i in tbl.list_indices()}
    assert low["_tune"]["role_index"] and index_tuning.ROLE_INDEX in names
    assert index_tuning.VECTOR_INDEX not in names
    high = _tuned(lance, rev, ann_min_rows=100)
    tbl = lancedb.connect(str(lance)).open_table(rev["lance_table"])
    names = {i.name: i.index_type for i in tbl.list_indices()}
    assert names[index_tuning.VECTOR_INDEX] == "IvfFlat" and high["_tune"]["vector_index"].startswith("IVF_FLAT")
    # Kept while few rows are unindexed; IVF_RQ above the second threshold; dropped below the first.
    assert _tuned(lance, high, ann_min_rows=100)["_tune"]["vector_index"].startswith("IVF_FLAT kept")
    rq = _tuned(lance, high, ann_min_rows=100, rq_min_rows=200)
    assert rq["_tune"]["vector_index"].startswith("IVF_RQ")
    tbl = lancedb.connect(str(lance)).open_table(rev["lance_table"])
    assert {i.name: i.index_type for i in tbl.list_indices()}[index_tuning.VECTOR_INDEX] == "IvfRq"
    # An IVF_SQ index an older build trained is re-trained as IVF_RQ at the next write.
    tbl.create_index("vector", config=IvfSq(distance_type="cosine", num_partitions=1), replace=True,
                     name=index_tuning.VECTOR_INDEX)
    assert _tuned(lance, high, ann_min_rows=100, rq_min_rows=200)["_tune"]["vector_index"].startswith("IVF_RQ")
    assert _tuned(lance, high, ann_min_rows=10_000)["_tune"]["vector_index"] == "dropped"


def _same_up_to_ties(got, exact):
    """The same scores in the same order; the same chunks except among rows tied with the last one
    (which of several equally distant rows fills the last places is not defined, flat or not)."""
    assert [round(h.score, 5) for h in got] == [round(h.score, 5) for h in exact]
    last = round(exact[-1].score, 5)
    assert {h.chunk_id for h in got if round(h.score, 5) > last} == \
           {h.chunk_id for h in exact if round(h.score, 5) > last}


def test_search_through_the_ann_index_is_a_role_prefilter_with_the_exact_results(big_index):
    con, lance, emb, docs, rev = big_index
    allowed = {d.doc_id for d in docs if "analyst" in d.allowed_roles}
    queries = [docs[i].text.split(".")[0][:80] for i in range(0, 400, 23)]
    exact = {q: index_search.search(lance, con, q, emb.embed([q])[0], role="analyst", k=10, mode="vector", revision=rev)
             for q in queries}
    tuned = _tuned(lance, rev, ann_min_rows=100)
    assert index_search._open_pinned(lance, tuned["lance_table"], tuned["lance_version"]).vector_index
    for q in queries:
        v = emb.embed([q])[0]
        for mode in ("vector", "hybrid"):
            hits = index_search.search(lance, con, q, v, role="analyst", k=10, mode=mode, revision=tuned)
            assert hits and {h.doc_id for h in hits} <= allowed, (mode, q)   # never a finance-only row
        got = index_search.search(lance, con, q, v, role="analyst", k=10, mode="vector", revision=tuned)
        _same_up_to_ties(got, exact[q])
        fin = index_search.search(lance, con, q, v, role="finance_controller", k=10, mode="vector", revision=tuned)
        assert fin and all("finance_controller" in h["allowed_roles"] for h in fin)
    rq = _tuned(lance, rev, ann_min_rows=100, rq_min_rows=100)
    assert index_search._open_pinned(lance, rq["lance_table"], rq["lance_version"]).vector_index == "IvfRq"
    for q in queries:
        v = emb.embed([q])[0]
        got = index_search.search(lance, con, q, v, role="analyst", k=10, mode="vector", revision=rq)
        assert {h.doc_id for h in got} <= allowed
        _same_up_to_ties(got, exact[q])
    # An IVF_SQ index of an older build is still queried with its refine until it is re-trained.
    tbl = lancedb.connect(str(lance)).open_table(rev["lance_table"])
    tbl.create_index("vector", config=IvfSq(distance_type="cosine", num_partitions=2), replace=True,
                     name=index_tuning.VECTOR_INDEX)
    sq = {**rev, "lance_version": tbl.version, "revision_id": rev["revision_id"] + "-sq"}
    assert index_search._open_pinned(lance, sq["lance_table"], sq["lance_version"]).vector_index == "IvfSq"
    for q in queries:
        v = emb.embed([q])[0]
        _same_up_to_ties(index_search.search(lance, con, q, v, role="analyst", k=10, mode="vector", revision=sq),
                         exact[q])


def test_search_reads_wide_columns_for_the_final_hits_only_with_the_same_result(big_index):
    con, lance, emb, docs, rev = big_index
    q = docs[5].text[:60]
    v = emb.embed([q])[0]
    full = index_search.search(lance, con, q, v, role="analyst", k=10)                 # served, all columns
    pinned = index_search.search(lance, con, q, v, role="analyst", k=10, revision=rev)
    ids = index_search.search(lance, con, q, v, role="analyst", k=10, revision=rev, columns=("chunk_id", "doc_id"))
    assert [(h.chunk_id, h.rank, h.score) for h in full] == [(h.chunk_id, h.rank, h.score) for h in pinned] \
        == [(h.chunk_id, h.rank, h.score) for h in ids]
    assert [h.attrs for h in full] == [h.attrs for h in pinned]
    assert set(full[0].attrs) == set(index_search.RETURN_COLUMNS) and full[0]["text"]
    assert set(ids[0].attrs) == {"chunk_id", "doc_id"}
    by_chunk = {h.chunk_id: h for h in full}
    for h in ids:
        assert h.doc_id == by_chunk[h.chunk_id]["doc_id"]
    with pytest.raises(Exception):
        index_search.search(lance, con, q, v, role="analyst", k=10, columns=("vector",))


def test_a_pruned_version_is_never_read_from_a_cached_handle(big_index):
    con, lance, emb, docs, rev = big_index
    q = docs[1].text[:60]
    assert index_search.search(lance, con, q, emb.embed([q])[0], role="analyst", k=5, revision=rev)
    # A new revision (a document removed), then cleanup prunes every older version.
    index.publish(con, lance, docs[2:], emb, policy_revision="none", run_id="r2")
    index.cleanup(lance, dt.timedelta(0), con=con)
    with pytest.raises(index_search.IndexNotReady):
        index_search.search(lance, con, q, emb.embed([q])[0], role="analyst", k=5, revision=rev)
    served = index_search.search(lance, con, q, emb.embed([q])[0], role="analyst", k=5)
    assert served and all(h.doc_id != docs[0].doc_id for h in served)
