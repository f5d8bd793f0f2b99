"""Configure Uptimy from the environment (django-environ); one module for every mode.

With no environment at all this is the embedded default: a SQLite file under var/, no
broker, every enabled region probed from this machine. DATABASE_URL and REDIS_URL switch
to PostgreSQL and Redis (Celery broker and cache).
"""

import contextlib
import sys
from pathlib import Path
from typing import Any, NotRequired, TypedDict

# django-environ ships no type hints (no py.typed) and no stubs package exists for it: its values
# are Any, so the settings the code reads are annotated where they are read from the environment.
import environ  # type: ignore[import-untyped]
from django.core.exceptions import ImproperlyConfigured

from probes.types import Status
from uptimy import local_secrets

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(environ.Env().str("UPTIMY_VAR_DIR", default=str(BASE_DIR / "var")))

env = environ.Env(
    DEBUG=(bool, False),
    ALLOWED_HOSTS=(list, ["localhost", "127.0.0.1", "[::1]"]),
    UPTIMY_ALLOW_PRIVATE_TARGETS=(bool, False),
)

DEBUG: bool = env("DEBUG")
ALLOWED_HOSTS: list[str] = env("ALLOWED_HOSTS")

# The embedded default (no DATABASE_URL: a SQLite file in VAR_DIR) keeps generated secrets next
# to its database (uptimy/local_secrets.py); with DATABASE_URL both must be set in the environment,
# since that database outlives this machine's var dir. No key is ever written in the source.
# `manage.py mcpcheck` needs neither: a key it lacks stays empty, so any use of one fails loudly
# (Django refuses an empty SECRET_KEY, monitors.secrets an empty UPTIMY_SECRETS_KEY).
EMBEDDED: bool = not env.str("DATABASE_URL", default="")
KEYLESS: bool = local_secrets.keyless_command(sys.argv)
LOCAL_SECRETS_FILE: Path | None = None
_secrets = {name: env.str(name, default="") for name in local_secrets.KEYS}
if EMBEDDED and not KEYLESS and not all(_secrets.values()):
    LOCAL_SECRETS_FILE = VAR_DIR / local_secrets.FILE_NAME
    try:
        _stored = local_secrets.local_secrets(VAR_DIR)
    except OSError as exc:
        raise ImproperlyConfigured(
            f"Set SECRET_KEY and UPTIMY_SECRETS_KEY, or let Uptimy write {LOCAL_SECRETS_FILE} ({exc})."
        ) from None
    _secrets = {name: value or _stored[name] for name, value in _secrets.items()}
for _name, _value in _secrets.items():
    if not _value and not KEYLESS:
        raise ImproperlyConfigured(
            f"Set {_name}: with DATABASE_URL the keys must come from the environment "
            "(the embedded default, without DATABASE_URL, generates them into its var dir)."
        )
SECRET_KEY: str = _secrets["SECRET_KEY"]
# Stored secrets (header values) are encrypted with this; a comma-separated list rotates keys:
# the first encrypts, every one decrypts.
UPTIMY_SECRETS_KEY: str = _secrets["UPTIMY_SECRETS_KEY"]
UPTIMY_ALLOW_PRIVATE_TARGETS: bool = env("UPTIMY_ALLOW_PRIVATE_TARGETS")
# DNS servers the checks ask ("192.0.2.53" or "192.0.2.53:5353", comma-separated); empty: the
# machine's resolv.conf. A region's workers may want resolvers of their own region.
UPTIMY_DNS_SERVERS: list[str] = env.list("UPTIMY_DNS_SERVERS", default=[])
# The domain check's RDAP bootstrap (IANA's registry of which RDAP service answers for which TLD):
# `manage.py refreshrdap` fetches it from this URL into this file, which workers read in place of
# the snapshot shipped in probes/data/.
UPTIMY_RDAP_BOOTSTRAP_URL = env.str(
    "UPTIMY_RDAP_BOOTSTRAP_URL", default="https://data.iana.org/rdap/dns.json"
)
UPTIMY_RDAP_BOOTSTRAP_FILE = Path(
    env.str("UPTIMY_RDAP_BOOTSTRAP_FILE", default=str(VAR_DIR / "rdap_dns.json"))
)

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "monitors",
    "alerts",
    "statuspages",
    "reports",
    "web",
    "oauth2_provider",
    "signin",
    "directory",
    "mcpserver",
]

