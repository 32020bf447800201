"""Fast settings for the test suite: in-memory cache, cheap password hashing, no demo pacing."""

import os

os.environ.setdefault("DEBUG", "true")

from project.settings import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
AGENTS_UI_DEMO_PACING = 0.0
AGENTS_UI_DEMO_AUTOREGISTER = False
# The in-process fan-out whatever REDIS_URL says; the Redis tests set their own server (a product
# process a browser test starts beside the live server is given it in AGENTS_UI_TEST_FANOUT_URL).
AGENTS_UI_FANOUT_URL = os.environ.get("AGENTS_UI_TEST_FANOUT_URL", "")

# A file, not SQLite's shared in-memory database: the ASGI live server runs in a thread of the test
# process and WAL lets it write while the test reads.
DATABASES["default"]["TEST"] = {"NAME": str(BASE_DIR / f".test-db-{os.getpid()}.sqlite3")}  # noqa: F405
