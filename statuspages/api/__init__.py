"""The owners' REST API for status pages under /api/v1/status-pages/ (auth, errors and paging are monitors.api's)."""
