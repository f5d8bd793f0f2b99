"""The product text's uptimyctl file, exactly as it is printed there: the tests' shared starting point."""

PRODUCT_TEXT_FILE = """\
monitors:
  - name: Docs MCP
    type: mcp
    target: https://mcp.example.com/mcp
  - name: Docs MCP tools
    type: mcp
    target: https://mcp.example.com/mcp
    config:
      requiredTools: [search_docs, read_page]
      minTools: 2
      headers:
        Authorization: "Bearer ${DOCS_MCP_KEY}"
"""