MIDDLEWARE = [
    # First: it decides whether the Host is one we answer (a verified custom domain included)
    # before anything else asks for it.
    "statuspages.middleware.CustomDomainHosts",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "uptimy.middleware.QueryTextGuard",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # After the user is known: who is asking, for the audit log (monitors.audit).
    "monitors.middleware.AuditActorMiddleware",
    # A signed-in session's "last seen", for the account page's list of sessions (a write every 5 min at most).
    "web.middleware.SignInSessionSeen",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # The web app's Content-Security-Policy (CONTENT_SECURITY_POLICY below), on its pages only.
    "web.middleware.WebContentSecurityPolicy",
    # The public status pages' own (statuspages/policy.py): no script, their styles, the logo's origin.
    "statuspages.middleware.StatusPagePolicy",
]

ROOT_URLCONF = "uptimy.urls"
WSGI_APPLICATION = "uptimy.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'uptimy.sqlite3'}")}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL lets the web process read while a worker writes; IMMEDIATE takes the write lock
    # at BEGIN so two writers queue on busy_timeout instead of failing mid-transaction.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "transaction_mode": "IMMEDIATE",
            "timeout": 20,
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;",
        }
    )
else:
    DATABASES["default"].setdefault("CONN_MAX_AGE", env.int("CONN_MAX_AGE", default=60))
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
    if env.bool("UPTIMY_DB_POOL", default=False):
        # The web process (uptimy/asgi.py turns this on) runs each request on a thread of its
        # own, so it cannot keep a connection per thread; a pool hands each request a connection
        # already open instead of a new PostgreSQL backend (a fork and a login) every time.
        DB_POOL_SIZE = env.int("UPTIMY_DB_POOL_SIZE", default=10)
        if DB_POOL_SIZE < 1:
            raise ImproperlyConfigured(f"UPTIMY_DB_POOL_SIZE must be at least 1, not {DB_POOL_SIZE}")
        DATABASES["default"]["CONN_MAX_AGE"] = 0  # Django's pool replaces persistent connections
        DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
            "min_size": 1,
            "max_size": DB_POOL_SIZE,
            # A request waits this long for a connection when all are taken, then fails.
            "timeout": 20,
        }

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL: str = env.str("REDIS_URL", default="")
CACHES: dict[str, dict[str, Any]]
if REDIS_URL:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}}
else:
    # Files in the var dir, not process memory: the API's per-key rate limit (and anything else
    # cached) must be one count across gunicorn's worker processes.
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": str(VAR_DIR / "cache"),
            "OPTIONS": {"MAX_ENTRIES": 10_000},
        }
    }

