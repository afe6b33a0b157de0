from django.urls import path

from assistant.web import views

urlpatterns = [
    path("", views.chat, name="web-chat"),
    path("c/<uuid:conversation_id>/", views.chat, name="web-conversation"),
    path("c/<uuid:conversation_id>/messages", views.conversation_messages, name="web-conversation-messages"),
    path("conversations/list", views.sidebar_list, name="web-sidebar"),
    path("cards/<uuid:card_id>/", views.card, name="web-card"),
    path("organizations/", views.organizations, name="web-organizations"),
    path("data/", views.data, name="web-data"),
    path("login/", views.login, name="login"),
    path("logout/", views.logout, name="logout"),
]
