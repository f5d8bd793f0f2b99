"""The account forms: sign up, sign in (rate-limited), and a new API key."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth import get_user_model, password_validation
from django.contrib.auth.forms import AuthenticationForm
from django.core.exceptions import ValidationError
from django.http import HttpRequest

from monitors.roles import MEMBER, ROLES
from web.throttle import login_attempt, login_attempt_succeeded, wait_words


class SignupForm(forms.Form):
    """Sign up with an organization of one's own, or, through an invitation (``joining``), into the inviter's."""

    email = forms.EmailField(label="Email", max_length=150)
    organization = forms.CharField(
        label="Organization name",
        max_length=128,
        help_text="Your company or team; you can invite others later.",
    )
    password1 = forms.CharField(label="Password", widget=forms.PasswordInput, strip=False)
    password2 = forms.CharField(label="Password again", widget=forms.PasswordInput, strip=False)

    def __init__(self, *args: Any, joining: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if joining:
            del self.fields["organization"]

    def clean_email(self) -> str:
        email: str = self.cleaned_data["email"].strip().lower()
        if get_user_model().objects.filter(username__iexact=email).exists():
            raise ValidationError("An account with this email exists; sign in or reset its password.")
        return email

    def clean_organization(self) -> str:
        name: str = self.cleaned_data["organization"].strip()
        if any(ord(ch) < 0x20 for ch in name):
            raise ValidationError("Must not contain control characters.")
        return name

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        first, second = data.get("password1"), data.get("password2")
        if first and second and first != second:
            self.add_error("password2", "The two passwords differ.")
        elif first:
            user = get_user_model()(username=data.get("email", ""), email=data.get("email", ""))
            try:
                password_validation.validate_password(first, user)
            except ValidationError as exc:
                self.add_error("password1", exc)
        return data


ROLE_HELP = (
    "Owner: everything. Admin: everything but owners. Member: creates and changes healthchecks."
    " Viewer: sees, never changes."
)


class RateLimitedLoginForm(AuthenticationForm):
    """Django's sign-in form, refusing a client or a user name after too many failed tries.

    Each attempt takes its slot before the password is checked (reserve, then check): parallel
    attempts can't all pass a count none of them has raised yet. A sign-in gives its slot back.
    """

    request: HttpRequest

    def clean(self) -> dict[str, Any]:
        username = self.data.get("username", "") or ""
        if not (self.cleaned_data.get("username") and self.cleaned_data.get("password")):
            return super().clean()  # no password is checked: a missing field's own message
        wait = login_attempt(self.request, username)
        if wait:
            raise ValidationError(
                f"Too many failed sign-ins. Try again in {wait_words(wait)}, or reset your password.",
                code="rate_limited",
            )
        cleaned = super().clean()
        login_attempt_succeeded(self.request, username)
        return cleaned


class ApiKeyForm(forms.Form):
    name = forms.CharField(label="Name", max_length=128, required=False, help_text="Where the key is used.")
    read_only = forms.BooleanField(
        label="Read-only", required=False, help_text="The key can read but not change."
    )
    expires_on = forms.DateField(
        label="Expires on",
        required=False,
        widget=forms.DateInput(attrs={"type": "date"}),
        help_text="Optional: the key stops working at the start of this day (00:00 UTC), within two years.",
    )


ROLE_CHOICES = [(role, role.capitalize()) for role in ROLES]


class InviteForm(forms.Form):
    email = forms.EmailField(label="Email", max_length=254, help_text="We send them a link to join.")
    role = forms.ChoiceField(label="Role", choices=ROLE_CHOICES, initial=MEMBER, help_text=ROLE_HELP)


class RoleForm(forms.Form):
    role = forms.ChoiceField(label="Role", choices=ROLE_CHOICES)


class SecondFactorForm(forms.Form):
    """The sign-in's second step: a code from the authenticator, or one of the recovery codes."""

    code = forms.CharField(
        label="Authentication code",
        max_length=32,
        strip=True,
        help_text="The 6 digits your authenticator app shows, or one of your recovery codes.",
        widget=forms.TextInput(attrs={"autocomplete": "one-time-code", "autofocus": True}),
    )


class ConfirmCodeForm(forms.Form):
    """Confirm an enrolment with the code the newly set-up authenticator shows."""

    code = forms.CharField(
        label="Code from your authenticator",
        max_length=16,
        strip=True,
        widget=forms.TextInput(attrs={"autocomplete": "one-time-code", "inputmode": "numeric"}),
    )


class ProofForm(forms.Form):
    """Prove it is the account's owner before a change to its second factor: a current code or the password."""

    proof = forms.CharField(
        label="Current code or password",
        max_length=256,
        strip=False,
        help_text="A code your authenticator shows now, or your account's password.",
        widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}),
    )


class OrganizationSecurityForm(forms.Form):
    require_two_factor = forms.BooleanField(
        label="Require two-factor sign-in of every member",
        required=False,
        help_text="Members without it are sent to set it up before they can use this organization's pages.",
    )
