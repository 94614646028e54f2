"""`canon serve`: the governed context server (MCP over stdio and HTTP).

principals – who is asking: the launch role (stdio) or a bearer token's entry (HTTP)
state      – the warm ask context, rebuilt when the served index or the registry changes
tools      – the tools, over the production ask / resolve / lineage / policy code
server     – the MCP server (the SDK's MCPServer), the stdio and HTTP transports
"""
