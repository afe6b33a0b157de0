"""Staff of the admin: a superuser, and staff members holding only the
permissions a test names, so a refusal is for the missing permission alone."""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

User = get_user_model()


def permission(dotted: str) -> Permission:
    app_label, codename = dotted.split(".")
    return Permission.objects.get(content_type__app_label=app_label, codename=codename)


def make_staff(username: str, *perms: str):
    user = User.objects.create_user(username=username, password="pw-" + username, is_staff=True)
    user.user_permissions.add(*(permission(dotted) for dotted in perms))
    return user


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def queries_of(fn) -> int:
    with CaptureQueriesContext(connection) as captured:
        fn()
    return len(captured)


@pytest.fixture
def root(db):
    return User.objects.create_superuser("root", "root@example.com", "pw-root")


@pytest.fixture
def root_client(root) -> Client:
    return logged_in(root)
