"""Alerts: Slack-compatible JSON to a webhook from the environment, tested
against a local HTTP server on 127.0.0.1. No URL: no post, no error; the
URL's secret path never appears in what is logged or returned."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import dagster as dg
import pytest

from canon.ops import alerts
from sensors.alert_sensors import canon_check_alert, canon_run_failure_alert

SECRET = "T000/B000/XXXXsecretXXXX"


class Receiver:
    def __init__(self, status: int = 200):
        self.bodies: list[dict] = []
        self.paths: list[str] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (http.server API)
                n = int(self.headers.get("Content-Length", 0))
                outer.bodies.append(json.loads(self.rfile.read(n)))
                outer.paths.append(self.path)
                self.send_response(status)
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/services/{SECRET}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture()
def receiver(monkeypatch):
    r = Receiver()
    monkeypatch.setenv(alerts.WEBHOOK_ENV, r.url)
    yield r
    r.close()


def test_no_url_means_no_post_and_no_error(monkeypatch):
    monkeypatch.delenv(alerts.WEBHOOK_ENV, raising=False)
    d = alerts.post(alerts.message("t", "b"))
    assert not d.sent and d.error is None and "not set" in d.describe()
    monkeypatch.setenv(alerts.WEBHOOK_ENV, "   ")
    assert not alerts.post({"text": "x"}).sent


def test_posts_slack_compatible_json(receiver):
    d = alerts.post(alerts.message("Title", "Body", fields={"run": "abc"}, link="http://ui/runs/1"))
    assert d.sent and d.status == 200
    body = receiver.bodies[0]
    assert receiver.paths == [f"/services/{SECRET}"]
    assert body["text"].startswith(":red_circle: *Title*") and "• run: abc" in body["text"]
    assert body["blocks"][0]["type"] == "section" and body["blocks"][0]["text"]["type"] == "mrkdwn"
    assert SECRET not in d.describe() and SECRET not in d.destination


def test_delivery_failures_never_raise_nor_leak_the_secret(monkeypatch):
    bad = Receiver(status=500)
    try:
        d = alerts.post({"text": "x"}, url=bad.url)
        assert not d.sent and d.status == 500
    finally:
        bad.close()
    closed = bad.url   # the server is gone: connection refused
    d = alerts.post({"text": "x"}, url=closed, timeout=2)
    assert not d.sent and d.error and SECRET not in d.describe()
    assert alerts.redact(closed) == f"http://127.0.0.1:{closed.split(':')[2].split('/')[0]}/…"
    assert not alerts.post({"text": "x"}, url="file:///etc/passwd").sent


# ------------------------------------------------------------ run failures

@dg.op
def explode():
    raise RuntimeError("the loader could not reach the warehouse")


@dg.job
def failing_job():
    explode()


def test_run_failure_sensor_posts_the_failed_run(receiver):
    with dg.instance_for_test() as instance:
        result = failing_job.execute_in_process(instance=instance, raise_on_error=False)
        assert not result.success
        run = instance.get_run_by_id(result.run_id)
        failure = [e for e in result.all_events if e.event_type_value == "PIPELINE_FAILURE"][0]
        ctx = dg.build_run_status_sensor_context(
            sensor_name="canon_run_failure_alert", dagster_event=failure, dagster_instance=instance,
            dagster_run=run).for_run_failure()
        canon_run_failure_alert(ctx)
    body = receiver.bodies[0]
    assert "Canon run failed: failing_job" in body["text"]
    assert "could not reach the warehouse" in body["text"]
    assert f"/runs/{result.run_id}" in body["text"]


# ------------------------------------------------------------ asset checks

STATE = {"ok": True}


@dg.asset
def watched():
    return 1


@dg.asset_check(asset=watched)
def stays_ok():
    return dg.AssetCheckResult(passed=STATE["ok"], severity=dg.AssetCheckSeverity.WARN,
                               description="3 registry revisions are not in the served index",
                               metadata={"unindexed_revisions": 3, "served_index_revision": "rev-000007"})


def test_check_alert_sensor_posts_failures_once_and_recoveries(receiver):
    defs = dg.Definitions(assets=[watched], asset_checks=[stays_ok], sensors=[canon_check_alert])
    job = defs.resolve_implicit_global_asset_job_def()
    with dg.instance_for_test() as instance:
        def run(ok):
            STATE["ok"] = ok
            assert job.execute_in_process(instance=instance).success

        def tick(cursor):
            data = canon_check_alert.evaluate_tick(
                dg.build_sensor_context(instance=instance, cursor=cursor, definitions=defs))
            return data.cursor, data.skip_message

        run(True)
        cursor, msg = tick(None)
        assert "baseline" in msg and receiver.bodies == []
        run(False)
        cursor, _ = tick(cursor)
        assert len(receiver.bodies) == 1
        text = receiver.bodies[0]["text"]
        assert "Canon check failed (WARN): watched · stays_ok" in text
        assert "3 registry revisions are not in the served index" in text
        assert "unindexed_revisions: 3" in text and "/assets/watched?view=checks" in text
        cursor, _ = tick(cursor)                     # the same execution is reported once
        assert len(receiver.bodies) == 1
        run(False)
        cursor, _ = tick(cursor)                     # a new failed execution is reported again
        assert len(receiver.bodies) == 2
        run(True)
        cursor, _ = tick(cursor)
        assert len(receiver.bodies) == 3 and "Canon check recovered" in receiver.bodies[2]["text"]
        run(True)
        tick(cursor)
        assert len(receiver.bodies) == 3             # passing after passing: quiet
