from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

pytestmark = pytest.mark.django_db


def test_ensure_admin_creates_one_admin_once_and_prints_the_password_once():
    out = StringIO()
    call_command("ensure_admin", stdout=out)
    text = out.getvalue()
    password = text.split("password: ")[1].split()[0]
    admin = get_user_model().objects.get(username="admin")
    assert admin.is_superuser and admin.check_password(password)

    again = StringIO()
    call_command("ensure_admin", stdout=again)
    assert again.getvalue() == ""
    assert get_user_model().objects.filter(is_superuser=True).count() == 1
