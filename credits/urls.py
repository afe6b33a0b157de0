from django.urls import path

from credits.api import CreditsView

urlpatterns = [
    path("credits", CreditsView.as_view(), name="credits"),
]
