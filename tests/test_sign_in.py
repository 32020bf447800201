"""Signing in is throttled per account and per address, on the product's page and the admin's."""

from __future__ import annotations

import pytest

from agents_ui import sign_in as sign_in_module
from tests.factories import PASSWORD, make_user
from tests.support.clock import Clock

pytestmark = pytest.mark.django_db

PRODUCT, ADMIN = "/accounts/login/", "/admin/login/"
HOME = "10.1.1.1"


def sign_in(client, username: str, password: str, *, address: str = HOME, page: str = PRODUCT):
    return client.post(page, {"username": username, "password": password}, REMOTE_ADDR=address)


def signed_in(response) -> bool:
    return response.status_code == 302


@pytest.fixture
def limits(settings):
    settings.AGENTS_UI_SIGN_IN_FAILURES_PER_ACCOUNT = 5
    settings.AGENTS_UI_SIGN_IN_FAILURES_PER_ADDRESS = 8
    settings.AGENTS_UI_SIGN_IN_WINDOW = 15 * 60
    settings.AGENTS_UI_SIGN_IN_LOCK = 15 * 60
    return settings


def test_a_wrong_password_says_so_and_a_right_one_signs_in(client, limits):
    alice = make_user("alice")
    page = sign_in(client, "alice", "wrong")
    assert page.status_code == 200
    assert "That username and password do not match. Try again." in page.content.decode()
    assert signed_in(sign_in(client, alice.username, PASSWORD))


def test_five_failures_lock_the_account_even_for_the_right_password(client, limits):
    make_user("alice")
    for _ in range(5):
        assert "do not match" in sign_in(client, "alice", "wrong").content.decode()
    page = sign_in(client, "alice", PASSWORD)
    html = page.content.decode()
    assert not signed_in(page)
    assert "Too many failed sign-ins for this account. Try again in 15 minutes." in html
    assert "do not match" not in html
    # From another address too: the lock is on the account.
    assert not signed_in(sign_in(client, "alice", PASSWORD, address="10.2.2.2"))
    # Everyone else signs in as usual, from the same address.
    bob = make_user("bob")
    assert signed_in(sign_in(client, bob.username, PASSWORD))


def test_the_account_lock_ends_and_the_right_password_then_works(client, limits, monkeypatch):
    clock = Clock()
    monkeypatch.setattr(sign_in_module, "now", clock)
    make_user("alice")
    for _ in range(5):
        sign_in(client, "alice", "wrong")
    assert not signed_in(sign_in(client, "alice", PASSWORD))
    clock.advance(15 * 60 - 1)
    assert "Try again in 1 minute." in sign_in(client, "alice", PASSWORD).content.decode()
    clock.advance(2)
    assert signed_in(sign_in(client, "alice", PASSWORD))


def test_the_account_lock_counts_usernames_whatever_their_case_and_whether_they_exist(client, limits):
    for n, name in enumerate(["Ghost", "ghost", "GHOST", "gHost", "ghosT"]):
        sign_in(client, name, "wrong", address=f"10.3.3.{n}")  # no address reaches its limit
    assert "for this account" in sign_in(client, "ghost", "x", address="10.9.9.9").content.decode()


def test_a_success_forgets_the_accounts_failures(client, limits):
    alice = make_user("alice")
    for _ in range(4):
        sign_in(client, "alice", "wrong")
    assert signed_in(sign_in(client, alice.username, PASSWORD))
    client.logout()
    for _ in range(4):  # from elsewhere: an address's failures are not forgotten by a success
        sign_in(client, "alice", "wrong", address="10.6.6.6")
    assert signed_in(sign_in(client, alice.username, PASSWORD, address="10.6.6.6"))


def test_failures_from_one_address_lock_that_address_for_every_account(client, limits):
    carol = make_user("carol")
    for n in range(8):  # a different account each time: no account reaches its limit
        sign_in(client, f"guess{n}", "wrong", address="10.4.4.4")
    page = sign_in(client, carol.username, PASSWORD, address="10.4.4.4")
    assert not signed_in(page)
    assert "Too many failed sign-ins from your network address. Try again in 15 minutes." in (
        page.content.decode()
    )
    # The same person from another address is not locked: the lock was the address's.
    assert signed_in(sign_in(client, carol.username, PASSWORD, address="10.5.5.5"))


def test_the_admins_sign_in_is_throttled_too(client, limits):
    admin = make_user("root", superuser=True)
    for _ in range(5):
        page = sign_in(client, "root", "wrong", page=ADMIN)
        assert page.status_code == 200
    page = sign_in(client, admin.username, PASSWORD, page=ADMIN)
    assert not signed_in(page)
    assert "Too many failed sign-ins for this account." in page.content.decode()
    # And a lock earned on one page holds on the other.
    assert not signed_in(sign_in(client, admin.username, PASSWORD))


def test_a_user_who_may_not_use_the_admin_is_not_counted_as_a_failure(client, limits):
    """Signing in to the admin with the right password but no staff status is refused, not counted."""
    dave = make_user("dave")
    for _ in range(6):
        assert not signed_in(sign_in(client, dave.username, PASSWORD, page=ADMIN))
    assert signed_in(sign_in(client, dave.username, PASSWORD))
