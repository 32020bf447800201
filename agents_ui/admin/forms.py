"""The endpoint's admin form: a write-only credential and one override select per control."""

from __future__ import annotations

import json
from urllib.parse import urlsplit

from django import forms

from agents_ui.decisions import CONTROL_LABELS, CONTROL_NAMES
from agents_ui.endpoints.clients import allow_private_addresses
from agents_ui.models import AgentEndpoint
from agents_ui.sdk.a2a.signing import KeySetError, parse_key_set
from agents_ui.sdk.guard import host_refusal

OVERRIDE_CHOICES = [
    ("", "Follow the agent"),
    ("hide", "Force hidden"),
    ("allow", "Allow where not declared"),
]
# The identity card is always shown (decisions.py), so it has nothing to override.
OVERRIDABLE_CONTROLS: tuple[str, ...] = tuple(name for name in CONTROL_NAMES if name != "identity")


def override_field_name(control: str) -> str:
    return f"override_{control.replace('-', '_')}"


OVERRIDE_FIELDS: tuple[str, ...] = tuple(override_field_name(name) for name in OVERRIDABLE_CONTROLS)


def _with_override_fields(form_class: type[forms.ModelForm]) -> type[forms.ModelForm]:
    """Declare one select per control, from the decision module's list, so a new control gets one.

    Declared on the class (not in __init__) because the admin builds its form from the fieldsets
    and only accepts names the form class declares.
    """
    for control in OVERRIDABLE_CONTROLS:
        field = forms.ChoiceField(
            label=CONTROL_LABELS[control], choices=OVERRIDE_CHOICES, required=False, initial=""
        )
        form_class.base_fields[override_field_name(control)] = field
        form_class.declared_fields[override_field_name(control)] = field
    return form_class


def _origin(url: str) -> str:
    """scheme://host:port of a URL, the port spelled out, so a change of any of them shows."""
    parts = urlsplit(url.strip())
    port = parts.port or {"http": 80, "https": 443}.get(parts.scheme.lower())
    return f"{parts.scheme.lower()}://{(parts.hostname or '').rstrip('.')}:{port}"


class AgentURLField(forms.URLField):
    """An address this server will send requests to: one the address guard would refuse, in any
    spelling (2130706433, 0x7f.1, [::ffff:127.0.0.1], localhost., the metadata service), is refused
    here with the reason, before the generic URL check. A name is judged by DNS at each request."""

    def validate(self, value: str) -> None:
        super().validate(value)
        if not value:
            return
        try:
            host = urlsplit(value.strip()).hostname or ""
        except ValueError:
            return  # the URL check below says it is not a URL
        refused = host and host_refusal(host, allow_private=allow_private_addresses())
        if not refused:
            return
        named, _, kind = refused.removeprefix("refused: ").partition(" is ")
        what = f"{host} is {kind}" if named == host.rstrip(".") else f"{host} names {named}, {kind}"
        private = "loopback and private networks are allowed only with AGENTS_UI_ALLOW_PRIVATE_ADDRESSES on"
        hint = "" if "metadata" in kind else f" ({private})"
        raise forms.ValidationError(
            "%(what)s: this server never sends requests there. Use the agent's public address%(hint)s.",
            code="refused_address",
            params={"what": what, "hint": hint},
        )


class KeySetField(forms.JSONField):
    """A pasted JWKS: empty when there is none (not "null"), indented when there is."""

    def prepare_value(self, value: object) -> object:
        if value is None or isinstance(value, forms.fields.InvalidJSONInput):
            return value or ""
        return json.dumps(value, ensure_ascii=False, indent=2)


