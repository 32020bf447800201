"""Settings for Agents UI, read from the environment in this one place.

Every knob is an environment variable with a development default. With DEBUG off (the default
outside `make run`/tests), a SECRET_KEY must be given and the secure-deployment settings apply, so
`DEBUG=false SECRET_KEY=... manage.py check --deploy` is clean.
"""

import ipaddress
import os
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from django.utils.csp import CSP

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: list[str]) -> list[str]:
    value = os.environ.get(name)
    if not value:
        return default
    return [item.strip() for item in value.split(",") if item.strip()]


def cache_from_url(url: str) -> dict:
    """`locmem://` (default) or `redis://host:port/db` / `rediss://...` into a CACHES entry."""
    if url.startswith(("redis://", "rediss://", "unix://")):
        return {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": url}
    if url.startswith("locmem://") or not url:
        return {
            "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
            "LOCATION": url[9:] or "agents-ui",
        }
    if url.startswith("dummy://"):
        return {"BACKEND": "django.core.cache.backends.dummy.DummyCache"}
    raise ImproperlyConfigured(f"CACHE_URL {url!r}: use locmem://, redis:// or rediss://")


# --- Core -----------------------------------------------------------------------------------------
DEBUG = env_bool("DEBUG", False)
SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off.")
    SECRET_KEY = "django-insecure-development-only-key-do-not-use-in-production"
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]"] if DEBUG else [])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_htmx",
    "agents_ui",
]

MIDDLEWARE = [
    # /healthz, /readyz and /metrics, answered before the host check, HTTPS redirect and sessions.
    "agents_ui.monitoring.middleware.operations_middleware",
    "django.middleware.security.SecurityMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # The person read with the middleware above, in its trip to the request's thread.
    "agents_ui.sign_in.SignedInPerson",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "project.urls"
ASGI_APPLICATION = "project.asgi.application"
WSGI_APPLICATION = "project.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.csp",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "agents_ui.views.inbox.header_count",
            ],
        },
    },
]

# --- Data -----------------------------------------------------------------------------------------
DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL", f"sqlite:///{BASE_DIR / 'db.sqlite3'}"),
        conn_max_age=0,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Django's SQLite, with the process's writers queueing on a lock rather than in SQLite's busy
    # handler (project/sqlite/base.py).
    DATABASES["default"]["ENGINE"] = "project.sqlite"
    # A request's thread is kept for the next request (project/asgi.RequestThreads), and its
    # connection with it: SQLite's prepared statements stay, and no file is opened per request.
    DATABASES["default"]["CONN_MAX_AGE"] = None
    # WAL lets streaming writers and page readers work at once; a busy timeout instead of
    # "database is locked" under concurrent runs.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {"timeout": 20, "transaction_mode": "IMMEDIATE", "init_command": "PRAGMA journal_mode=WAL;"}
    )
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

CACHES = {
    "default": cache_from_url(os.environ.get("CACHE_URL") or os.environ.get("REDIS_URL") or "locmem://")
}

# --- Auth -----------------------------------------------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
# Failed sign-ins allowed per account and per client address within the window (seconds), after
# which sign-ins for that account or from that address wait for the lock (seconds): agents_ui/sign_in.py.
AGENTS_UI_SIGN_IN_FAILURES_PER_ACCOUNT = int(os.environ.get("AGENTS_UI_SIGN_IN_FAILURES_PER_ACCOUNT", "5"))
AGENTS_UI_SIGN_IN_FAILURES_PER_ADDRESS = int(os.environ.get("AGENTS_UI_SIGN_IN_FAILURES_PER_ADDRESS", "20"))
AGENTS_UI_SIGN_IN_WINDOW = int(os.environ.get("AGENTS_UI_SIGN_IN_WINDOW", str(15 * 60)))
AGENTS_UI_SIGN_IN_LOCK = int(os.environ.get("AGENTS_UI_SIGN_IN_LOCK", str(15 * 60)))
LOGIN_REDIRECT_URL = "catalogue"
LOGOUT_REDIRECT_URL = "login"

# --- Internationalisation -------------------------------------------------------------------------
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

# --- Static files ---------------------------------------------------------------------------------
# Served by the ASGI application itself (project/asgi.py), so one uvicorn process is the whole product.
STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"
MEDIA_ROOT = Path(os.environ.get("MEDIA_ROOT", BASE_DIR / "media"))

# --- Security -------------------------------------------------------------------------------------
# A strict policy: scripts only from this origin with the per-request nonce (htmx and its SSE
# extension are static files), no inline styles (htmx's indicator styles are in our CSS).
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF, CSP.NONCE],
    "style-src": [CSP.SELF],
    "img-src": [CSP.SELF, "data:"],
    # A recorded voice note is played back from memory before it is sent.
    "media-src": [CSP.SELF, "blob:", "data:"],
    "connect-src": [CSP.SELF],
    "font-src": [CSP.SELF],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.SELF],
    "form-action": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
}
X_FRAME_OPTIONS = "DENY"
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CONTENT_TYPE_NOSNIFF = True
# Django's database sessions and ModelBackend, with their reads on every request prepared
# (agents_ui/sessions.py).
SESSION_ENGINE = "agents_ui.sessions"
AUTHENTICATION_BACKENDS = ["agents_ui.sessions.PersonBackend"]
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
# No script reads the CSRF cookie: htmx sends the token from the page (hx-headers in base.html).
CSRF_COOKIE_HTTPONLY = True
CSRF_COOKIE_SAMESITE = "Lax"
if not DEBUG:
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = int(os.environ.get("SECURE_HSTS_SECONDS", 60 * 60 * 24 * 365))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True