# Celery: Redis when configured; otherwise no broker, and `manage.py serve` runs the
# scheduler and the probe worker in process.
CELERY_BROKER_URL = REDIS_URL or None
CELERY_RESULT_BACKEND = None
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_DEFAULT_QUEUE = "default"
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TIMEZONE = "UTC"
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ROUTES = {
    "monitors.dispatch_due": {"queue": "default"},
    "monitors.settle_verdicts": {"queue": "default"},
    "monitors.refresh_rollups": {"queue": "default"},
    "alerts.consume_outbox": {"queue": "default"},
    "alerts.send_reminders": {"queue": "default"},
    "alerts.send_deliveries": {"queue": "default"},
    "alerts.open_missing_incidents": {"queue": "default"},
    "statuspages.draft_incidents": {"queue": "default"},
    "statuspages.notify_subscribers": {"queue": "default"},
    "statuspages.tidy_subscribers": {"queue": "default"},
    "signin.clear_expired_tokens": {"queue": "default"},
}
# A message a dead worker held comes back after this long; keep it short (rechecks wait
# seconds, batches end within their checks' timeouts) so a killed worker delays, never loses.
# Workers look for such messages every unacked_restore_interval (10 s), but kombu's default
# throttle scans only every 10th time: without throttle 1 the message came back up to 100 s
# late (tests/e2e proves the bound).
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": env.int("UPTIMY_VISIBILITY_TIMEOUT", default=300),
    "unacked_restore_throttle": 1,
}
UPTIMY_TICK_SECONDS: float = env.float("UPTIMY_TICK_SECONDS", default=2.0)
# How often the heartbeat judge sweeps: a late heartbeat is declared down at most this long (plus
# the sweep's own time) after its grace ends. An idle sweep is two reads of partial indexes.
UPTIMY_HEARTBEAT_TICK_SECONDS: float = env.float("UPTIMY_HEARTBEAT_TICK_SECONDS", default=1.0)
# /metrics (uptimy/metrics.py): Prometheus sends this as a bearer token. Without one, only
# loopback clients are answered, so the endpoint is never open to the internet by default.
UPTIMY_METRICS_TOKEN: str = env.str("UPTIMY_METRICS_TOKEN", default="")


class BeatEntry(TypedDict):
    """One entry of the beat schedule, as written here; the embedded worker reads them too."""

    task: str
    schedule: float
    options: NotRequired[dict[str, str]]


CELERY_BEAT_SCHEDULE: dict[str, BeatEntry] = {
    "dispatch-due": {"task": "monitors.dispatch_due", "schedule": UPTIMY_TICK_SECONDS},
    "settle-verdicts": {"task": "monitors.settle_verdicts", "schedule": UPTIMY_TICK_SECONDS},
    # Heartbeats: pinged since last judged, or past their due-by (monitors.services.heartbeats).
    "judge-heartbeats": {"task": "monitors.judge_heartbeats", "schedule": UPTIMY_HEARTBEAT_TICK_SECONDS},
    "refresh-rollups": {"task": "monitors.refresh_rollups", "schedule": 60.0},
    "prune-results": {"task": "monitors.prune_results", "schedule": 3600.0, "options": {"queue": "default"}},
    "prune-audit-events": {
        "task": "monitors.prune_audit_events",
        "schedule": 3600.0,
        "options": {"queue": "default"},
    },
    # Alerts reads monitors' outbox itself; the embedded worker runs this entry too (it runs
    # every entry here), which is how monitors' worker drives alerts without importing it.
    "consume-alerts": {"task": "alerts.consume_outbox", "schedule": UPTIMY_TICK_SECONDS},
    "send-reminders": {"task": "alerts.send_reminders", "schedule": 30.0},
    "open-missing-incidents": {"task": "alerts.open_missing_incidents", "schedule": 60.0},
    # Every delivery due (new ones, and retries whose delay is up) goes out on the next round.
    "send-deliveries": {"task": "alerts.send_deliveries", "schedule": UPTIMY_TICK_SECONDS},
    # Status pages read the same outbox with a cursor of their own (drafted incidents), and send
    # their subscribers' notices from their own ledger.
    "draft-incidents": {"task": "statuspages.draft_incidents", "schedule": UPTIMY_TICK_SECONDS},
    "notify-subscribers": {"task": "statuspages.notify_subscribers", "schedule": UPTIMY_TICK_SECONDS},
    "tidy-subscribers": {"task": "statuspages.tidy_subscribers", "schedule": 3600.0},
    # Sign-in's spent tokens and codes (the toolkit's clear_expired): without it each refresh leaves rows behind.
    "clear-expired-tokens": {
        "task": "signin.clear_expired_tokens",
        "schedule": 3600.0,
        "options": {"queue": "default"},
    },
    # Hourly, not a crontab on the 1st: the task sends last month's report once per organization
    # (MonthlyReportSent), so a run on the 1st sends it and a process down that day catches up.
    "send-monthly-reports": {
        "task": "reports.send_monthly",
        "schedule": 3600.0,
        "options": {"queue": "default"},
    },
}

