from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from telegram.error import TelegramError

from assistant_engine.surfaces.telegram import bot

ALLOWED_UPDATES = ["message", "callback_query"]


class Command(BaseCommand):
    help = "Point the bot's webhook at URL (setWebhook with TELEGRAM_WEBHOOK_SECRET and the update types used)."

    def add_arguments(self, parser):
        parser.add_argument("url", help="the public https URL of /telegram/webhook")

    def handle(self, *args, url, **options):
        if not settings.TELEGRAM_BOT_TOKEN:
            raise CommandError("TELEGRAM_BOT_TOKEN is not set.")
        try:
            bot.run(lambda b: bot.set_webhook(b, url, settings.TELEGRAM_WEBHOOK_SECRET, ALLOWED_UPDATES))
        except TelegramError as error:
            raise CommandError(f"Telegram refused: {type(error).__name__}: {error}") from None
        self.stdout.write(f"Webhook set to {url} for {', '.join(ALLOWED_UPDATES)}.")
