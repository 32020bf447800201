"""Create a first admin account when there is none, and print its generated password once."""

import secrets

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Create the first admin account (username 'admin') if no superuser exists yet."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--username", default="admin")

    def handle(self, *args, username: str, **options) -> None:
        User = get_user_model()
        if User.objects.filter(is_superuser=True).exists():
            return
        password = secrets.token_urlsafe(12)
        User.objects.create_superuser(username=username, email="", password=password)
        bar = "=" * 64
        self.stdout.write(
            f"{bar}\nCreated the first admin account. It is shown only this once:\n"
            f"  username: {username}\n  password: {password}\n"
            f"Change it in the admin (/admin/password_change/).\n{bar}"
        )
