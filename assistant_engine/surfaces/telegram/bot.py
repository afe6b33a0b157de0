"""The Bot API calls the surface makes, through python-telegram-bot.

python-telegram-bot 22 is async-only; Celery tasks are sync, so each call
site runs `asyncio.run(...)` over one `bot_session()`. The session opens the
HTTP client itself instead of `Bot.initialize()`, which would also call
`getMe` every time. A 429 raises telegram.error.RetryAfter and a network
failure telegram.error.NetworkError: the tasks retry those (tasks.py).
"""

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TypeVar

from django.conf import settings
from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup
from telegram.constants import ChatAction, ParseMode
from telegram.request import HTTPXRequest

T = TypeVar("T")


@asynccontextmanager
async def bot_session() -> AsyncIterator[Bot]:
    request = HTTPXRequest(connect_timeout=5.0, read_timeout=15.0, write_timeout=15.0)
    bot = Bot(
        settings.TELEGRAM_BOT_TOKEN, base_url=f"{settings.TELEGRAM_API_BASE_URL}/bot",
        request=request, get_updates_request=request,
    )
    await request.initialize()
    try:
        yield bot
    finally:
        await request.shutdown()


def run(call: Callable[[Bot], Awaitable[T]]) -> T:
    """`call(bot)` from sync code (a Celery task)."""

    async def main() -> T:
        async with bot_session() as bot:
            return await call(bot)

    return asyncio.run(main())


def keyboard(buttons: list[tuple[str, str]] | None) -> InlineKeyboardMarkup | None:
    """One row of (label, callback_data) buttons."""
    if not buttons:
        return None
    return InlineKeyboardMarkup([[InlineKeyboardButton(label, callback_data=data) for label, data in buttons]])


async def send_html(bot: Bot, chat_id: int, text: str, buttons: list[tuple[str, str]] | None = None) -> int:
    message = await bot.send_message(
        chat_id, text, parse_mode=ParseMode.HTML, reply_markup=keyboard(buttons),
        disable_web_page_preview=True,
    )
    return message.message_id


async def edit_html(bot: Bot, chat_id: int, message_id: int, text: str,
                    buttons: list[tuple[str, str]] | None = None) -> None:
    await bot.edit_message_text(
        text, chat_id=chat_id, message_id=message_id, parse_mode=ParseMode.HTML,
        reply_markup=keyboard(buttons), disable_web_page_preview=True,
    )


async def typing(bot: Bot, chat_id: int) -> None:
    await bot.send_chat_action(chat_id, ChatAction.TYPING)


async def answer_callback(bot: Bot, callback_query_id: str, text: str) -> None:
    await bot.answer_callback_query(callback_query_id, text=text)


async def set_webhook(bot: Bot, url: str, secret: str, allowed_updates: list[str]) -> bool:
    return await bot.set_webhook(url, secret_token=secret, allowed_updates=allowed_updates)
