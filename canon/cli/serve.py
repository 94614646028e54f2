"""`canon serve mcp | http`: the governed context server (docs/contracts.md, "Context server").

Exit codes as everywhere: 2 for bad input (no role, a missing or broken tokens
file); otherwise the server runs until it is stopped.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def _mcp(args: argparse.Namespace) -> int:
    from canon.serve import server  # deferred: loads the MCP SDK, which no other command needs
    from canon.serve.principals import stdio_principal

    server.run_stdio(args.role, stdio_principal(args.role))
    return 0


def _http(args: argparse.Namespace) -> int:
    from canon.serve import server  # deferred: loads the MCP SDK and uvicorn
    from canon.serve.principals import TokenTable

    server.run_http(args.host, args.port, TokenTable(Path(args.tokens)))
    return 0


def register(subparsers) -> None:
    sp = subparsers.add_parser("serve", help="the governed context server (MCP over stdio or HTTP)")
    transports = sp.add_subparsers(dest="transport", required=True)
    mcp = transports.add_parser("mcp", help="MCP over stdio, for one role fixed at launch")
    mcp.add_argument("--role", required=True)
    mcp.set_defaults(handler=_mcp)
    http = transports.add_parser("http", help="MCP over streamable HTTP; each request's role from its bearer token")
    http.add_argument("--host", default="127.0.0.1")
    http.add_argument("--port", type=int, required=True)
    http.add_argument("--tokens", required=True, help="YAML: tokens: [{sha256, principal, role}]")
    http.set_defaults(handler=_http)
