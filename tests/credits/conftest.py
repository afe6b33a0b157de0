import pytest
from django.contrib.auth import get_user_model


@pytest.fixture
def staff(db):
    """A superuser: staff, with every permission (grant_credits included)."""
    return get_user_model().objects.create_superuser(username="stella", password="pw-stella")


@pytest.fixture
def small_org(acme):
    """Acme with 7 credits a month: two 3-credit reservations fit, a third does not."""
    acme.monthly_credits = 7
    acme.save(update_fields=["monthly_credits"])
    return acme