@_with_override_fields
class AgentEndpointForm(forms.ModelForm):
    """The credential is write-only: never rendered back, kept when left empty, cleared on request."""

    credential = forms.CharField(
        label="Credential",
        required=False,
        strip=True,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password"}),
        help_text="The bearer token or header value. Write-only: leave empty to keep the current one.",
    )
    clear_credential = forms.BooleanField(label="Remove the stored credential", required=False)

    class Meta:
        model = AgentEndpoint
        fields = [
            "name", "slug", "description", "protocol", "enabled", "base_url", "discovery_url",
            "connect_timeout", "read_timeout", "remote_images", "auth_kind", "auth_header_name",
            "allowed_groups", "signature_policy", "signing_keys", "signing_keys_url", "signer_name",
            "probe_every",
        ]  # fmt: skip
        field_classes = {
            "signing_keys": KeySetField,
            "base_url": AgentURLField,
            "discovery_url": AgentURLField,
            "signing_keys_url": AgentURLField,
        }
        widgets = {"signing_keys": forms.Textarea(attrs={"rows": 6, "class": "vLargeTextField mono"})}

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        for name in ("remote_images", "signature_policy", "probe_every"):
            if name in self.fields:
                self.fields[name].required = False
        current = self.instance.overrides or {}
        for control in OVERRIDABLE_CONTROLS:
            name = override_field_name(control)
            if name in self.fields and current.get(control) in {"hide", "allow"}:
                self.initial[name] = current[control]

    def clean_signature_policy(self) -> str:
        # A form posted without the setting (an older script) keeps the default: verify if present.
        return self.cleaned_data.get("signature_policy") or AgentEndpoint.SignaturePolicy.VERIFY

    def clean_probe_every(self) -> int:
        # A form posted without the schedule (an older script) leaves the probe off.
        return self.cleaned_data.get("probe_every") or 0

    def clean_signing_keys(self) -> object:
        """A pasted key set must be public signing keys the verifier can use: said here, not at discovery."""
        keys = self.cleaned_data.get("signing_keys")
        if keys in (None, "", {}, []):
            return None
        try:
            parse_key_set(keys)
        except KeySetError as exc:
            raise forms.ValidationError(f"This key set cannot be used: {exc}", code="key_set") from exc
        return keys

    def clean_remote_images(self) -> str:
        # A form posted without the setting (an older script) keeps the default: proxied.
        return self.cleaned_data.get("remote_images") or AgentEndpoint.RemoteImages.PROXY

    def _moved_origins(self, cleaned: dict) -> list[str]:
        """The new origins (scheme, host, port) of the addresses the credential is sent to."""
        if not self.instance.pk:
            return []
        moved = []
        for name in ("base_url", "discovery_url"):
            before, after = getattr(self.instance, name) or "", cleaned.get(name) or ""
            if after and _origin(after) != _origin(before or self.instance.base_url):
                moved.append(_origin(after))
        return list(dict.fromkeys(moved))

    def clean(self) -> dict:
        cleaned = super().clean()
        new_credential = cleaned.get("credential")
        moved = self._moved_origins(cleaned)
        if cleaned.get("clear_credential"):
            cleaned["credential"] = ""
        elif not new_credential and moved and self.instance.credential:
            # Whoever may change the address must not be able to send the stored secret to a host of
            # their choice: a new origin takes a credential typed again, or none.
            self.add_error(
                "credential",
                f"The agent's address moved to {', '.join(moved)}: the stored credential is never sent "
                "to a new address. Enter it again, or tick “Remove the stored credential”.",
            )
            cleaned["credential"] = self.instance.credential  # one error, not a second "enter it"
        elif not new_credential:
            cleaned["credential"] = self.instance.credential if self.instance.pk else ""
        if (
            cleaned.get("signature_policy") == AgentEndpoint.SignaturePolicy.REQUIRE
            and not cleaned.get("signing_keys")
            and not cleaned.get("signing_keys_url")
            and "signing_keys" not in self.errors
        ):
            self.add_error(
                "signature_policy",
                "To require a signature, paste the keys that may sign its card or enter their URL.",
            )
        kind = cleaned.get("auth_kind")
        if kind and kind != AgentEndpoint.AuthKind.NONE and not cleaned.get("credential"):
            self.add_error("credential", "Enter the credential for this kind of authentication.")
        if any(name in self.fields for name in OVERRIDE_FIELDS):
            # Only known controls with a real choice are stored: "follow the agent" is no entry.
            self.instance.overrides = {
                control: cleaned[override_field_name(control)]
                for control in OVERRIDABLE_CONTROLS
                if cleaned.get(override_field_name(control)) in {"hide", "allow"}
            }
        return cleaned
