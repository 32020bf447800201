"""The admin for agent endpoints: register, check, compare and govern them.

Admins are the second kind of user, so this is a product surface: the list says how each agent is
doing (discovery status and its age, who may use it), actions test and re-discover with messages
that say what happened, and an endpoint's page has its history of declarations, a diff between any
two, per-control overrides and a preview of the workspace. The credential is write-only throughout:
it never appears in a page, a message or a log line.

One module per concern:
- `forms`: the endpoint's form (the write-only credential, one select per control override);
- `listing`: what the list shows (discovery status and its age, who may use it) and its filters;
- `checks`: asking agents now (test connection, re-discover) and the messages that say what happened;
- `history`: the history of declarations and the diff between two of them;
- `health`: how each agent is doing, from its stored runs (the list's column, the endpoint's page);
- `endpoints`, `snapshots`, `runs`: the ModelAdmins, which put those together (runs: read-only);
- `shares`: people's shared links, read-only, revoked in bulk when needed;
- `compare`: people's ratings from Compare, and how often each agent of a pair was preferred.
"""

from django.contrib import admin

from agents_ui.admin import compare, endpoints, runs, shares, snapshots
from agents_ui.sign_in import AdminSignInForm

# The admin's sign-in is throttled as the product's is.
admin.site.login_form = AdminSignInForm

__all__ = ["compare", "endpoints", "runs", "shares", "snapshots"]