# The directory's import of the Official MCP Registry (directory/): where it is read from, how
# long one page may take, and whether the beat reads what changed every UPTIMY_MCP_REGISTRY_SYNC_SECONDS
# (and asks GitHub for the listed repositories' licences hourly). Off by default: `make run` would
# otherwise reach the public registry and GitHub from a developer's machine.
UPTIMY_MCP_REGISTRY_URL: str = env.str(
    "UPTIMY_MCP_REGISTRY_URL", default="https://registry.modelcontextprotocol.io"
)
UPTIMY_MCP_REGISTRY_TIMEOUT: float = env.float("UPTIMY_MCP_REGISTRY_TIMEOUT", default=30.0)
UPTIMY_MCP_REGISTRY_SYNC: bool = env.bool("UPTIMY_MCP_REGISTRY_SYNC", default=False)
UPTIMY_MCP_REGISTRY_SYNC_SECONDS: float = env.float("UPTIMY_MCP_REGISTRY_SYNC_SECONDS", default=3600.0)
if UPTIMY_MCP_REGISTRY_SYNC:
    CELERY_BEAT_SCHEDULE["sync-registry"] = {
        "task": "directory.sync_registry",
        "schedule": UPTIMY_MCP_REGISTRY_SYNC_SECONDS,
        "options": {"queue": "default"},
    }
    CELERY_BEAT_SCHEDULE["look-up-licences"] = {
        "task": "directory.look_up_licences",
        "schedule": 3600.0,
        "options": {"queue": "default"},
    }
# Directory probing (directory/probing.py): each visible, non-templated remote listing is probed
# by the MCP engine every UPTIMY_DIRECTORY_PROBE_INTERVAL seconds, at its own stable place in the
# interval; a round every UPTIMY_DIRECTORY_PROBE_TICK seconds claims at most UPTIMY_DIRECTORY_PROBE_BATCH
# due listings. At most UPTIMY_DIRECTORY_PROBES_PER_HOST probes of one host and
# UPTIMY_DIRECTORY_PROBES_IN_FLIGHT in all run at once, one round at a time across every worker
# (directory.sync.probe_round_lease: it lives one UPTIMY_DIRECTORY_PROBE_TICK, renewed while its round
# runs, so a dead holder's expires within a tick); a host's robots.txt is kept
# UPTIMY_DIRECTORY_ROBOTS_TTL seconds. In the beat with UPTIMY_DIRECTORY_PROBES or UPTIMY_MCP_REGISTRY_SYNC.
UPTIMY_DIRECTORY_PROBES: bool = env.bool("UPTIMY_DIRECTORY_PROBES", default=False)
UPTIMY_DIRECTORY_PROBE_INTERVAL: float = env.float("UPTIMY_DIRECTORY_PROBE_INTERVAL", default=1800.0)
UPTIMY_DIRECTORY_PROBE_TICK: float = env.float("UPTIMY_DIRECTORY_PROBE_TICK", default=60.0)
UPTIMY_DIRECTORY_PROBE_BATCH: int = env.int("UPTIMY_DIRECTORY_PROBE_BATCH", default=500)
UPTIMY_DIRECTORY_PROBE_TIMEOUT: float = env.float("UPTIMY_DIRECTORY_PROBE_TIMEOUT", default=10.0)
UPTIMY_DIRECTORY_PROBES_PER_HOST: int = env.int("UPTIMY_DIRECTORY_PROBES_PER_HOST", default=2)
UPTIMY_DIRECTORY_PROBES_IN_FLIGHT: int = env.int("UPTIMY_DIRECTORY_PROBES_IN_FLIGHT", default=8)
UPTIMY_DIRECTORY_ROBOTS_TTL: float = env.float("UPTIMY_DIRECTORY_ROBOTS_TTL", default=86400.0)
if UPTIMY_DIRECTORY_PROBES or UPTIMY_MCP_REGISTRY_SYNC:
    CELERY_BEAT_SCHEDULE["probe-listings"] = {
        "task": "directory.probe_listings",
        "schedule": UPTIMY_DIRECTORY_PROBE_TICK,
        "options": {"queue": "default"},
    }
