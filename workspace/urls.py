from django.urls import path

from workspace import views

urlpatterns = [
    path("notes/", views.notes, name="workspace-notes"),
    path("notes/<int:note_id>/", views.note, name="workspace-note"),
    path("notes/<int:note_id>/delete", views.note_delete, name="workspace-note-delete"),
    path("inbox/", views.inbox, name="workspace-inbox"),
    path("sent/", views.sent, name="workspace-sent"),
]
