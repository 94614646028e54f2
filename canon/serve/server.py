"""The context server: Canon's tools over MCP (the SDK's `MCPServer`), over
stdio or streamable HTTP (docs/contracts.md, "Context server").

The principal is fixed by the server, never by a tool argument: over stdio it
is the role given at launch; over HTTP it is looked up, on every request, from
the request's bearer token in the server-side tokens file. Requests without a
known token get HTTP 401 before the MCP layer sees them.

Tool results are structured: `structured_content` is the JSON `canon ask`
prints (`Response.to_json_dict()`) or a bounded page of such items; an input
error is a result with `is_error` set and the message (naming only what the
caller sent). Unexpected failures are reported by exception class only: an
exception's text could quote registry content.
"""

from __future__ import annotations

import json
import logging
import sys
from typing import Annotated, Any, Callable

import uvicorn
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field
from starlette.responses import JSONResponse

from canon.ask.understanding.parse import MAX_QUESTION_CHARS
from canon.core.errors import CanonInputError
from canon.serve import tools
from canon.serve.principals import Principal, TokenTable
from canon.serve.state import ServedState

MAX_HTTP_BODY_BYTES = 1024 * 1024
log = logging.getLogger("canon.serve")

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=False,
                            open_world_hint=False)

# Argument bounds, in the tools' input schemas. A question may be up to twice the ask
# limit here so that a long one reaches `check_question` and comes back as Canon's own
# input error (docs/contracts.md, "Question length"), not as a schema rejection.
Question = Annotated[str, Field(max_length=2 * MAX_QUESTION_CHARS, description="the question, in words")]
AsOf = Annotated[str | None, Field(max_length=40, description="reporting date, YYYY-MM-DD")]
ObjectId = Annotated[str, Field(min_length=1, max_length=tools.MAX_ID_CHARS, description="a governed object id")]
Limit = Annotated[int | None, Field(ge=1, description=f"page size, at most {tools.MAX_LIMIT}")]
Cursor = Annotated[str | None, Field(max_length=400, description="next_cursor of the previous page")]
Short = Annotated[str | None, Field(max_length=tools.MAX_ID_CHARS)]

PrincipalOf = Callable[[Context], Principal | None]


def _result(data: dict[str, Any]) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=json.dumps(data, default=str))],
                          structured_content=data)


def _error(message: str, kind: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=message)],
                          structured_content={"error": {"kind": kind, "message": message}}, is_error=True)


def build_server(state: ServedState, principal_of: PrincipalOf) -> MCPServer:
    server = MCPServer(
        "canon", version="1",
        instructions="Governed answers over analytical documentation: which definition applies for a date, "
                     "which sources support it, and whether you may see it. Your role is fixed by the server.",
        log_level="WARNING")

    def call(ctx: Context, fn: Callable[..., dict[str, Any]], *args: Any) -> CallToolResult:
        principal = principal_of(ctx)
        if principal is None:   # an HTTP request whose token was removed between auth and the call
            return _error("not authorized: unknown token", "unauthorized")
        try:
            with state.session() as s:
                return _result(fn(s, principal, *args))
        except CanonInputError as exc:
            return _error(f"canon: error: {exc}", "input")
        except Exception as exc:  # noqa: BLE001 — the class only: the text may quote registry content
            log.error("tool %s failed: %s", fn.__name__, type(exc).__name__)
            return _error(f"canon: internal error ({type(exc).__name__}); the server log has the details",
                          "internal")

    @server.tool(annotations=READ_ONLY, description="A governed answer with cited evidence (the JSON of `canon ask`); "
                 "a clarify lists its options.")
    def ask(question: Question, ctx: Context, as_of: AsOf = None) -> CallToolResult:
        return call(ctx, tools.ask, question, as_of)

    @server.tool(annotations=READ_ONLY, description="The governing revision of an object for a date (`canon resolve`).")
    def resolve(object_id: ObjectId, ctx: Context, as_of: AsOf = None) -> CallToolResult:
        return call(ctx, tools.resolve, object_id, as_of)

    @server.tool(annotations=READ_ONLY, description="The implementing dbt model and its upstream raw sources "
                 "(`canon lineage`), cut to `depth` hops and `limit` nodes.")
    def lineage(object_id: ObjectId, ctx: Context, as_of: AsOf = None,
                depth: Annotated[int | None, Field(ge=1, le=tools.MAX_LINEAGE_DEPTH)] = None,
                limit: Annotated[int | None, Field(ge=1, le=tools.MAX_LINEAGE_NODES)] = None) -> CallToolResult:
        return call(ctx, tools.lineage, object_id, as_of, depth, limit)

    @server.tool(annotations=READ_ONLY, description="Objects you may see whose id or title matches the query.")
    def search_objects(query: Annotated[str, Field(min_length=1, max_length=tools.MAX_QUERY_CHARS)], ctx: Context,
                       kind: Short = None, limit: Limit = None, cursor: Cursor = None) -> CallToolResult:
        return call(ctx, tools.search_objects, query, kind, limit, cursor)

    @server.tool(annotations=READ_ONLY, description="Source freshness against SLAs from the newest snapshot you may "
                 "see, per object family; optionally for one raw source.")
    def freshness(ctx: Context, source: Short = None, limit: Limit = None, cursor: Cursor = None) -> CallToolResult:
        return call(ctx, tools.freshness, source, limit, cursor)

    @server.tool(annotations=READ_ONLY, description="The governed metrics you may see, with their revisions.")
    def list_metrics(ctx: Context, limit: Limit = None, cursor: Cursor = None) -> CallToolResult:
        return call(ctx, tools.list_metrics, limit, cursor)

    @server.tool(annotations=READ_ONLY, description="The answer-log record of one of your own answers.")
    def explain_answer(answer_id: Annotated[str, Field(min_length=1, max_length=64)], ctx: Context) -> CallToolResult:
        return call(ctx, tools.explain_answer, answer_id)

    return server


