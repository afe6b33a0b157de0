"""Phase 1, build the request: the person's rights and the model checked at
the start, the turn's client opened, the history read once; then, each step,
the request made from it and an upper bound of its cost held in credits
(credits_reserve_more, under the turn's reservation row's lock) before the model is called."""

import logging

from django.conf import settings

from assistant.history import load_context
from assistant.history_fit import (
    ConversationFull,
    HistoryTooLong,
    fit_full,
    fit_last,
    fit_summarized,
    fit_window,
    history_bytes,
    history_parts,
    sent_from,
)
from assistant.instructions import system_prompt
from assistant.models import Turn
from assistant.summaries import pending_card_seq, summary_in_use
from assistant.trifecta import taint_union
from assistant.turn.outcome import (
    CAP_NOTICE,
    CEILING_NOTICE,
    MODEL_NOT_ALLOWED_NOTICE,
    NOTICES,
    TurnStopped,
    bounds_notice,
)
from assistant.turn.process_cache import deployment_client
from assistant.turn.settle import charge_for
from assistant.turn.state import TurnState
from assistant_engine.foundation.people import display_name
from assistant_engine.organizations.members import Member, tenant_of
from assistant_engine.organizations.models import Membership
from assistant_engine.providers.catalog import client_for
from assistant_engine.providers.clients.base import ModelRequest
from assistant_engine.providers.org_models import DEPLOYMENT, option_allowed, turn_key
from assistant_engine.providers.windows import input_room, output_tokens, request_token_bound
from credits.money import call_bound_micros, micros_from_credits, request_micros
from credits.services import CreditsExhausted, MemberCapReached, credits_reserve_more

logger = logging.getLogger("assistant.turn")

SUMMARIZE, WINDOW, FULL, LAST = "summarize", "window", "full", "last"
TOO_LONG_FOR_MODEL = "this message and what it needs are more than the model can read at once"


def history_mode_of(chosen: str, *, continuous: bool) -> str:
    """The organization's choice (Organization.HistoryMode), except that a
    continuous conversation (Telegram) is never full: it uses the window."""
    return WINDOW if chosen == FULL and continuous else chosen


