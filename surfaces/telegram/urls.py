from django.urls import path

from surfaces.telegram import views

urlpatterns = [
    path("webhook", views.webhook, name="telegram-webhook"),
]
