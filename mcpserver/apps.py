from django.apps import AppConfig


class McpServerConfig(AppConfig):
    name = "mcpserver"
    verbose_name = "Uptimy's MCP server"