# Scorecard check 12: customers' pricing pages, fetched to find their free-tier quote
# (monitors/services/listings.py). A round every UPTIMY_QUOTE_ROUND_SECONDS fetches at most
# UPTIMY_QUOTE_PAGES_PER_ROUND due pages, one at a time and one per host, each page at most daily,
# each fetch (robots.txt, redirects and the page) within UPTIMY_QUOTE_FETCH_TIMEOUT seconds.
UPTIMY_QUOTE_CHECKS: bool = env.bool("UPTIMY_QUOTE_CHECKS", default=True)
UPTIMY_QUOTE_ROUND_SECONDS: float = env.float("UPTIMY_QUOTE_ROUND_SECONDS", default=300.0)
UPTIMY_QUOTE_PAGES_PER_ROUND: int = env.int("UPTIMY_QUOTE_PAGES_PER_ROUND", default=10)
UPTIMY_QUOTE_FETCH_TIMEOUT: float = env.float("UPTIMY_QUOTE_FETCH_TIMEOUT", default=15.0)
if UPTIMY_QUOTE_CHECKS:
    CELERY_BEAT_SCHEDULE["verify-quotes"] = {
        "task": "monitors.verify_quotes",
        "schedule": UPTIMY_QUOTE_ROUND_SECONDS,
        "options": {"queue": "default"},
    }


# The directory's stored scorecards (directory.services.scorecards_recompute): recomputed every
# UPTIMY_DIRECTORY_SCORECARDS_SECONDS, whether the registry is synced or not (a demo import, or a
# listing growing older, changes them too).
UPTIMY_DIRECTORY_SCORECARDS_SECONDS: float = env.float("UPTIMY_DIRECTORY_SCORECARDS_SECONDS", default=1800.0)
CELERY_BEAT_SCHEDULE["recompute-scorecards"] = {
    "task": "directory.recompute_scorecards",
    "schedule": UPTIMY_DIRECTORY_SCORECARDS_SECONDS,
    "options": {"queue": "default"},
}
# GitHub's REST API, asked for the licence of each listed repository (scorecard check 22); a
# token (no scope needed) raises its limit from 60 to 5,000 requests an hour. Never logged.
UPTIMY_GITHUB_API_URL: str = env.str("UPTIMY_GITHUB_API_URL", default="https://api.github.com")
UPTIMY_GITHUB_TOKEN: str = env.str("UPTIMY_GITHUB_TOKEN", default="")

