"""/healthz and /readyz: cheap, open to any probe, and saying no more than "ok" or "unavailable"."""

from __future__ import annotations

from unittest import mock

import pytest
from django.db import OperationalError
from django.test import AsyncClient, Client

from agents_ui.monitoring import health


@pytest.fixture(autouse=True)
def _check_migrations_again(monkeypatch):
    monkeypatch.setattr(health, "_migrated", False)


def test_the_process_answers_ok_to_any_host_without_a_session(settings):
    settings.ALLOWED_HOSTS = ["agents.example.com"]
    settings.SECURE_SSL_REDIRECT = True
    response = Client().get("/healthz", HTTP_HOST="10.0.0.12:8000")
    assert response.status_code == 200 and response.content == b"ok\n"
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    assert not response.cookies  # no session, no CSRF cookie


@pytest.mark.django_db
def test_ready_when_the_database_answers_and_its_migrations_are_applied(django_assert_max_num_queries):
    with django_assert_max_num_queries(3):
        response = Client().get("/readyz")
    assert response.status_code == 200 and response.content == b"ok\n"


@pytest.mark.django_db
def test_not_ready_when_the_database_is_gone(caplog):
    gone = OperationalError("connection refused: db.internal:5432 password=hunter2")
    with mock.patch("django.db.backends.base.base.BaseDatabaseWrapper.ensure_connection", side_effect=gone):
        response = Client().get("/readyz")
    assert response.status_code == 503 and response.content == b"unavailable\n"
    assert "the database check failed (OperationalError)" in caplog.text
    assert "hunter2" not in caplog.text and "db.internal" not in caplog.text


@pytest.mark.django_db
def test_not_ready_while_migrations_wait_to_be_applied():
    with mock.patch(
        "django.db.migrations.executor.MigrationExecutor.migration_plan", return_value=[("x", False)]
    ):
        assert Client().get("/readyz").status_code == 503
    assert Client().get("/readyz").status_code == 200  # applied since: ready, and not checked again
    assert health._migrated


@pytest.mark.django_db
def test_not_ready_when_the_shared_cache_does_not_answer(settings):
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "redis://127.0.0.1:9/0",
        }
    }
    from django.core.cache import caches

    caches._settings = None
    try:
        assert Client().get("/readyz").status_code == 503
    finally:
        caches._settings = None


@pytest.mark.parametrize("path", ["/healthz", "/readyz", "/metrics"])
def test_probes_only_read(path):
    response = Client(enforce_csrf_checks=True).post(path)
    assert response.status_code == 405 and response["Allow"] == "GET, HEAD"


@pytest.mark.django_db(transaction=True)
async def test_probes_answer_through_the_asgi_handler_too(settings):
    settings.AGENTS_UI_METRICS_TOKEN = "t"
    client = AsyncClient()
    assert (await client.get("/healthz")).content == b"ok\n"
    assert (await client.get("/readyz")).content == b"ok\n"
    scraped = await client.get("/metrics", headers={"Authorization": "Bearer t"})
    assert scraped.status_code == 200 and b"agents_ui_runs_waiting_for_person" in scraped.content
