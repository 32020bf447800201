import os
import subprocess
import sys
from pathlib import Path

import pytest

from project.settings import cache_from_url

ROOT = Path(__file__).resolve().parents[1]


def run_manage(*args: str, **env: str) -> subprocess.CompletedProcess:
    environment = {
        k: v for k, v in os.environ.items() if k not in {"DEBUG", "SECRET_KEY", "DJANGO_SETTINGS_MODULE"}
    }
    environment.update(env)
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_production_settings_pass_check_deploy():
    result = run_manage(
        "check", "--deploy", "--fail-level", "WARNING",
        DEBUG="false", SECRET_KEY="x" * 64 + "-production-check", ALLOWED_HOSTS="agents.example.com",
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr


def test_production_refuses_to_start_without_a_secret_key():
    result = run_manage("check", DEBUG="false")
    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr


@pytest.mark.parametrize(
    ("url", "backend"),
    [
        ("locmem://", "django.core.cache.backends.locmem.LocMemCache"),
        ("redis://cache.internal:6379/1", "django.core.cache.backends.redis.RedisCache"),
        ("rediss://cache.internal:6380/0", "django.core.cache.backends.redis.RedisCache"),
    ],
)
def test_cache_url(url, backend):
    assert cache_from_url(url)["BACKEND"] == backend
