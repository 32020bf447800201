"""Signed-in people get the everyday abilities through a group the setup creates; admins narrow it."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from agents_ui.people import EVERYDAY_GROUP

pytestmark = pytest.mark.django_db


def test_a_new_person_may_see_reasoning_upload_and_approve():
    user = get_user_model().objects.create_user("ada", password="x")
    assert user.groups.filter(name=EVERYDAY_GROUP).exists()
    for ability in ("view_reasoning", "upload_files", "approve_actions"):
        assert user.has_perm(f"agents_ui.{ability}")


def test_an_admin_narrows_the_group_and_new_people_get_the_narrower_abilities():
    group = Group.objects.get(name=EVERYDAY_GROUP)
    group.permissions.remove(*group.permissions.filter(codename="approve_actions"))
    user = get_user_model().objects.create_user("bea", password="x")
    assert user.has_perm("agents_ui.view_reasoning")
    assert not user.has_perm("agents_ui.approve_actions")


def test_the_group_is_not_made_again_once_an_admin_removed_a_permission():
    from agents_ui.people import everyday_group

    group = Group.objects.get(name=EVERYDAY_GROUP)
    group.permissions.clear()
    assert everyday_group() == group
    assert not group.permissions.exists()
