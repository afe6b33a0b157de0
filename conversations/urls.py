from django.urls import path

import assistant_engine.foundation.converters  # noqa: F401  (registers the api_id path converter)
from conversations.api import ConversationDetailView, ConversationListView
from conversations.export_api import ConversationExportView
from conversations.feedback_api import MessageFeedbackView
from conversations.files_api import FileContentView, FileUploadView, FileView

urlpatterns = [
    path("conversations", ConversationListView.as_view(), name="conversation-list"),
    path("conversations/<api_id:conversation_id>", ConversationDetailView.as_view(), name="conversation-detail"),
    path("conversations/<api_id:conversation_id>/export", ConversationExportView.as_view(),
         name="conversation-export"),
    path("messages/<api_id:message_id>/feedback", MessageFeedbackView.as_view(), name="message-feedback"),
    path("files", FileUploadView.as_view(), name="file-upload"),
    path("files/<api_id:file_id>", FileView.as_view(), name="file-detail"),
    path("files/<api_id:file_id>/content", FileContentView.as_view(), name="file-content"),
]
