from django.urls import path

from conversations.api import ConversationDetailView, ConversationListView

urlpatterns = [
    path("conversations", ConversationListView.as_view(), name="conversation-list"),
    path("conversations/<str:conversation_id>", ConversationDetailView.as_view(), name="conversation-detail"),
]