# ---------------------------------------------------------------- stdio


def run_stdio(role: str, principal: Principal, state: ServedState | None = None) -> None:
    state = state or ServedState()
    server = build_server(state, lambda _ctx: principal)
    print(f"canon serve mcp: serving role {role} over stdio", file=sys.stderr)
    try:
        server.run("stdio")
    finally:
        state.close()   # the held registry snapshot (canon/serve/state.py)


# ---------------------------------------------------------------- HTTP


def _request_principal(table: TokenTable) -> PrincipalOf:
    def principal_of(ctx: Context) -> Principal | None:
        request = ctx.request_context.request
        headers = getattr(request, "headers", None)
        return None if headers is None else table.lookup(headers.get("authorization"))
    return principal_of


class BearerAuth:
    """ASGI wrapper: every HTTP request needs a bearer token the tokens file
    knows, else 401 before any MCP processing. The token is never logged."""

    def __init__(self, app, table: TokenTable):
        self.app, self.table = app, table

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        header = next((v.decode("latin-1") for k, v in scope.get("headers", []) if k == b"authorization"), None)
        try:
            principal = self.table.lookup(header)
        except CanonInputError as exc:   # the tokens file broke while serving: refuse, say why server-side
            log.error("tokens file unreadable: %s", exc)
            principal = None
        if principal is None:
            why = "missing bearer token" if not header else "unknown token"
            resp = JSONResponse({"error": "unauthorized", "error_description": why}, status_code=401,
                                headers={"WWW-Authenticate": 'Bearer realm="canon"'})
            await resp(scope, receive, send)
            return
        await self.app(scope, receive, send)


def http_app(table: TokenTable, state: ServedState | None = None, host: str = "127.0.0.1"):
    server = build_server(state or ServedState(), _request_principal(table))
    # Stateless: every request is authenticated and answered on its own; no session carries a principal.
    app = server.streamable_http_app(stateless_http=True, json_response=True,
                                     max_request_body_size=MAX_HTTP_BODY_BYTES, host=host)
    return BearerAuth(app, table)


def run_http(host: str, port: int, table: TokenTable, state: ServedState | None = None) -> None:
    state = state or ServedState()
    print(f"canon serve http: listening on http://{host}:{port}/mcp", file=sys.stderr)
    try:
        # access_log off: request lines are not needed and would be one more place to audit.
        uvicorn.run(http_app(table, state, host), host=host, port=port, log_level="warning", access_log=False)
    finally:
        state.close()   # the held registry snapshot (canon/serve/state.py)
