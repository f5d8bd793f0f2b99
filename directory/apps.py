from django.apps import AppConfig


class DirectoryConfig(AppConfig):
    """The public directory of MCP servers: listings imported from the Official MCP Registry."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "directory"

    def ready(self) -> None:
        # Register the sync task in every process, the embedded worker's included: it runs each
        # beat entry by task name.
        from directory import tasks  # noqa: F401
        from directory.demo import demo_directory
        from directory.receivers import answer_licence
        from monitors.signals import demo_ready, licence_asked

        # Customers' own listings (monitors) read check 22's lookups, which the directory keeps.
        licence_asked.connect(answer_licence, dispatch_uid="directory.answer_licence")
        demo_ready.connect(demo_directory, dispatch_uid="directory.demo_directory")