class RequestPhase(TurnState):
    """The turn's start (member, model, client, history) and each step's request."""

    def _verified_member(self) -> Member:
        """The person's rights now, not when the turn was queued."""
        # With the organization and the person's preferences (one query): its instructions, the person's
        # and their chosen language go in the system prompt.
        membership = Membership.objects.filter(
            organization_id=self.turn.organization_id, user_id=self.turn.user_id
        ).select_related("organization", "user__preferences").first()
        if membership is None or self.turn.thread_id is None:
            raise TurnStopped(Turn.FailureKind.INTERNAL, NOTICES[Turn.FailureKind.INTERNAL])
        # Suspended before the turn started: it does not start (a running one finishes).
        if membership.is_suspended:
            raise TurnStopped(Turn.FailureKind.SUSPENDED, NOTICES[Turn.FailureKind.SUSPENDED])
        preferences = getattr(membership.user, "preferences", None)  # none until the person chooses
        self.system = system_prompt(organization=membership.organization.instructions, person=membership.instructions,
                                    language=preferences.language if preferences else "",
                                    identity=(display_name(membership.user), membership.organization.name))
        organization = membership.organization
        self.model_rule = (organization.model_option, organization.member_models)
        self.history_mode = history_mode_of(organization.history_mode, continuous=self.turn.thread.continuous)
        self.untrusted_writes = organization.untrusted_writes
        return Member(membership.organization_id, membership.user_id, membership.role,
                      tenant=tenant_of(organization))

    def _check_model(self) -> None:
        """A model chosen for the conversation must still be allowed when the
        turn starts (an admin may have changed the organization's options since)."""
        thread = self.turn.thread
        if thread is not None and thread.model_option and not option_allowed(
                self.turn.organization_id, self.turn.model_option, self.model_rule):
            raise TurnStopped(Turn.FailureKind.MODEL, MODEL_NOT_ALLOWED_NOTICE)

    def _open_client(self) -> None:
        """The client of this turn, on the organization's own key for the
        option's provider when it has one (opened here, in the worker, at the
        call), and the key source the turn records."""
        source = DEPLOYMENT
        if self.client is None:
            key = turn_key(self.option, self.turn.organization_id)
            source = key.source
            # The deployment's client is shared in the process (its connection
            # pool reused); one on an organization's key serves this turn only.
            self.client = (deployment_client(self.option) if source == DEPLOYMENT
                           else client_for(self.option, api_key=key.api_key))
        # Stored with the turn's end (finish_turn), in the same write.
        self.turn.key_source = self.key_source = source

    def _load_history(self) -> None:
        # Read once: the worker is the thread's only writer while it responds,
        # so each step appends what it wrote to what the loop holds. Under
        # "summarize", from the summary in use on (it brings the marks of what it stands for).
        summary = summary_in_use(self.turn.thread) if self.history_mode == SUMMARIZE else None
        # The same query reads the Stop flag: a Stop accepted since the turn's start
        # (its member, key and history reads) refuses the first model call.
        self.context = load_context(self.turn.thread_id, summary=summary, stop_of=self.turn.id)
        if self.context.stop_requested is not None:
            self.stop_known = self.context.stop_requested
        # The guard follows what the model is about to see: every tool result
        # in the history, from this turn or any earlier one.
        self.taint = taint_union(self.taint, self.context.taint)
        self.sources = list(dict.fromkeys([*self.sources, *self.context.sources]))

    def _next_request(self) -> ModelRequest:
        """The step's request within the model's window, its cost's bound held (_hold_for_call)."""
        max_tokens = output_tokens(self.option)
        fixed_bytes = len(self.system.encode()) + self.tools_bytes
        start = self._fit(input_room(self.option, max_tokens=max_tokens)
                          - request_token_bound(text_bytes=fixed_bytes, parts=0))
        history = sent_from(self.context.items, start)
        if start:  # a window: measure what is sent
            size, parts = history_bytes(history), history_parts(history)
        else:
            size, parts = self.context.size, self.context.parts
        self._hold_for_call(request_token_bound(text_bytes=fixed_bytes + size, parts=parts), max_tokens)
        return ModelRequest(system=self.system, history=history, tools=self.tool_specs, max_tokens=max_tokens)

    def _fit(self, room: int) -> int:
        """The index of the first history item sent, by the organization's
        choice; under "summarize", the summary is extended first when needed."""
        items = self.context.items
        try:
            if self.history_mode in (FULL, WINDOW, LAST):
                return self._fit_unsummarized(room)
            if self.context.tokens <= room:
                return 0  # all of it fits: nothing more to read
            fit = fit_summarized(items, starts=[start.index for start in self.context.starts],
                                 first=1 if self.context.summary else 0, latest=self._latest_fold(), room=room)
        except ConversationFull:
            raise TurnStopped(Turn.FailureKind.BOUNDS, bounds_notice("the conversation is full")) from None
        except HistoryTooLong:
            raise TurnStopped(Turn.FailureKind.BOUNDS, bounds_notice(TOO_LONG_FOR_MODEL)) from None
        if fit.fold:
            self._fold(fit.start, room)
            if self.context.tokens > room:
                raise TurnStopped(Turn.FailureKind.BOUNDS, bounds_notice(TOO_LONG_FOR_MODEL))
        return 0

    def _fit_unsummarized(self, room: int) -> int:
        """The first history item sent under "full", "window" or "last"."""
        items, context = self.context.items, self.context
        if self.history_mode == FULL:
            if context.size > settings.ASSISTANT_HISTORY_BYTES:
                raise ConversationFull
            return fit_full(items, room=room).start
        if self.history_mode == LAST:
            return fit_last(items, messages=context.messages, starts=[start.index for start in context.starts],
                            turn_start=self._turn_start(), count=settings.HISTORY_WINDOW, room=room).start
        return fit_window(items, room=room, max_bytes=settings.ASSISTANT_HISTORY_BYTES,
                          min_messages=settings.HISTORY_WINDOW).start

    def _turn_start(self) -> int:
        """The index of the current turn's first message (its events block, else the person's)."""
        starts = self.context.starts
        if not starts:
            return 0
        return next((s.index for s in starts if s.turn_id == self.turn.id), starts[-1].index)

    def _latest_fold(self) -> int:
        """The last item a summary may fold up to: the current turn's first
        message (its events block, else the person's), and never a pending card's proposal."""
        starts = self.context.starts
        if not starts:
            return 0
        latest = self._turn_start()
        pending = pending_card_seq(self.turn.thread_id)
        if pending is not None:  # the last start before the proposal's message
            latest = min(latest, max((s.index for s in starts if s.seq <= pending), default=0))
        return latest

    def _hold_for_call(self, input_bound: int, max_tokens: int, *, job: str = "run_turn") -> None:
        """Hold an upper bound of this call's cost before making it, so the turn
        can never spend what the organization was not granted. Holds more only
        when what the turn holds does not cover what it spent plus the bound."""
        self.call_input_bound, self.call_output_bound = input_bound, max_tokens
        bound = call_bound_micros(self.option, input_tokens=input_bound, output_tokens=max_tokens)
        needed = request_micros(self.option, self.usage) + bound
        if needed > micros_from_credits(settings.ASSISTANT_TURN_MAX_CREDITS):
            raise TurnStopped(Turn.FailureKind.CREDITS, CEILING_NOTICE)
        # On the organization's own key only CREDITS_OWN_KEY_RATE of it is charged.
        needed = charge_for(self.turn, needed)
        if needed <= self.held_micros:
            return
        try:
            # The turn row learns it with the step's progress; the ledger is the truth.
            self.held_micros = credits_reserve_more(turn_id=self.turn.id, micros=needed - self.held_micros, job=job)
        except CreditsExhausted as refusal:
            logger.info("turn_credits_exhausted", extra={"turn_id": str(self.turn.id), "needed_micros": needed,
                                                         "member_cap": isinstance(refusal, MemberCapReached)})
            notice = CAP_NOTICE if isinstance(refusal, MemberCapReached) else NOTICES[Turn.FailureKind.CREDITS]
            raise TurnStopped(Turn.FailureKind.CREDITS, notice) from None
