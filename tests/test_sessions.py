"""Who is signed in, read with prepared statements (agents_ui/sessions.py): the same answers as
Django's database sessions and ModelBackend, in fewer statements."""

from __future__ import annotations

import datetime

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import Group, Permission
from django.contrib.sessions.models import Session
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from agents_ui.sessions import PersonBackend, SessionStore
from tests.factories import PASSWORD, make_user

pytestmark = pytest.mark.django_db


def permission(codename: str) -> Permission:
    return Permission.objects.get(codename=codename, content_type__app_label="agents_ui")


def fresh(user):
    return get_user_model().objects.get(pk=user.pk)


def test_a_session_is_read_back_and_an_expired_or_unknown_one_is_not():
    store = SessionStore()
    store["said"] = "hello"
    store.save()
    assert SessionStore(store.session_key).load() == {"said": "hello"}

    Session.objects.filter(pk=store.session_key).update(expire_date=timezone.now() - datetime.timedelta(1))
    expired = SessionStore(store.session_key)
    assert expired.load() == {} and expired.session_key is None

    unknown = SessionStore("x" * 32)
    assert unknown.load() == {} and unknown.session_key is None
    assert SessionStore(None).load() == {}


@pytest.mark.django_db(transaction=True)
async def test_a_session_is_read_back_from_async_code_too():
    store = SessionStore()
    store["said"] = "hello"
    await sync_to_async(store.save)()
    assert await SessionStore(store.session_key).aload() == {"said": "hello"}


def test_a_person_is_read_with_every_field_as_the_orm_gives_it():
    alice = make_user("alice")
    read = PersonBackend().get_user(alice.pk)
    expected = fresh(alice)
    for field in get_user_model()._meta.concrete_fields:
        assert getattr(read, field.attname) == getattr(expected, field.attname), field.name
    assert isinstance(read.is_active, bool) and read.date_joined.tzinfo is not None
    assert PersonBackend().get_user(alice.pk + 1000) is None


def test_an_inactive_person_is_not_signed_in():
    alice = make_user("alice")
    get_user_model().objects.filter(pk=alice.pk).update(is_active=False)
    assert PersonBackend().get_user(alice.pk) is None


def test_permissions_are_a_persons_own_and_their_groups_as_django_reads_them():
    alice = make_user("alice", perms=["upload_files"])
    group = Group.objects.create(name="reviewers")
    group.permissions.add(permission("approve_actions"), permission("upload_files"))
    alice.groups.add(group)
    Group.objects.create(name="others").permissions.add(permission("view_reasoning"))

    ours = PersonBackend().get_all_permissions(fresh(alice))
    assert ours == ModelBackend().get_all_permissions(fresh(alice))
    assert ours == {"agents_ui.upload_files", "agents_ui.approve_actions"}


def test_a_superuser_has_every_permission_and_an_inactive_person_none():
    root = make_user("root", superuser=True)
    assert PersonBackend().get_all_permissions(fresh(root)) == ModelBackend().get_all_permissions(fresh(root))
    alice = make_user("alice", perms=["upload_files"])
    get_user_model().objects.filter(pk=alice.pk).update(is_active=False)
    assert PersonBackend().get_all_permissions(fresh(alice)) == set()
    assert not fresh(alice).has_perm("agents_ui.upload_files")


def test_permissions_are_one_statement_kept_for_the_request_and_read_again_by_the_next():
    alice = make_user("alice", perms=["upload_files"])
    user = fresh(alice)
    with CaptureQueriesContext(connection) as queries:
        assert user.has_perm("agents_ui.upload_files")
        assert not user.has_perm("agents_ui.approve_actions")
        assert user.get_all_permissions() == {"agents_ui.upload_files"}
    assert len(queries) == 1
    alice.user_permissions.clear()  # revoked: the next request's person has it no more
    assert not fresh(alice).has_perm("agents_ui.upload_files")


@pytest.mark.django_db(transaction=True)
async def test_an_async_permission_check_reads_them_once():
    alice = await sync_to_async(make_user)("alice", perms=["approve_actions"])
    user = await get_user_model().objects.aget(pk=alice.pk)
    assert await user.ahas_perm("agents_ui.approve_actions")
    assert not await user.ahas_perm("agents_ui.upload_files")
    assert user._perm_cache == {"agents_ui.approve_actions"}


def test_a_signed_in_request_reads_its_session_and_person_in_two_statements(client):
    alice = make_user("alice")
    signed = client.post("/accounts/login/", {"username": alice.username, "password": PASSWORD})
    assert signed.status_code == 302
    with CaptureQueriesContext(connection) as queries:
        page = client.get("/accounts/password_change/", follow=False)
    assert page.status_code in (200, 302)
    reads = [q["sql"] for q in queries.captured_queries]
    assert reads[0].startswith('SELECT session_data FROM "django_session"')
    assert reads[1].startswith('SELECT "id", "password"')
    client.post("/accounts/logout/")
    assert client.get("/").status_code == 302  # signed out: sent to sign in
