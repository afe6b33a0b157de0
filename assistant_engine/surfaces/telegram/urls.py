from django.urls import path

from assistant_engine.surfaces.telegram import views

urlpatterns = [
    path("webhook", views.webhook, name="telegram-webhook"),
]
