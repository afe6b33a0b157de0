from django.urls import path

import assistant_engine.foundation.converters  # noqa: F401  (registers the api_id path converter)
from assistant.api import (
    EditView,
    RegenerateView,
    TurnCancelView,
    TurnView,
    chat_endpoint,
)
from assistant.cards_api import CardCancelView, CardConfirmView, CardView
from assistant.events_api import TurnEventsView, async_endpoint
from assistant.me_api import MyExportView, MyInstructionsView, MyModelsView

urlpatterns = [
    path("chat", chat_endpoint(), name="api-chat"),
    path("conversations/<api_id:conversation_id>/regenerate", RegenerateView.as_view(),
         name="conversation-regenerate"),
    path("conversations/<api_id:conversation_id>/edit", EditView.as_view(), name="conversation-edit"),
    path("turns/<api_id:turn_id>", TurnView.as_view(), name="turn-detail"),
    path("turns/<api_id:turn_id>/events", async_endpoint(TurnEventsView.as_view()), name="turn-events"),
    path("turns/<api_id:turn_id>/cancel", TurnCancelView.as_view(), name="turn-cancel"),
    path("cards/<api_id:card_id>", CardView.as_view(), name="card-detail"),
    path("cards/<api_id:card_id>/confirm", CardConfirmView.as_view(), name="card-confirm"),
    path("cards/<api_id:card_id>/cancel", CardCancelView.as_view(), name="card-cancel"),
    path("me/export", MyExportView.as_view(), name="me-export"),
    path("me/instructions", MyInstructionsView.as_view(), name="me-instructions"),
    path("me/models", MyModelsView.as_view(), name="me-models"),
]