# --- Logging --------------------------------------------------------------------------------------
# AGENTS_UI_LOG_FORMAT=json: one JSON object a line (agents_ui/monitoring/logs.py); otherwise text.
AGENTS_UI_LOG_FORMAT = os.environ.get("AGENTS_UI_LOG_FORMAT", "text").strip().lower()
if AGENTS_UI_LOG_FORMAT not in {"text", "json"}:
    raise ImproperlyConfigured(f"AGENTS_UI_LOG_FORMAT {AGENTS_UI_LOG_FORMAT!r}: use text or json")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"json": {"()": "agents_ui.monitoring.logs.JsonLinesFormatter"}},
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            **({"formatter": "json"} if AGENTS_UI_LOG_FORMAT == "json" else {}),
        }
    },
    "loggers": {
        "agents_ui": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    },
}

# --- Metrics --------------------------------------------------------------------------------------
# /metrics answers only a scraper with this bearer token, or from these networks (comma-separated
# CIDRs, checked against the connecting address), or both when both are set. Neither: it is off
# (404), so nothing is exposed by accident. docs/operations.md, Metrics.
AGENTS_UI_METRICS_TOKEN = os.environ.get("AGENTS_UI_METRICS_TOKEN", "")
AGENTS_UI_METRICS_NETWORKS = env_list("AGENTS_UI_METRICS_NETWORKS", [])
for _cidr in AGENTS_UI_METRICS_NETWORKS:
    try:
        ipaddress.ip_network(_cidr, strict=False)
    except ValueError as _exc:
        raise ImproperlyConfigured(f"AGENTS_UI_METRICS_NETWORKS: {_cidr!r}: {_exc}") from None

# --- Agents UI ------------------------------------------------------------------------------------
# Serve the embedded demo agents under /demo-agents/ and /demo-a2a/ (off: every route there is a 404).
# On in development and in `make run`; a deployment turns them on only to show them, with
# requirements/demo.txt installed: the demo A2A agent's server (Starlette) is mounted, and imported,
# only when this is on as the ASGI application is built (project/asgi.py).
AGENTS_UI_DEMO_AGENTS = env_bool("AGENTS_UI_DEMO_AGENTS", DEBUG)
# Register the embedded demo agents automatically on first start (when they are served).
AGENTS_UI_DEMO_AUTOREGISTER = env_bool("AGENTS_UI_DEMO_AUTOREGISTER", True)
# Seconds between two deltas of a demo agent's answer (0 in tests: as fast as possible).
AGENTS_UI_DEMO_PACING = float(os.environ.get("AGENTS_UI_DEMO_PACING", "0.03"))
# The base URL the server is reachable at, used to register the demo agents.
AGENTS_UI_PUBLIC_URL = os.environ.get("AGENTS_UI_PUBLIC_URL", "http://127.0.0.1:8000")
# How long a discovered declaration is trusted before it is fetched again.
AGENTS_UI_DISCOVERY_TTL = int(os.environ.get("AGENTS_UI_DISCOVERY_TTL", "300"))
# How often the header's inbox count asks again (seconds): one indexed count per open tab.
AGENTS_UI_INBOX_POLL_SECONDS = max(5, int(os.environ.get("AGENTS_UI_INBOX_POLL_SECONDS", "30")))
# Longest a page waits for one agent's discovery (its own timeouts apply when shorter).
AGENTS_UI_DISCOVERY_TIMEOUT = float(os.environ.get("AGENTS_UI_DISCOVERY_TIMEOUT", "5"))
# Whether agents may live on loopback, private and link-local addresses (refused otherwise, to keep
# admins' URLs from reaching internal services). On in development: the demo agents are on loopback.
# Cloud metadata addresses are refused whatever this says.
AGENTS_UI_ALLOW_PRIVATE_ADDRESSES = env_bool("AGENTS_UI_ALLOW_PRIVATE_ADDRESSES", DEBUG)
# The longest message a person may send, in characters.
AGENTS_UI_MAX_MESSAGE_CHARS = int(os.environ.get("AGENTS_UI_MAX_MESSAGE_CHARS", "20000"))
# Largest upload when the agent declares no limit of its own (bytes).
AGENTS_UI_MAX_UPLOAD_BYTES = int(os.environ.get("AGENTS_UI_MAX_UPLOAD_BYTES", str(20 * 1024 * 1024)))

