"""Uptimy's own MCP server at /mcp: add and read monitors from an assistant (the official SDK, mounted)."""
