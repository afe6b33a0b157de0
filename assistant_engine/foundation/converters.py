"""The path converter of API ids.

It matches any path segment and leaves the parsing to the view, so a malformed
id is a 400 `invalid_id` in the API's error shape rather than the URL
resolver's 404 page; the OpenAPI document still says what an id is
(`PATH_CONVERTER_OVERRIDES` in settings: a UUID).
"""

from django.urls import register_converter


class ApiIdConverter:
    regex = "[^/]+"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value) -> str:
        return str(value)


# Registered once, on first import (every urls module that uses it imports this).
register_converter(ApiIdConverter, "api_id")