# Alerts (alerts.rules): more incidents than this opening (or resolving) in one organization
# within a minute go to each channel as one digest.
UPTIMY_ALERT_STORM_THRESHOLD: int = env.int("UPTIMY_ALERT_STORM_THRESHOLD", default=20)
# How long the acknowledge link in an alert works.
UPTIMY_ACK_LINK_HOURS: int = env.int("UPTIMY_ACK_LINK_HOURS", default=72)
# Mail (alert emails, channel-disabled notices): EMAIL_URL as django-environ reads it, e.g.
# smtp+tls://user:password@mail.example.com:587. The embedded default prints mails to the
# console instead, so `make run` shows them without a mail server; a server sets EMAIL_URL.
_EMAIL = env.email_url("EMAIL_URL", default="consolemail://" if EMBEDDED else "smtp://localhost:25")
vars().update({name: value for name, value in _EMAIL.items() if value is not None})
DEFAULT_FROM_EMAIL: str = env.str("UPTIMY_FROM_EMAIL", default="Uptimy <alerts@uptimy.example>")
SERVER_EMAIL: str = DEFAULT_FROM_EMAIL
# How long one delivery attempt may take (DNS, connect, send, the receiver's answer).
UPTIMY_ALERT_SEND_TIMEOUT: float = env.float("UPTIMY_ALERT_SEND_TIMEOUT", default=10.0)
# The delay after a delivery's first failed attempt; each later one doubles it, up to an hour
# (alerts.rules.retry_delay). Thirty seconds spares a receiver that is restarting.
UPTIMY_ALERT_RETRY_FIRST_SECONDS: float = env.float("UPTIMY_ALERT_RETRY_FIRST_SECONDS", default=30.0)
if UPTIMY_ALERT_RETRY_FIRST_SECONDS <= 0:
    raise ImproperlyConfigured(
        f"UPTIMY_ALERT_RETRY_FIRST_SECONDS must be a positive number of seconds, not {UPTIMY_ALERT_RETRY_FIRST_SECONDS}"
    )
# How long one status page notice may take to a subscriber (a webhook's whole attempt; SMTP's socket waits).
UPTIMY_NOTICE_SEND_TIMEOUT: float = env.float("UPTIMY_NOTICE_SEND_TIMEOUT", default=10.0)
# Where this server is reached, for the links in alerts.
# Without it, the address `make run` serves (its PORT), so the links work for a local try.
UPTIMY_PUBLIC_URL: str = env.str(
    "UPTIMY_PUBLIC_URL", default=f"http://127.0.0.1:{env.int('PORT', default=8000)}"
)

