from django.urls import path

from assistant.web import tokens, views

urlpatterns = [
    path("", views.chat, name="web-chat"),
    path("c/<uuid:conversation_id>/", views.chat, name="web-conversation"),
    path("c/<uuid:conversation_id>/messages", views.conversation_messages, name="web-conversation-messages"),
    path("conversations/list", views.sidebar_list, name="web-sidebar"),
    path("cards/<uuid:card_id>/", views.card, name="web-card"),
    path("organizations/", views.organizations, name="web-organizations"),
    path("data/", views.data, name="web-data"),
    path("tokens/", tokens.token_list, name="web-tokens"),
    path("tokens/new", tokens.token_create, name="web-token-create"),
    path("tokens/<uuid:public_id>/revoke", tokens.token_revoke, name="web-token-revoke"),
    path("login/", views.login, name="login"),
    path("logout/", views.logout, name="logout"),
]
