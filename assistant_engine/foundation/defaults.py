"""The engine's settings as defaults under a product's own settings.

A product that installs the engine (docs/install.md) sets only a few names; the
engine's others (foundation/engine_settings.py, each from its environment
variable) fill in whatever the product's settings module left unset, before any
model is imported (organizations' AppConfig, the first of ENGINE_APPS). A name
the product did set, even one Django also defines, is left alone; the demo
imports them all, so nothing changes for it.
"""

from django.conf import settings

# Django's own settings the engine needs other than Django's defaults: they are
# applied only when the product's settings module does not set them.
MERGED_DICTS = ("MIGRATION_MODULES",)


def apply_engine_defaults() -> list[str]:
    """Sets every engine setting the product's settings left unset; returns their names."""
    from assistant_engine.foundation import engine_settings

    applied = []
    for name in dir(engine_settings):
        if not name.isupper():
            continue
        value = getattr(engine_settings, name)
        if name in MERGED_DICTS and settings.is_overridden(name):
            merged = {**value, **getattr(settings, name)}
            if merged != getattr(settings, name):
                setattr(settings, name, merged)
                applied.append(name)
        elif not settings.is_overridden(name):
            setattr(settings, name, value)
            applied.append(name)
    return applied