# What one run may store and take. Past any of these the run ends, saying which limit it reached,
# and what the agent said before is kept.
AGENTS_UI_RUN_MAX_BYTES = int(os.environ.get("AGENTS_UI_RUN_MAX_BYTES", str(32 * 1024 * 1024)))
AGENTS_UI_RUN_MAX_SECONDS = float(os.environ.get("AGENTS_UI_RUN_MAX_SECONDS", str(60 * 60)))
# The longest wait for the agent's next whole event (a byte at a time does not count; an undecided
# approval holds it; never shorter than the endpoint's read timeout).
AGENTS_UI_RUN_IDLE_SECONDS = float(os.environ.get("AGENTS_UI_RUN_IDLE_SECONDS", str(5 * 60)))
# Live fan-out between processes (docs/architecture.md): with a Redis URL, each run's events go
# through a bounded Redis Stream to the browsers other processes serve, and a stop reaches the process
# driving the run at once; without one (the default), everything stays in the process and browsers
# served by another process read the database.
AGENTS_UI_FANOUT_URL = os.environ.get("AGENTS_UI_FANOUT_URL", os.environ.get("REDIS_URL", ""))
# A run's Stream keeps about this many events (older ones are read from the database) ...
AGENTS_UI_FANOUT_STREAM_MAXLEN = int(os.environ.get("AGENTS_UI_FANOUT_STREAM_MAXLEN", "10000"))
# ... an event larger than this is only marked there (followers read it from the database) ...
AGENTS_UI_FANOUT_EVENT_MAX_BYTES = int(os.environ.get("AGENTS_UI_FANOUT_EVENT_MAX_BYTES", str(64 * 1024)))
# ... and the Stream is deleted this long after the run ended.
AGENTS_UI_FANOUT_RETENTION_SECONDS = int(os.environ.get("AGENTS_UI_FANOUT_RETENTION_SECONDS", "3600"))

# Where runs execute (docs/deploy.md). "embedded" (the default): the web process that saved the
# message drives its run. "separate" (PostgreSQL only, refused on SQLite by a system check): a send
# commits the message with a queued run and returns; `manage.py run_worker` processes claim the
# queued runs and drive them.
AGENTS_UI_RUN_WORKERS = os.environ.get("AGENTS_UI_RUN_WORKERS", "embedded").strip().lower()
if AGENTS_UI_RUN_WORKERS not in {"embedded", "separate"}:
    raise ImproperlyConfigured(f"AGENTS_UI_RUN_WORKERS {AGENTS_UI_RUN_WORKERS!r}: use embedded or separate")
# A run worker says it still drives each of its runs this often, and looks for stops this often...
AGENTS_UI_WORKER_HEARTBEAT_SECONDS = float(os.environ.get("AGENTS_UI_WORKER_HEARTBEAT_SECONDS", "5"))
AGENTS_UI_WORKER_POLL_SECONDS = float(os.environ.get("AGENTS_UI_WORKER_POLL_SECONDS", "0.5"))
# ... and every AGENTS_UI_WORKER_SWEEP_SECONDS, any worker takes back the runs whose heartbeat is
# older than AGENTS_UI_WORKER_LEASE_SECONDS (their worker stopped): requeued once when they had not
# reached the agent, otherwise ended as interrupted, keeping what the agent said.
AGENTS_UI_WORKER_SWEEP_SECONDS = float(os.environ.get("AGENTS_UI_WORKER_SWEEP_SECONDS", "30"))
AGENTS_UI_WORKER_LEASE_SECONDS = float(os.environ.get("AGENTS_UI_WORKER_LEASE_SECONDS", "90"))
# Past this many queued runs a send is refused (503, Retry-After) and the person's text stays typed.
AGENTS_UI_QUEUE_MAX = int(os.environ.get("AGENTS_UI_QUEUE_MAX", "1000"))
AGENTS_UI_QUEUE_RETRY_AFTER = int(os.environ.get("AGENTS_UI_QUEUE_RETRY_AFTER", "10"))

# A text longer than this (an answer, a tool's arguments or result) shows its end, with a note.
AGENTS_UI_SHOWN_TEXT_CHARS = int(os.environ.get("AGENTS_UI_SHOWN_TEXT_CHARS", "100000"))

# A request body is refused (413) past the largest upload plus room for the rest of the form, before
# Django reads it. Form fields other than files are held in memory up to DATA_UPLOAD_MAX_MEMORY_SIZE;
# a body past FILE_UPLOAD_MAX_MEMORY_SIZE waits on disk, not in memory.
AGENTS_UI_MAX_REQUEST_BYTES = int(
    os.environ.get("AGENTS_UI_MAX_REQUEST_BYTES", str(AGENTS_UI_MAX_UPLOAD_BYTES * 2 + 1024 * 1024))
)
DATA_UPLOAD_MAX_MEMORY_SIZE = int(os.environ.get("DATA_UPLOAD_MAX_MEMORY_SIZE", str(2 * 1024 * 1024)))
FILE_UPLOAD_MAX_MEMORY_SIZE = int(os.environ.get("FILE_UPLOAD_MAX_MEMORY_SIZE", str(2 * 1024 * 1024)))
DATA_UPLOAD_MAX_NUMBER_FIELDS = 200
DATA_UPLOAD_MAX_NUMBER_FILES = 10