# Sign-in from an assistant (signin/): Uptimy is the OAuth 2.1 authorization server of its MCP
# server, through django-oauth-toolkit. Access tokens are short so a revoked membership or a
# demoted role stops an assistant soon; refresh tokens rotate on each use and last this long unused.
UPTIMY_OAUTH_ACCESS_TOKEN_SECONDS: int = env.int("UPTIMY_OAUTH_ACCESS_TOKEN_SECONDS", default=3600)
UPTIMY_OAUTH_REFRESH_TOKEN_SECONDS: int = env.int("UPTIMY_OAUTH_REFRESH_TOKEN_SECONDS", default=30 * 86400)
# Client registrations (RFC 7591) allowed per client address per hour: registration is open to
# anyone, as assistants register themselves before their user signs in.
UPTIMY_OAUTH_REGISTRATIONS_PER_HOUR: int = env.int("UPTIMY_OAUTH_REGISTRATIONS_PER_HOUR", default=20)
# Client ID Metadata Documents: an assistant whose client_id is an https URL publishes its metadata
# there, and Uptimy fetches it (through the address guard, UPTIMY_ALLOW_PRIVATE_TARGETS deciding).
# A PEM bundle of the certificate authorities to trust for that fetch instead of the default roots
# (a private CA, or the tests' own); empty: the default roots.
UPTIMY_OAUTH_CLIENT_METADATA_CA_FILE: str = env.str("UPTIMY_OAUTH_CLIENT_METADATA_CA_FILE", default="")
# The toolkit's own models, named here because migrations that point at them (signin's) resolve
# these settings by name.
OAUTH2_PROVIDER_APPLICATION_MODEL = "oauth2_provider.Application"
OAUTH2_PROVIDER_ACCESS_TOKEN_MODEL = "oauth2_provider.AccessToken"
OAUTH2_PROVIDER_REFRESH_TOKEN_MODEL = "oauth2_provider.RefreshToken"
OAUTH2_PROVIDER_GRANT_MODEL = "oauth2_provider.Grant"
OAUTH2_PROVIDER_ID_TOKEN_MODEL = "oauth2_provider.IDToken"
OAUTH2_PROVIDER = {
    "SCOPES": {
        "read": "See your organization's healthchecks, their results and incidents.",
        "write": "Add, pause and resume healthchecks in your organization.",
    },
    # A client that names no scope gets read: writing is asked for, never assumed.
    "DEFAULT_SCOPES": ["read"],
    "ACCESS_TOKEN_EXPIRE_SECONDS": UPTIMY_OAUTH_ACCESS_TOKEN_SECONDS,
    "REFRESH_TOKEN_EXPIRE_SECONDS": UPTIMY_OAUTH_REFRESH_TOKEN_SECONDS,
    "AUTHORIZATION_CODE_EXPIRE_SECONDS": 60,
    "ROTATE_REFRESH_TOKEN": True,
    # A refresh token used twice revokes its whole family: a stolen copy stops working for both.
    "REFRESH_TOKEN_REUSE_PROTECTION": True,
    "PKCE_REQUIRED": True,
    # S256 only: the server refuses "plain" (and a challenge without a method) at the authorize step.
    "OAUTH2_SERVER_CLASS": "signin.oauth.S256Server",
    "OAUTH2_VALIDATOR_CLASS": "signin.oauth.OrganizationValidator",
    # RFC 9700 (OAuth security BCP): no implicit or password grants, tokens hashed at rest,
    # no tokens in query strings, exact redirect URI matching.
    "COMPLIANT_BCP_RFC9700_IMPLICIT_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PASSWORD_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PKCE_METHOD": True,
    "COMPLIANT_BCP_RFC9700_ACCESS_TOKEN_TRANSPORT": True,
    "COMPLIANT_BCP_RFC9700_TOKEN_STORAGE": True,
    "COMPLIANT_BCP_RFC9700_REFRESH_TOKEN": True,
    "COMPLIANT_BCP_RFC9700_REDIRECT_URI_SCHEME": True,
    "COMPLIANT_BCP_RFC9700_REDIRECT_URI_MATCHING": True,
    "COMPLIANT_BCP_RFC9700_PKCE_REQUIRED": True,
}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# The web app (web/): its sign-in page, where a sign-in lands, where a sign-out goes.
LOGIN_URL = "web:login"
LOGIN_REDIRECT_URL = "web:dashboard"
LOGOUT_REDIRECT_URL = "web:login"
# Failed sign-ins allowed per client address (and per user name) within the window; then the
# sign-in form says how long to wait (web/throttle.py).
UPTIMY_LOGIN_ATTEMPTS: int = env.int("UPTIMY_LOGIN_ATTEMPTS", default=10)
UPTIMY_LOGIN_WINDOW_SECONDS: int = env.int("UPTIMY_LOGIN_WINDOW_SECONDS", default=900)
# Two-factor sign-in (web/two_factor.py): how long a correct password waits for its second
# factor (the session holds the user as pending, not signed in), and the issuer an authenticator
# app shows beside the account.
UPTIMY_TWO_FACTOR_PENDING_SECONDS: int = env.int("UPTIMY_TWO_FACTOR_PENDING_SECONDS", default=300)
UPTIMY_TWO_FACTOR_ISSUER: str = env.str("UPTIMY_TWO_FACTOR_ISSUER", default="Uptimy")
# django-csp 4: what the web app's pages may load. Everything from this origin only, no inline
# script or style (htmx is configured by a <meta> tag, its inline indicator styles off), SVG
# charts are inline markup, never data: scripts.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "connect-src": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
        "base-uri": ["'none'"],
        "object-src": ["'none'"],
    }
}

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = env.str("STATIC_ROOT", default=str(VAR_DIR / "static"))
# WhiteNoise warns on every request path when the folder is missing; an empty one is enough.
with contextlib.suppress(OSError):
    Path(STATIC_ROOT).mkdir(parents=True, exist_ok=True)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
