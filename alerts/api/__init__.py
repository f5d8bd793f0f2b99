"""The alerts app's REST API under /api/v1/, built on monitors.api's auth, pages and error shape."""
