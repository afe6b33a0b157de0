from django.urls import path

from assistant.api import ChatView, EditView, RegenerateView, TurnCancelView, TurnEventsView, TurnView
from assistant.cards_api import CardCancelView, CardConfirmView, CardView
from assistant.me_api import MyExportView

urlpatterns = [
    path("chat", ChatView.as_view(), name="api-chat"),
    path("conversations/<str:conversation_id>/regenerate", RegenerateView.as_view(), name="conversation-regenerate"),
    path("conversations/<str:conversation_id>/edit", EditView.as_view(), name="conversation-edit"),
    path("turns/<str:turn_id>", TurnView.as_view(), name="turn-detail"),
    path("turns/<str:turn_id>/events", TurnEventsView.as_view(), name="turn-events"),
    path("turns/<str:turn_id>/cancel", TurnCancelView.as_view(), name="turn-cancel"),
    path("cards/<str:card_id>", CardView.as_view(), name="card-detail"),
    path("cards/<str:card_id>/confirm", CardConfirmView.as_view(), name="card-confirm"),
    path("cards/<str:card_id>/cancel", CardCancelView.as_view(), name="card-cancel"),
    path("me/export", MyExportView.as_view(), name="me-export"),
]
