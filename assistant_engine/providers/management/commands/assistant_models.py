"""Print the catalog of model options and whether each can be used now."""

from django.conf import settings
from django.core.management.base import BaseCommand

from assistant_engine.providers.catalog import CATALOG, ModelOption, default_option_id, unusable_reason

ROW = "{marker} {id:<28} {provider:<10} {model:<45} {location:<8} {prices:<28} {status}"


def _prices(option: ModelOption) -> str:
    prices = (
        option.input_micros_per_mtok,
        option.output_micros_per_mtok,
        option.cache_write_micros_per_mtok,
        option.cache_read_micros_per_mtok,
    )
    return "/".join(f"${micros / 1_000_000:.2f}" for micros in prices)


class Command(BaseCommand):
    help = "List the model options: provider, model, where data is processed, prices, and usability."

    def handle(self, *args, **options) -> None:
        # What the server would use: ASSISTANT_MODEL, else the default (Infomaniak in production once its
        # credentials are set), as catalog.selected_option decides it.
        selected = settings.ASSISTANT_MODEL or default_option_id()
        self.stdout.write("Prices in USD per million tokens: input/output/cache write/cache read. "
                          "* = the one this deployment uses")
        header = dict(id="id", provider="provider", model="model", location="location", prices="prices")
        self.stdout.write(ROW.format(marker=" ", status="status", **header))
        for option in CATALOG:
            self.stdout.write(
                ROW.format(
                    marker="*" if option.id == selected else " ",
                    id=option.id,
                    provider=option.provider,
                    model=option.model,
                    location=option.location,
                    prices=_prices(option),
                    status=unusable_reason(option) or "usable",
                )
            )
        if selected not in {option.id for option in CATALOG}:
            self.stdout.write(f"ASSISTANT_MODEL={selected!r} is not a known option.")
