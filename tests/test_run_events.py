"""OpenLineage run events: real transports, a real HTTP receiver, a real materialization."""

import json
import logging
import socket
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import dagster as dg
import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # running from a checkout without `pip install -e .`
    sys.path.insert(0, str(ROOT))

from canon.core.errors import CanonInputError  # noqa: E402
from canon.run_lineage import (  # noqa: E402
    DatasetRef,
    LineageEmitter,
    TransportConfig,
    canon_table,
    dbt_relation,
    index_revision,
)
from resources.lineage_emitter import OpenLineageResource  # noqa: E402

TOKEN_ENV = "CANON_TEST_OPENLINEAGE_TOKEN"
TOKEN = "tok-9f2c7e51d4a8b3aa"


# --------------------------------------------------------------------------- fixtures


class LineageReceiver:
    """A tiny OpenLineage endpoint: records every POST (path, headers, JSON body)."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.status = 200
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length).decode("utf-8")
                receiver.requests.append(
                    {"path": self.path, "headers": dict(self.headers), "raw": raw, "body": json.loads(raw)}
                )
                self.send_response(receiver.status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def events(self) -> list[dict]:
        return [r["body"] for r in self.requests]

    def wait_for(self, n: int, timeout: float = 5.0) -> list[dict]:
        deadline = time.monotonic() + timeout
        while len(self.requests) < n and time.monotonic() < deadline:
            time.sleep(0.02)
        return self.events


@pytest.fixture
def receiver() -> Iterator[LineageReceiver]:
    r = LineageReceiver()
    r.thread.start()
    try:
        yield r
    finally:
        r.server.shutdown()
        r.server.server_close()


@pytest.fixture(autouse=True)
def canon_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("CANON_HOME", str(home))
    for var in list(__import__("os").environ):
        if var.startswith(("CANON_OPENLINEAGE_", "OPENLINEAGE")):
            monkeypatch.delenv(var)
    return home


def http_emitter(url: str, **kw: object) -> LineageEmitter:
    return LineageEmitter(TransportConfig(kind="http", url=url, **kw))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


ORDERS = dbt_relation('"warehouse"."main"."fct_orders"', fields=[("order_id", "INTEGER"), ("net_revenue", "DOUBLE")])
DOCS = canon_table("documents", fields=[("doc_id", "VARCHAR"), ("content_hash", "VARCHAR")])


# --------------------------------------------------------------------------- http


def test_successful_run_emits_start_then_complete(receiver: LineageReceiver) -> None:
    emitter = http_emitter(receiver.url)
    with emitter.run("canon.registry", inputs=[ORDERS], outputs=[DOCS]) as handle:
        pass

    events = receiver.wait_for(2)
    assert [e["eventType"] for e in events] == ["START", "COMPLETE"]
    assert {r["path"] for r in receiver.requests} == {"/api/v1/lineage"}
    assert receiver.requests[0]["headers"]["Content-Type"] == "application/json"
    start, complete = events
    assert start["run"]["runId"] == complete["run"]["runId"] == handle.run_id
    uuid.UUID(handle.run_id)
    for e in events:
        assert e["job"] == {**e["job"], "namespace": "canon", "name": "canon.registry"}
        assert e["schemaURL"].startswith("https://openlineage.io/spec/")
        assert e["producer"] == "https://github.com/canon/canon"
        assert "T" in e["eventTime"]
        assert [(d["namespace"], d["name"]) for d in e["inputs"]] == [("duckdb://warehouse.duckdb", "warehouse.main.fct_orders")]
        assert [(d["namespace"], d["name"]) for d in e["outputs"]] == [("canon", "canon.documents")]
        assert e["job"]["facets"]["jobType"]["processingType"] == "BATCH"
        assert "errorMessage" not in e["run"]["facets"]
    schema = complete["inputs"][0]["facets"]["schema"]
    assert [(f["name"], f["type"]) for f in schema["fields"]] == [("order_id", "INTEGER"), ("net_revenue", "DOUBLE")]
    assert schema["_schemaURL"].endswith("SchemaDatasetFacet.json#/$defs/SchemaDatasetFacet")
    assert schema["_producer"] == "https://github.com/canon/canon"
    assert emitter.emitted == 2 and emitter.failed == 0


def test_failing_body_emits_fail_with_error_message_and_reraises(receiver: LineageReceiver) -> None:
    emitter = http_emitter(receiver.url)
    with pytest.raises(ZeroDivisionError):
        with emitter.run("canon.chunk", inputs=[DOCS], outputs=[index_revision("r7")]):
            1 / 0  # noqa: B018

    events = receiver.wait_for(2)
    assert [e["eventType"] for e in events] == ["START", "FAIL"]
    assert events[0]["run"]["runId"] == events[1]["run"]["runId"]
    err = events[1]["run"]["facets"]["errorMessage"]
    assert err["message"] == "ZeroDivisionError: division by zero"
    assert err["programmingLanguage"] == "PYTHON"
    assert "Traceback" in err["stackTrace"] and "1 / 0" in err["stackTrace"]
    assert err["_schemaURL"].endswith("ErrorMessageRunFacet.json#/$defs/ErrorMessageRunFacet")


def test_long_stack_traces_are_trimmed(receiver: LineageReceiver) -> None:
    def recurse(n: int) -> None:
        if n == 0:
            raise ValueError("x" * 10_000)
        recurse(n - 1)

    with pytest.raises(ValueError):
        with http_emitter(receiver.url).run("canon.deep", inputs=[], outputs=[]):
            recurse(200)
    err = receiver.wait_for(2)[1]["run"]["facets"]["errorMessage"]
    assert len(err["message"]) < 2_200 and "characters trimmed" in err["message"]
    assert len(err["stackTrace"]) < 8_200 and err["stackTrace"].startswith("Traceback")


def test_body_adds_outputs_and_facets_before_complete(receiver: LineageReceiver) -> None:
    rev = index_revision("2026-11-20.abc")
    with http_emitter(receiver.url).run("canon.publish", inputs=[DOCS], outputs=[]) as handle:
        handle.add_output(rev)
        handle.set_output_statistics(row_count=42, dataset=rev)
    start, complete = receiver.wait_for(2)
    assert start["outputs"] == []
    out = complete["outputs"][0]
    assert (out["namespace"], out["name"]) == ("lancedb://canon", "chunks@2026-11-20.abc")
    assert out["outputFacets"]["outputStatistics"]["rowCount"] == 42


def test_column_lineage_facet(receiver: LineageReceiver) -> None:
    evidence = canon_table(
        "evidence",
        fields=[("doc_id", "VARCHAR")],
        column_lineage={"doc_id": [DOCS.column("doc_id", "IDENTITY")]},
    )
    with http_emitter(receiver.url).run("canon.evidence", inputs=[DOCS], outputs=[evidence]):
        pass
    facet = receiver.wait_for(2)[1]["outputs"][0]["facets"]["columnLineage"]
    (field,) = facet["fields"]["doc_id"]["inputFields"]
    assert (field["namespace"], field["name"], field["field"]) == ("canon", "canon.documents", "doc_id")
    assert field["transformations"] == [{"type": "DIRECT", "subtype": "IDENTITY"}]


def test_endpoint_down_never_fails_the_run(caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    emitter = http_emitter(f"http://127.0.0.1:{free_port()}", api_key_env=TOKEN_ENV, timeout_s=1)
    started = time.monotonic()
    with caplog.at_level(logging.WARNING):
        with emitter.run("canon.registry", inputs=[ORDERS], outputs=[DOCS]):
            ran = True
    assert ran and emitter.failed == 2 and emitter.emitted == 0
    assert time.monotonic() - started < 10
    warnings = [r.getMessage() for r in caplog.records if r.name == "canon.run_lineage"]
    assert len(warnings) == 2 and "not delivered" in warnings[0] and "START" in warnings[0]
    assert TOKEN not in caplog.text


def test_server_error_never_fails_the_run(receiver: LineageReceiver) -> None:
    receiver.status = 500
    emitter = http_emitter(receiver.url, retries=0)
    with emitter.run("canon.registry", inputs=[], outputs=[]):
        pass
    assert emitter.failed == 2


def test_api_key_is_sent_as_header_and_nowhere_else(
    receiver: LineageReceiver, canon_home: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    monkeypatch.setenv("CANON_OPENLINEAGE_TRANSPORT", "http")
    monkeypatch.setenv("CANON_OPENLINEAGE_URL", receiver.url)
    monkeypatch.setenv("CANON_OPENLINEAGE_API_KEY_ENV", TOKEN_ENV)
    # Even a client configured to copy the token variable into run facets must not leak it.
    monkeypatch.setenv("OPENLINEAGE__FACETS__ENVIRONMENT_VARIABLES", json.dumps([TOKEN_ENV]))
    emitter = LineageEmitter()
    assert TOKEN not in repr(emitter.config) and TOKEN not in repr(emitter._client.transport.config)
    with caplog.at_level(logging.DEBUG):
        with pytest.raises(RuntimeError):
            with emitter.run("canon.registry", inputs=[ORDERS], outputs=[DOCS]):
                raise RuntimeError(f"connect failed with token {TOKEN}")
        # the file transport with the same settings
        file_emitter = LineageEmitter(TransportConfig(kind="file", api_key_env=TOKEN_ENV))
        with pytest.raises(RuntimeError):
            with file_emitter.run("canon.registry", inputs=[ORDERS], outputs=[DOCS]):
                raise RuntimeError(f"connect failed with token {TOKEN}")

    receiver.wait_for(2)
    assert [r["body"]["eventType"] for r in receiver.requests] == ["START", "FAIL"]
    for r in receiver.requests:
        assert r["headers"]["Authorization"] == f"Bearer {TOKEN}"
        assert TOKEN not in r["raw"]
    assert "***" in receiver.events[1]["run"]["facets"]["errorMessage"]["message"]
    text = (canon_home / "openlineage" / "events.jsonl").read_text()
    assert len(text.splitlines()) == 2 and TOKEN not in text and "***" in text
    assert TOKEN not in caplog.text


def test_no_authorization_header_without_api_key(receiver: LineageReceiver) -> None:
    with http_emitter(receiver.url).run("canon.registry", inputs=[], outputs=[]):
        pass
    receiver.wait_for(2)
    assert all("Authorization" not in r["headers"] for r in receiver.requests)


# --------------------------------------------------------------------------- file / console / none


def test_file_transport_appends_jsonl_under_canon_home(canon_home: Path) -> None:
    emitter = LineageEmitter(TransportConfig())  # file is the default
    with emitter.run("canon.registry", inputs=[ORDERS], outputs=[DOCS]):
        pass
    with pytest.raises(KeyError):
        with emitter.run("canon.chunk", inputs=[DOCS], outputs=[]):
            raise KeyError("doc_id")

    path = canon_home / "openlineage" / "events.jsonl"
    lines = path.read_text().splitlines()
    events = [json.loads(line) for line in lines]
    assert [(e["job"]["name"], e["eventType"]) for e in events] == [
        ("canon.registry", "START"), ("canon.registry", "COMPLETE"),
        ("canon.chunk", "START"), ("canon.chunk", "FAIL"),
    ]
    assert list(path.parent.iterdir()) == [path]  # one file, not one per event


def test_file_path_relative_to_canon_home(canon_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CANON_OPENLINEAGE_PATH", "lineage/run-events.jsonl")
    emitter = LineageEmitter(TransportConfig.from_env())
    with emitter.run("canon.registry", inputs=[], outputs=[]):
        pass
    assert len((canon_home / "lineage" / "run-events.jsonl").read_text().splitlines()) == 2


def test_file_path_outside_canon_home_is_refused(canon_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    outside = tmp_path / "elsewhere" / "events.jsonl"
    with pytest.raises(CanonInputError, match="escapes its root"):
        TransportConfig(kind="file", path=outside)
    monkeypatch.setenv("CANON_OPENLINEAGE_PATH", "../escape.jsonl")
    with pytest.raises(CanonInputError, match="OpenLineage event file"):
        TransportConfig.from_env()
    # a symlink inside the home that points outside is an escape too
    (tmp_path / "elsewhere").mkdir()
    (canon_home / "link").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(CanonInputError):
        TransportConfig(kind="file", path=Path("link/events.jsonl"))
    assert not outside.exists()


def test_console_transport_prints_events(capsys: pytest.CaptureFixture[str]) -> None:
    with LineageEmitter(TransportConfig(kind="console")).run("canon.registry", inputs=[], outputs=[]):
        pass
    lines = capsys.readouterr().out.splitlines()
    assert [json.loads(line)["eventType"] for line in lines] == ["START", "COMPLETE"]


def test_none_transport_emits_nothing(canon_home: Path) -> None:
    emitter = LineageEmitter(TransportConfig(kind="none"))
    with emitter.run("canon.registry", inputs=[], outputs=[]):
        pass
    assert not (canon_home / "openlineage").exists()


def test_transport_config_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CANON_OPENLINEAGE_TRANSPORT", "HTTP")
    monkeypatch.setenv("CANON_OPENLINEAGE_URL", "http://lineage.local:5000")
    monkeypatch.setenv("CANON_OPENLINEAGE_TIMEOUT_S", "2.5")
    cfg = TransportConfig.from_env()
    assert (cfg.kind, cfg.url, cfg.endpoint, cfg.timeout_s) == ("http", "http://lineage.local:5000", "api/v1/lineage", 2.5)
    assert TransportConfig.from_env(kind="none").kind == "none"  # explicit settings win

    monkeypatch.delenv("CANON_OPENLINEAGE_URL")
    with pytest.raises(CanonInputError, match="needs a url"):
        TransportConfig.from_env()
    monkeypatch.setenv("CANON_OPENLINEAGE_URL", "http://user:secret@lineage.local")
    with pytest.raises(CanonInputError, match=r"\[CANON_OPENLINEAGE_URL\].*credentials") as exc:
        TransportConfig.from_env()
    assert "secret" not in str(exc.value).replace("must not carry credentials", "")
    monkeypatch.setenv("CANON_OPENLINEAGE_URL", "http://lineage.local")
    monkeypatch.setenv("CANON_OPENLINEAGE_API_KEY_ENV", "Bearer abc.def")  # a token pasted in by mistake
    with pytest.raises(CanonInputError, match="CANON_OPENLINEAGE_API_KEY_ENV") as exc:
        TransportConfig.from_env()
    assert "abc.def" not in str(exc.value)
    monkeypatch.setenv("CANON_OPENLINEAGE_TRANSPORT", "kafka")
    with pytest.raises(CanonInputError, match="CANON_OPENLINEAGE_TRANSPORT"):
        TransportConfig.from_env()


def test_dataset_naming_helpers(monkeypatch: pytest.MonkeyPatch) -> None:
    assert dbt_relation('"warehouse"."main"."stg_orders"').key == ("duckdb://warehouse.duckdb", "warehouse.main.stg_orders")
    assert dbt_relation("warehouse.main.stg_orders").key == ("duckdb://warehouse.duckdb", "warehouse.main.stg_orders")
    assert dbt_relation("main.stg_orders").key == ("duckdb://warehouse.duckdb", "warehouse.main.stg_orders")
    assert dbt_relation('"raw"."odd.schema"."t"').name == "raw.odd.schema.t"
    monkeypatch.setenv("CANON_HOME", "/somewhere/else")  # the namespace does not follow the home
    assert dbt_relation("a.b.c").namespace == "duckdb://warehouse.duckdb"
    with pytest.raises(ValueError):
        dbt_relation("just_a_table")
    assert canon_table("documents").key == ("canon", "canon.documents")
    assert canon_table("canon.documents").key == ("canon", "canon.documents")
    assert index_revision("r42").key == ("lancedb://canon", "chunks@r42")
    ref = DatasetRef("ns", "n", fields=["a", ("b", "INT")])
    assert ref.fields == (("a", None), ("b", "INT"))


def test_explicit_run_id_must_be_a_uuid(receiver: LineageReceiver) -> None:
    emitter = http_emitter(receiver.url)
    rid = str(uuid.uuid4())
    with emitter.run("canon.registry", inputs=[], outputs=[], run_id=rid) as handle:
        assert handle.run_id == rid
    with pytest.raises(ValueError, match="UUID"):
        with emitter.run("canon.registry", inputs=[], outputs=[], run_id="not-a-uuid"):
            pass
    assert [e["run"]["runId"] for e in receiver.wait_for(2)] == [rid, rid]


def test_an_event_that_cannot_be_built_does_not_fail_the_run(receiver: LineageReceiver) -> None:
    from canon.run_lineage import ParentRun

    emitter = http_emitter(receiver.url)
    with emitter.run("canon.registry", parent=ParentRun("dagster", "job", "not-a-uuid")):
        ran = True
    assert ran and emitter.failed == 2 and receiver.events == []


# --------------------------------------------------------------------------- dagster


def test_events_from_a_real_materialization(receiver: LineageReceiver) -> None:
    @dg.asset
    def lineage_demo(context: dg.AssetExecutionContext, lineage: OpenLineageResource) -> int:
        with lineage.asset_run(context, inputs=[ORDERS], outputs=[DOCS]) as run:
            run.set_output_statistics(row_count=3)
            return 3

    @dg.asset
    def lineage_broken(context: dg.AssetExecutionContext, lineage: OpenLineageResource) -> None:
        with lineage.asset_run(context, inputs=[DOCS], outputs=[]):
            raise RuntimeError("index publish failed")

    resource = OpenLineageResource(transport="http", url=receiver.url)

    ok = dg.materialize([lineage_demo], resources={"lineage": resource})
    assert ok.success
    start, complete = receiver.wait_for(2)
    assert [start["eventType"], complete["eventType"]] == ["START", "COMPLETE"]
    assert complete["job"]["name"] == "lineage_demo"
    assert complete["job"]["facets"]["jobType"]["integration"] == "DAGSTER"
    assert complete["run"]["facets"]["parent"]["run"]["runId"] == ok.run_id
    assert complete["outputs"][0]["outputFacets"]["outputStatistics"]["rowCount"] == 3

    receiver.requests.clear()
    failed = dg.materialize([lineage_broken], resources={"lineage": resource}, raise_on_error=False)
    assert not failed.success
    start, fail = receiver.wait_for(2)
    assert [start["eventType"], fail["eventType"]] == ["START", "FAIL"]
    assert fail["job"]["name"] == "lineage_broken"
    assert fail["run"]["facets"]["errorMessage"]["message"] == "RuntimeError: index publish failed"
    assert start["run"]["runId"] == fail["run"]["runId"] != complete["run"]["runId"]


def test_resource_falls_back_to_environment(receiver: LineageReceiver, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CANON_OPENLINEAGE_TRANSPORT", "http")
    monkeypatch.setenv("CANON_OPENLINEAGE_URL", receiver.url)
    emitter = OpenLineageResource().get_emitter()
    assert emitter.config.kind == "http" and emitter.namespace == "canon"
    with emitter.run("canon.registry", inputs=[], outputs=[]):
        pass
    assert len(receiver.wait_for(2)) == 2


# ------------------------------------------------------------ credentials never in a URL (issue 18, item 11)


@pytest.mark.parametrize("url", [
    "http://lineage.local:5000/?api_key=s3cr3t-q-value",
    "http://lineage.local:5000/api?token=s3cr3t-q-value&x=1",
    "https://lineage.local/#access_token=s3cr3t-q-value",
    "http://:s3cr3t-q-value@lineage.local",
])
def test_credentials_anywhere_in_the_url_are_refused_without_echoing_them(
        monkeypatch: pytest.MonkeyPatch, url: str) -> None:
    monkeypatch.setenv("CANON_OPENLINEAGE_TRANSPORT", "http")
    monkeypatch.setenv("CANON_OPENLINEAGE_URL", url)
    with pytest.raises(CanonInputError, match=r"\[CANON_OPENLINEAGE_URL\]") as exc:
        TransportConfig.from_env()
    assert "s3cr3t-q-value" not in str(exc.value)
    monkeypatch.setenv("CANON_OPENLINEAGE_URL", "http://lineage.local:5000")
    monkeypatch.setenv("CANON_OPENLINEAGE_ENDPOINT", "api/v1/lineage?api_key=s3cr3t-q-value")
    with pytest.raises(CanonInputError, match=r"\[CANON_OPENLINEAGE_ENDPOINT\].*query string") as exc:
        TransportConfig.from_env()
    assert "s3cr3t-q-value" not in str(exc.value)


def test_a_token_pasted_as_the_key_variable_name_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CANON_OPENLINEAGE_TRANSPORT", "http")
    monkeypatch.setenv("CANON_OPENLINEAGE_URL", "http://lineage.local:5000")
    # A token that happens to look like a variable name: valid as a name, but no such variable is set.
    pasted = "ghp_9f2c7e51d4a8b3aa0c6e"
    monkeypatch.delenv(pasted, raising=False)
    monkeypatch.setenv("CANON_OPENLINEAGE_API_KEY_ENV", pasted)
    with pytest.raises(CanonInputError, match=r"\[CANON_OPENLINEAGE_API_KEY_ENV\].*not set") as exc:
        TransportConfig.from_env()
    assert pasted not in str(exc.value)
    monkeypatch.setenv(TOKEN_ENV, "")  # set but empty sends unauthenticated just the same
    monkeypatch.setenv("CANON_OPENLINEAGE_API_KEY_ENV", TOKEN_ENV)
    with pytest.raises(CanonInputError, match="not set"):
        TransportConfig.from_env()
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    assert TransportConfig.from_env().api_key_env == TOKEN_ENV


def test_urls_are_redacted_in_logs(caplog: pytest.LogCaptureFixture) -> None:
    from canon.run_lineage.transport import redact_url

    assert redact_url("https://user:pw@lineage.local:8443/api/v1/lineage?api_key=s3cr3t#frag") == \
        "https://lineage.local:8443/api/v1/lineage"
    emitter = http_emitter(f"http://127.0.0.1:{free_port()}", timeout_s=1, retries=0)
    assert "?" not in emitter.config.target()
    # Error text from the HTTP client quotes URLs: what reaches the log keeps scheme, host and path only.
    text = emitter.redact("ConnectionError: http://u:s3cr3t@127.0.0.1:1/api/v1/lineage?api_key=s3cr3t failed")
    assert "s3cr3t" not in text and "http://127.0.0.1:1/api/v1/lineage" in text
