"""What one request to a model may hold: its window, its output, and the bound
of a request's input tokens that every fit and every credit hold is made with.

The bound is one token per UTF-8 byte of what is sent, plus the providers'
framing. Every catalog model's tokenizer is a byte-level BPE (Claude's;
tiktoken's o200k for gpt-oss; Qwen's, Mistral's Tekken and Apertus' are
byte-level BPEs too), and such a tokenizer never makes a token of less than one
byte: the bound can't be exceeded whatever the text (an attacker's random
Unicode included), where a ratio measured on prose (about 4 bytes per token in
English) can. It wastes room on prose, which is why a conversation is
summarized a few times sooner than the model would need; it never sends a
request the provider refuses for its length. Counting with the provider
(Anthropic's count_tokens) would be one more request before every step; the
bound costs nothing.
"""

from django.conf import settings

from assistant_engine.providers.catalog import ModelOption

# Tokens a provider adds around what we send (the tool-use system prompt,
# roles, block markers): generous, so the bound stays an upper bound.
FRAMING_TOKENS = 1024
# Per message and per tool use or result: role and block markers, the call's
# id and name (not counted in the history's bytes).
FRAMING_TOKENS_PER_PART = 64


def window_tokens(option: ModelOption) -> int:
    """The option's window, or the deployment's bound when it is smaller."""
    cap = settings.ASSISTANT_CONTEXT_WINDOW_TOKENS
    return min(option.context_window_tokens, cap) if cap else option.context_window_tokens


def output_tokens(option: ModelOption) -> int:
    """What a reply may write: the deployment's setting, never past the model's
    maximum nor a quarter of the window (the rest is for what is sent)."""
    return max(1, min(settings.ASSISTANT_MAX_OUTPUT_TOKENS, option.max_output_tokens, window_tokens(option) // 4))


def request_token_bound(*, text_bytes: int, parts: int) -> int:
    """An upper bound of a request's input tokens, from the UTF-8 bytes of its
    text (system prompt, tool specifications, history) and the number of its
    parts (messages, tool uses and results, files)."""
    return text_bytes + FRAMING_TOKENS + FRAMING_TOKENS_PER_PART * parts


def input_room(option: ModelOption, *, max_tokens: int) -> int:
    """The input tokens a request may hold beside a reply of `max_tokens`."""
    return window_tokens(option) - max_tokens
