from django.urls import path

from assistant_engine.surfaces.ai_memory.api import AiConversationDetailView, AiConversationListView

urlpatterns = [
    path("conversations", AiConversationListView.as_view(), name="ai-conversation-list"),
    path("conversations/<str:conversation_id>", AiConversationDetailView.as_view(), name="ai-conversation-detail"),
]
