"""The product's people, whatever its user model: the field they sign in with
(its USERNAME_FIELD: `username` for Django's own User, often `email`), which
the engine shows, searches and takes in its commands; never a `username` column."""

from django.contrib.auth import get_user_model


def login_field() -> str:
    return get_user_model().USERNAME_FIELD


def by_login(login: str, prefix: str = "") -> dict[str, str]:
    """A filter on the login field, e.g. {"user__email": "ada@shop.example"}."""
    return {f"{prefix}{login_field()}": login}


def display_name(user) -> str:
    """How the product names a person: their full name when the user model has
    one, else the field they sign in with."""
    full = user.get_full_name() if hasattr(user, "get_full_name") else ""
    return (full or "").strip() or str(user.get_username())
