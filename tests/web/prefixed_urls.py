"""A product that includes the whole demo under a prefix, `/helper/`, and has
one page of its own, `/shop/`: a bare HTML page that extends none of the
engine's templates and holds only `{% load assistant %}{% assistant_panel %}`
beside its own markup (issue 30: the URL prefix, the panel tag alone).
Used with override_settings(ROOT_URLCONF="tests.web.prefixed_urls")."""

from django.http import HttpResponse
from django.template import engines
from django.urls import include, path

SHOP_PAGE = """<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Orders · Shop</title>
</head>
<body>
  <main id="main">
    <h1>Your orders</h1>
    <p>Order 1042, shipped on Monday.</p>
  </main>
  {% load assistant %}{% assistant_panel %}
</body>
</html>
"""


def shop_page(request):
    """The product's page: its own session login, none of the engine's doors."""
    return HttpResponse(engines["django"].from_string(SHOP_PAGE).render({}, request))


urlpatterns = [
    path("shop/", shop_page, name="shop-orders"),
    path("helper/", include("config.urls")),
]
