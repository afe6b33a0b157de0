from django.urls import path

import config.converters  # noqa: F401  (registers the api_id path converter)
from conversations.api import ConversationDetailView, ConversationListView
from conversations.export_api import ConversationExportView
from conversations.feedback_api import MessageFeedbackView

urlpatterns = [
    path("conversations", ConversationListView.as_view(), name="conversation-list"),
    path("conversations/<api_id:conversation_id>", ConversationDetailView.as_view(), name="conversation-detail"),
    path("conversations/<api_id:conversation_id>/export", ConversationExportView.as_view(),
         name="conversation-export"),
    path("messages/<api_id:message_id>/feedback", MessageFeedbackView.as_view(), name="message-feedback"),
]
