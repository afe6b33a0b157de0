"""Failed logins are locked out (django-axes): after AXES_FAILURE_LIMIT wrong
passwords for one username from one address, that pair gets 429 — even with
the right password — on the app's login page and the admin's."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

LIMIT = 5


@pytest.fixture
def lockout(settings):
    settings.AXES_FAILURE_LIMIT = LIMIT
    return LIMIT


def log_in(client: Client, url: str, username: str, password: str):
    return client.post(url, {"username": username, "password": password})


@pytest.mark.parametrize("url", ["/login/", "/admin/login/"])
def test_repeated_wrong_passwords_lock_the_login_out(owner, lockout, url):
    get_user_model().objects.filter(pk=owner.user.pk).update(is_staff=True)
    client = Client()
    statuses = [log_in(client, url, "olivia", f"wrong-{attempt}").status_code for attempt in range(lockout)]
    assert statuses[:-1] == [200] * (lockout - 1)  # the form again, with its error
    locked = log_in(client, url, "olivia", "pw-olivia")
    assert locked.status_code == 429
    assert "locked after 5 wrong passwords" in locked.content.decode()
    assert "_auth_user_id" not in client.session


def test_fewer_failures_than_the_limit_then_the_right_password_logs_in(owner, lockout):
    client = Client()
    for attempt in range(lockout - 1):
        assert log_in(client, "/login/", "olivia", f"wrong-{attempt}").status_code == 200
    assert log_in(client, "/login/", "olivia", "pw-olivia").status_code == 302
    assert int(client.session["_auth_user_id"]) == owner.user.pk


def test_the_lockout_is_per_username_and_address(owner, colleague, lockout):
    attacker = Client(REMOTE_ADDR="203.0.113.7")
    for attempt in range(lockout + 1):
        log_in(attacker, "/login/", "olivia", f"wrong-{attempt}")
    assert log_in(attacker, "/login/", "olivia", "pw-olivia").status_code == 429
    # Olivia from her own address, and a colleague from the attacker's, still log in.
    assert log_in(Client(REMOTE_ADDR="198.51.100.2"), "/login/", "olivia", "pw-olivia").status_code == 302
    assert log_in(attacker, "/login/", "colin", "pw-colin").status_code == 302


def test_a_forwarded_for_header_does_not_give_a_fresh_address_without_a_proxy(owner, lockout):
    client = Client()
    for attempt in range(lockout):
        log_in(client, "/login/", "olivia", f"wrong-{attempt}")
    spoofed = client.post("/login/", {"username": "olivia", "password": "pw-olivia"},
                          HTTP_X_FORWARDED_FOR="192.0.2.55")
    assert spoofed.status_code == 429