# Serve admin and API-docs assets straight from the apps where they were not collected (make run
# has no collectstatic step, and runs without DEBUG); the image's collected files are the same.
WHITENOISE_USE_FINDERS = True
# Files a browser asks for at the site's root whatever page it shows (/favicon.ico, also on the
# status pages and the API docs); WhiteNoise serves them as it serves the static files.
WHITENOISE_ROOT = str(Path(__file__).resolve().parent / "root_files")

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["monitors.api.authentication.ApiKeyAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["monitors.api.permissions.HasApiKeyScope"],
    "DEFAULT_THROTTLE_CLASSES": ["monitors.api.throttling.ApiKeyRateThrottle"],
    "DEFAULT_THROTTLE_RATES": {
        "api_key": env.str("UPTIMY_API_RATE", default="600/min"),
        # The public directory's JSON (no key): per client address.
        "anonymous": env.str("UPTIMY_ANON_API_RATE", default="120/min"),
    },
    "DEFAULT_PAGINATION_CLASS": "monitors.api.pagination.Pagination",
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    # DRF's JSON parser, plus one check of every string and of the nesting (monitors/api/parsers.py).
    "DEFAULT_PARSER_CLASSES": ["monitors.api.parsers.CheckedJSONParser"],
    "EXCEPTION_HANDLER": "monitors.api.errors.exception_handler",
    "UNAUTHENTICATED_USER": None,
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Uptimy API",
    "DESCRIPTION": (
        "Uptime monitoring for MCP servers and the services around them. "
        "Authenticate with `Authorization: Bearer <API key>`."
    ),
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    "SERVE_AUTHENTICATION": [],
    "SERVE_PERMISSIONS": ["rest_framework.permissions.AllowAny"],
    # What a webhook channel receives: OpenAPI 3.1's top-level `webhooks`.
    "OAS_VERSION": "3.1.0",
    "WEBHOOKS": ["alerts.api.webhooks.ALERT_WEBHOOK"],
    # One enum per set of words, named: a published incident's status and its updates' share one.
    "ENUM_NAME_OVERRIDES": {
        "ChannelKindEnum": "alerts.models.Channel.Kind",
        "PublishedIncidentStatusEnum": "statuspages.models.PublishedIncident.Status",
        "HealthcheckStatusEnum": [status.value for status in Status],
    },
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    # Every path and URL a line carries (django.request's "Not Found: /path", django.server's
    # request lines) loses its one-time tokens and keys first (uptimy/redaction.py).
    "filters": {"redact_secret_urls": {"()": "uptimy.log_redaction.RedactSecretUrls"}},
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": "plain",
            "filters": ["redact_secret_urls"],
        }
    },
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    "loggers": {
        # Django's own default handlers (a console one under DEBUG, runserver's django.server) would
        # write beside the filtered console: its loggers write through the root's handler instead.
        "django": {"handlers": [], "level": "INFO", "propagate": True},
        "django.server": {"handlers": ["console"], "level": "INFO", "propagate": False},
        # httpx logs every request line at INFO, URLs with their query strings: keep it quiet.
        "httpx": {"level": "WARNING"},
        "httpcore": {"level": "WARNING"},
        # A report's PDF: WeasyPrint logs each layout step and fontTools every glyph it keeps, at INFO.
        "weasyprint": {"level": "WARNING"},
        "fontTools": {"level": "WARNING"},
        # Sign-in: the toolkit logs the redirect URL (with the authorization code) and oauthlib the
        # request bodies (with tokens and secrets) at DEBUG; they never reach a log.
        "oauth2_provider": {"level": "WARNING"},
        "oauthlib": {"level": "WARNING"},
        # The MCP SDK logs every stateless request's end at INFO ("Terminating session: None").
        "mcp": {"level": "WARNING"},
    },
}

if not DEBUG:
    SECURE_CONTENT_TYPE_NOSNIFF = True
    SESSION_COOKIE_SECURE = env.bool("SECURE_COOKIES", default=True)
    CSRF_COOKIE_SECURE = env.bool("SECURE_COOKIES", default=True)
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
