"""Headless-Chromium screenshots of the Dagster UI for the README and
docs/operations.md: the asset graph and the history of an index check.

Starts `dagster-webserver` on a free local port over $CANON_HOME (run
`make run` first so there is something to show) and a throwaway copy of its
Dagster instance ($DAGSTER_HOME, default $CANON_HOME/dagster), waits until
the code location has loaded, takes each screenshot, and stops the server.

Requires a Chromium binary (`chromium`, `chromium-browser` or
`google-chrome`, or $CHROMIUM); `make screenshots` installs Debian's chromium
when none is found.

Usage: .venv/bin/python scripts/screenshots.py [--out docs/img] [--port N]
"""

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
SHOTS = {
    # file name: (UI path, what it shows[, window height])
    "asset_graph.png": ("/assets/canon/eval_report?view=lineage&lineageScope=upstream&lineageDepth=12",
                        "the asset graph upstream of the eval gate: raw → dbt → artifacts → registry → index → eval"),
    "index_checks.png": ("/assets/canon/knowledge_index?view=checks",
                         "canon/knowledge_index's checks: freshness, revocation lag, coverage, lineage"),
    "revocation_lag_history.png": ("/assets/canon/knowledge_index?view=checks&checkDetail=revocation_lag",
                                   "the revocation_lag check: latest evaluation, metadata, and its lag over the "
                                   "evaluation history (plots)", 1750),
}
LOADED_QUERY = "{ workspaceOrError { ... on Workspace { locationEntries { name loadStatus } } } }"


def chromium_binary() -> str:
    for name in (os.environ.get("CHROMIUM"), "chromium", "chromium-browser", "google-chrome"):
        if name and shutil.which(name):
            return shutil.which(name)
    raise SystemExit("screenshots: no Chromium found. Install one (Debian: apt-get install -y chromium, which "
                     "`make screenshots` does) or set $CHROMIUM to its path.")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_loaded(port: int, proc: subprocess.Popen, timeout: float = 240) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"screenshots: dagster-webserver exited with {proc.returncode}")
        try:
            req = urllib.request.Request(f"http://127.0.0.1:{port}/graphql", method="POST",
                                         data=json.dumps({"query": LOADED_QUERY}).encode(),
                                         headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(req, timeout=30) as resp:
                entries = json.loads(resp.read())["data"]["workspaceOrError"]["locationEntries"]
            if entries and all(e["loadStatus"] == "LOADED" for e in entries):
                return
        except (urllib.error.URLError, ConnectionError, KeyError, TypeError, TimeoutError):
            pass
        time.sleep(2)
    raise SystemExit(f"screenshots: the code location did not load within {timeout:.0f} s")


def shoot(chromium: str, url: str, out: Path, *, size: str, budget_ms: int) -> None:
    cmd = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--hide-scrollbars", f"--window-size={size}", f"--virtual-time-budget={budget_ms}",
           f"--screenshot={out}", url]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    if done.returncode != 0 or not out.exists():
        raise SystemExit(f"screenshots: chromium failed for {url}:\n{done.stderr[-1500:]}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(ROOT / "docs" / "img"))
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--size", default="1600,1000")
    ap.add_argument("--budget-ms", type=int, default=20000, help="virtual time the page gets to render")
    ap.add_argument("--page", action="append", default=[], metavar="FILE=UI_PATH",
                    help="take these pages instead of the default set (e.g. a team configuration's "
                         "asset graph: team_asset_graph.png=/asset-groups)")
    args = ap.parse_args(argv)
    shots = SHOTS
    if args.page:
        shots = {f: (p, f"the page {p}") for f, _, p in (x.partition("=") for x in args.page)}
    chromium = chromium_binary()
    home = Path(os.environ.get("CANON_HOME", ROOT / "var")).resolve()
    dagster_home = Path(os.environ.get("DAGSTER_HOME", home / "dagster")).resolve()
    if not (home / "canon.duckdb").exists():
        raise SystemExit(f"screenshots: nothing to show in {home}; run `make run` first")
    # The webserver reads a throwaway copy of the instance: nothing of the user's is written, and the
    # first-visit "join the community" dialog is marked seen there only.
    tmp = Path(tempfile.mkdtemp(prefix="canon-shots-"))
    if dagster_home.exists():
        shutil.copytree(dagster_home, tmp / "dagster", ignore=shutil.ignore_patterns("*.lock"))
    else:
        (tmp / "dagster").mkdir()
    if not (tmp / "dagster" / "dagster.yaml").exists():   # the instance settings `make run` installs
        shutil.copyfile(ROOT / "dagster.yaml", tmp / "dagster" / "dagster.yaml")
    (tmp / "dagster" / ".nux").mkdir(exist_ok=True)
    (tmp / "dagster" / ".nux" / "nux.yaml").write_text("seen: 1\n")
    env = {**os.environ, "CANON_HOME": str(home), "DAGSTER_HOME": str(tmp / "dagster"), "DO_NOT_TRACK": "1",
           "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    port = args.port or free_port()
    proc = subprocess.Popen([str(BIN / "dagster-webserver"), "-w", str(ROOT / "workspace.yaml"),
                             "-h", "127.0.0.1", "-p", str(port)], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_loaded(port, proc)
        width, height = args.size.split(",")
        for name, (path, what, *tall) in shots.items():
            size = f"{width},{tall[0]}" if tall else args.size
            shoot(chromium, f"http://127.0.0.1:{port}{path}", out / name, size=size, budget_ms=args.budget_ms)
            print(f"{out / name}: {what}")
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
