from django.urls import path

from web import views

urlpatterns = [
    path("", views.orders, name="orders"),
    path("sign-in/", views.sign_in, name="sign-in"),
    path("sign-out/", views.sign_out, name="sign-out"),
]
