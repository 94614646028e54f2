"""Alerts to people: Slack-compatible JSON posted to an incoming-webhook URL.

The URL comes from the environment (`CANON_ALERT_WEBHOOK_URL`). No URL means
no post and no error. The URL's path is the secret of an incoming webhook, so
it is never logged or returned: `redact()` keeps scheme and host only.
Delivery problems never raise; the caller gets a `Delivery` to log.

Messages use Slack's `text` (fallback, also what Mattermost, Rocket.Chat and
most "Slack-compatible" receivers read) plus `blocks` for Slack itself.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any, Mapping
from urllib.parse import urlsplit

WEBHOOK_ENV = "CANON_ALERT_WEBHOOK_URL"
UI_URL_ENV = "CANON_UI_URL"
DEFAULT_UI_URL = "http://localhost:3000"
TIMEOUT_S = 5.0
_MAX_FIELD = 300


@dataclass(frozen=True)
class Delivery:
    sent: bool
    destination: str            # redacted: scheme://host[:port] or "not configured"
    status: int | None = None
    error: str | None = None

    def describe(self) -> str:
        if not self.sent and self.error is None:
            return f"alert not sent: {WEBHOOK_ENV} is not set"
        if self.sent:
            return f"alert posted to {self.destination} (HTTP {self.status})"
        return f"alert to {self.destination} failed: {self.error}"


def webhook_url(env: Mapping[str, str] | None = None) -> str | None:
    value = (env if env is not None else os.environ).get(WEBHOOK_ENV, "").strip()
    return value or None


def redact(url: str) -> str:
    """scheme://host[:port]/… — never the path or query, which carry the secret."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or "?"
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "<invalid url>"
    return f"{parts.scheme or '?'}://{host}{port}/…"


def ui_url(env: Mapping[str, str] | None = None) -> str:
    return ((env if env is not None else os.environ).get(UI_URL_ENV) or DEFAULT_UI_URL).rstrip("/")


def _clip(value: Any) -> str:
    s = str(value)
    return s if len(s) <= _MAX_FIELD else s[: _MAX_FIELD - 1] + "…"


def message(title: str, body: str, *, fields: Mapping[str, Any] | None = None, link: str | None = None,
            level: str = "error") -> dict[str, Any]:
    """A Slack-compatible payload: `text` for every receiver, `blocks` for Slack."""
    icon = {"error": ":red_circle:", "warning": ":large_yellow_circle:", "ok": ":large_green_circle:"}.get(level, "")
    fields = {k: v for k, v in (fields or {}).items() if v is not None and v != ""}
    lines = [f"{icon} *{title}*".strip(), body]
    lines += [f"• {k}: {_clip(v)}" for k, v in fields.items()]
    if link:
        lines.append(f"<{link}|Open in Dagster>")
    blocks: list[dict[str, Any]] = [
        {"type": "section", "text": {"type": "mrkdwn", "text": f"{icon} *{title}*\n{_clip(body)}".strip()}},
    ]
    if fields:
        blocks.append({"type": "section", "fields": [
            {"type": "mrkdwn", "text": f"*{k}*\n{_clip(v)}"} for k, v in list(fields.items())[:10]]})
    if link:
        blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": f"<{link}|Open in Dagster>"}]})
    return {"text": "\n".join(lines), "blocks": blocks}


def run_failure_message(*, job_name: str, run_id: str, error: str | None, base_url: str | None = None,
                        location: str | None = None) -> dict[str, Any]:
    link = f"{base_url or ui_url()}/runs/{run_id}"
    return message(f"Canon run failed: {job_name}", _clip(error or "the run failed (no error message)"),
                   fields={"run": run_id[:8], "job": job_name, "code location": location}, link=link)


def check_message(*, asset_key: str, check_name: str, passed: bool, severity: str, run_id: str | None,
                  description: str | None = None, metadata: Mapping[str, Any] | None = None,
                  base_url: str | None = None) -> dict[str, Any]:
    """A failed (or recovered) asset check evaluation."""
    base = base_url or ui_url()
    link = f"{base}/assets/{asset_key}?view=checks" if asset_key else None
    if passed:
        return message(f"Canon check recovered: {asset_key} · {check_name}", description or "The check passes again.",
                       fields={"run": run_id[:8] if run_id else None}, link=link, level="ok")
    level = "warning" if severity.upper() == "WARN" else "error"
    shown = {k: v for k, v in (metadata or {}).items() if isinstance(v, (str, int, float, bool))}
    return message(f"Canon check failed ({severity.upper()}): {asset_key} · {check_name}",
                   description or "The check failed; see its metadata in Dagster.",
                   fields={**dict(list(shown.items())[:8]), "run": run_id[:8] if run_id else None},
                   link=link, level=level)


def post(payload: Mapping[str, Any], *, url: str | None = None, timeout: float = TIMEOUT_S) -> Delivery:
    """POST `payload` as JSON to the webhook. Never raises."""
    target = url if url is not None else webhook_url()
    if not target:
        return Delivery(sent=False, destination="not configured")
    dest = redact(target)
    if urlsplit(target).scheme not in ("http", "https"):
        return Delivery(sent=False, destination=dest, error="the webhook URL must be http(s)")
    req = urllib.request.Request(target, data=json.dumps(payload).encode("utf-8"), method="POST",
                                 headers={"Content-Type": "application/json", "User-Agent": "canon-alerts"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 (http(s) only, checked above)
            return Delivery(sent=True, destination=dest, status=resp.status)
    except urllib.error.HTTPError as exc:
        return Delivery(sent=False, destination=dest, status=exc.code, error=f"HTTP {exc.code}")
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        # Exceptions can embed the URL; keep only the class and a URL-free reason.
        text = str(reason).replace(target, dest)
        return Delivery(sent=False, destination=dest, error=f"{type(exc).__name__}: {text}")
