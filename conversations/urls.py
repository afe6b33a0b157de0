from django.urls import path

import config.converters  # noqa: F401  (registers the api_id path converter)
from conversations.api import ConversationDetailView, ConversationListView

urlpatterns = [
    path("conversations", ConversationListView.as_view(), name="conversation-list"),
    path("conversations/<api_id:conversation_id>", ConversationDetailView.as_view(), name="conversation-detail"),
]
