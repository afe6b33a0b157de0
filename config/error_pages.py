"""The demo product's own "not found" and "forbidden" pages, in the person's
language (LocaleMiddleware has chosen it), also under DEBUG: a link the
product shows (a deleted note's page, /organization/ for a member) never
lands on Django's debug page, which a tester takes for a crash.

Without DEBUG, Django's handlers answer (handler404 and handler403 in
config/urls.py); with it, the middleware does what they would.
"""

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import render
from django.urls import Resolver404, get_resolver


def not_found(request, exception=None):
    return render(request, "404.html", status=404)


def forbidden(request, exception=None):
    return render(request, "403.html", status=403)


class ProductErrorPagesMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if settings.DEBUG:  # an address nothing answers (DEBUG would show the URL patterns)
            try:
                get_resolver(getattr(request, "urlconf", None)).resolve(request.path_info)
            except Resolver404:
                return not_found(request)
        return self.get_response(request)

    def process_exception(self, request, exception):
        if isinstance(exception, Http404):
            return not_found(request)
        if isinstance(exception, PermissionDenied):
            return forbidden(request)
        return None
