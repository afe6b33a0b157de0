from django.urls import path

from assistant.api import ChatView, TurnEventsView, TurnView

urlpatterns = [
    path("chat", ChatView.as_view(), name="chat"),
    path("turns/<str:turn_id>", TurnView.as_view(), name="turn-detail"),
    path("turns/<str:turn_id>/events", TurnEventsView.as_view(), name="turn-events"),
]
