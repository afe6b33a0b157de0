"""The ground floor: the pieces of a request every app may import (the API's
error shape, strict serializers, OpenAPI helpers, parsers, throttles,
middleware, downloads, the admin's shared base, the refusal to start). It
imports Django and DRF only, never one of our apps."""
