"""Signing in, throttled: too many failed sign-ins lock the account, or the address, for a while.

Failures are counted per account (the username typed, whether or not it exists, so the lock says
nothing about which accounts do) and per client address, in Django's cache: shared by every worker
when the cache is Redis, per process with the default in-memory cache. Past the limit within the
window, sign-ins for that account (or from that address) are refused for the lock's length, even
with the right password, and the page says why and for how long. Everyone else signs in as usual.
A successful sign-in forgets the account's failures, not the address's.

The limits are settings (`AGENTS_UI_SIGN_IN_*`); the product's sign-in page and the admin's use
the forms below.
"""

from __future__ import annotations

import hashlib
import math
import time
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth import get_user
from django.contrib.auth.forms import AuthenticationForm
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.http import HttpRequest
from django.utils.deprecation import MiddlewareMixin

_PREFIX = "agents-ui:sign-in"


def now() -> float:
    """The time locks are measured by (tests move it instead of waiting)."""
    return time.time()


@dataclass(frozen=True)
class Lock:
    """Why sign-ins are refused now, and for how many more seconds."""

    per: str  # "account" or "address"
    seconds: float

    @property
    def message(self) -> str:
        minutes = max(1, math.ceil(self.seconds / 60))
        wait = f"{minutes} minute{'s' if minutes != 1 else ''}"
        if self.per == "account":
            return f"Too many failed sign-ins for this account. Try again in {wait}."
        return f"Too many failed sign-ins from your network address. Try again in {wait}."


def client_address(request: HttpRequest | None) -> str:
    # The address the server saw (uvicorn puts a trusted proxy's X-Forwarded-For there): a header
    # the client sets itself would let it choose its own counter.
    return (request.META.get("REMOTE_ADDR") if request is not None else "") or "unknown"


def _keys(per: str, value: str) -> tuple[str, str]:
    digest = hashlib.sha256(value.encode()).hexdigest()[:32]  # any username is a valid cache key
    return f"{_PREFIX}:{per}:{digest}:failures", f"{_PREFIX}:{per}:{digest}:locked-until"


def _subjects(request: HttpRequest | None, username: str | None) -> list[tuple[str, str, int]]:
    subjects = [("address", client_address(request), settings.AGENTS_UI_SIGN_IN_FAILURES_PER_ADDRESS)]
    if username:
        subjects.insert(0, ("account", username.casefold(), settings.AGENTS_UI_SIGN_IN_FAILURES_PER_ACCOUNT))
    return subjects


def current_lock(request: HttpRequest | None, username: str | None) -> Lock | None:
    """The lock on this account or this address, if any (the account's first)."""
    at = now()
    for per, value, _limit in _subjects(request, username):
        until = cache.get(_keys(per, value)[1])
        if until is not None and until > at:
            return Lock(per, until - at)
    return None


def record_failure(request: HttpRequest | None, username: str | None) -> None:
    """One more failed sign-in for the account and the address; lock whichever reaches its limit."""
    window, lock_for = settings.AGENTS_UI_SIGN_IN_WINDOW, settings.AGENTS_UI_SIGN_IN_LOCK
    for per, value, limit in _subjects(request, username):
        failures_key, locked_key = _keys(per, value)
        cache.add(failures_key, 0, timeout=window)  # the window starts at the first failure
        try:
            failures = cache.incr(failures_key)
        except ValueError:  # the window ended between the two calls
            failures = 1
            cache.set(failures_key, failures, timeout=window)
        if failures >= limit:
            cache.set(locked_key, now() + lock_for, timeout=lock_for)
            cache.delete(failures_key)


def forget_account(username: str) -> None:
    cache.delete(_keys("account", username.casefold())[0])


class ThrottledSignIn:
    """For an AuthenticationForm: refuse while locked, count each failure, forget on success."""

    request: HttpRequest | None
    cleaned_data: dict[str, Any]
    user_cache: Any

    def clean(self) -> dict[str, Any]:
        username = self.cleaned_data.get("username")
        lock = current_lock(self.request, username)
        if lock is not None:
            raise ValidationError(lock.message, code="throttled")
        try:
            cleaned = super().clean()  # type: ignore[misc]
        except ValidationError:
            if self.user_cache is None:  # a wrong password, not an account that may not sign in here
                record_failure(self.request, username)
            raise
        if username:
            forget_account(username)
        return cleaned


class SignInForm(ThrottledSignIn, AuthenticationForm):
    error_messages = {
        **AuthenticationForm.error_messages,
        "invalid_login": "That username and password do not match. Try again.",
    }


class AdminSignInForm(ThrottledSignIn, AdminAuthenticationForm):
    pass


class SignedInPerson(MiddlewareMixin):
    """Who is signed in, read on the request's thread with the rest of Django's middleware (in the
    same trip there, project/asgi.OneTrip), so that `await request.auser()` costs nothing after.

    Django's own `request.auser()` reads the session and the person in two more trips to a thread,
    and the first of them raises, inside an `except` on the event loop, an AttributeError whose
    traceback holds every frame of the request: a cycle that kept each request's objects (its
    QueryDicts, querysets, the session) alive until the cycle collector's next full pass. This reads
    them as Django's synchronous `request.user` does, and answers `auser()` with the result, as
    Django's own `login()` and `logout()` do when they change who is signed in.
    """

    def process_request(self, request: HttpRequest) -> None:
        user = get_user(request)
        request.user = user

        async def auser() -> Any:
            return user

        request.auser = auser  # type: ignore[attr-defined]
