"""The product as it is deployed (DEBUG off), for benchmarks and load runs.

Only what plain HTTP on loopback needs differs: no redirect to HTTPS, no HSTS, and cookies that are
sent without TLS. Everything else (no query logging, the security middleware,
the session and CSRF checks) is production's, so the figures are what a deployment gets.
"""

import os

os.environ.setdefault("SECRET_KEY", "benchmark-only-key-never-used-for-anything-that-is-kept-0123456789")
os.environ.setdefault("ALLOWED_HOSTS", "127.0.0.1,localhost")
os.environ["DEBUG"] = "false"
# The benchmarks drive the product against its demo agents, which production does not serve.
os.environ.setdefault("AGENTS_UI_DEMO_AGENTS", "true")

from project.settings import *  # noqa: F403

SECURE_SSL_REDIRECT = False
SECURE_HSTS_SECONDS = 0
SESSION_COOKIE_SECURE = False
CSRF_COOKIE_SECURE = False
