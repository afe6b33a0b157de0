from django.urls import path
from django.views.i18n import JavaScriptCatalog

from assistant_engine.web import instructions, language, organization, panel, telegram_link, tokens, views

urlpatterns = [
    path("", views.chat, name="web-chat"),
    path("c/<uuid:conversation_id>/", views.chat, name="web-conversation"),
    path("c/<uuid:conversation_id>/messages", views.conversation_messages, name="web-conversation-messages"),
    path("out/", views.outbound, name="web-outbound"),
    path("conversations/list", views.sidebar_list, name="web-sidebar"),
    path("cards/<uuid:card_id>/", views.card, name="web-card"),
    path("organizations/", views.organizations, name="web-organizations"),
    path("data/", views.data, name="web-data"),
    path("organization/", organization.organization, name="web-organization"),
    path("organization/model", organization.choose_model, name="web-organization-model"),
    path("organization/member-models", organization.choose_member_models, name="web-organization-member-models"),
    path("organization/history-mode", organization.choose_history_mode, name="web-organization-history-mode"),
    path("organization/untrusted-writes", organization.choose_untrusted_writes,
         name="web-organization-untrusted-writes"),
    path("organization/instructions", organization.save_instructions, name="web-organization-instructions"),
    path("organization/keys", organization.save_key, name="web-organization-key-save"),
    path("organization/keys/<str:provider>/remove", organization.remove_key, name="web-organization-key-remove"),
    path("organization/default-cap", organization.default_cap, name="web-organization-default-cap"),
    path("organization/credit-alerts", organization.choose_credit_alerts, name="web-organization-credit-alerts"),
    path("organization/members/<int:user_id>/cap", organization.member_cap, name="web-organization-member-cap"),
    path("organization/members/<int:user_id>/suspend", organization.suspend, name="web-organization-suspend"),
    path("organization/members/<int:user_id>/restore", organization.restore, name="web-organization-restore"),
    path("organization/usage.csv", organization.usage_csv, name="web-organization-usage"),
    path("instructions/", instructions.instructions_page, name="web-instructions"),
    path("tokens/", tokens.token_list, name="web-tokens"),
    path("tokens/new", tokens.token_create, name="web-token-create"),
    path("tokens/<uuid:public_id>/revoke", tokens.token_revoke, name="web-token-revoke"),
    path("telegram/link/", telegram_link.link_page, name="telegram-link"),
    path("language", language.choose_language, name="web-language"),
    # The assistant panel of host pages ({% assistant_panel %}): its state and its conversation.
    path("assistant/panel/state", panel.panel_state, name="web-panel-state"),
    path("assistant/panel/chat", panel.panel_chat, name="web-panel-chat"),
    # The browser script's strings (locale/*/LC_MESSAGES/djangojs.po) as a script.
    path("jsi18n/", JavaScriptCatalog.as_view(packages=["assistant_engine.web"]), name="web-jsi18n"),
    path("login/", views.login, name="login"),
    path("logout/", views.logout, name="logout"),
]

# The engine's own sign-in pages, for a deployment without a product of its own
# (the demo): a product signs people in itself, so assistant.kit.urls leaves them out.
SIGN_IN = {"login", "logout"}
pages = [pattern for pattern in urlpatterns if pattern.name not in SIGN_IN]
sign_in = [pattern for pattern in urlpatterns if pattern.name in SIGN_IN]
