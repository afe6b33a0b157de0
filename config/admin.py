class ViewOnlyAdminMixin:
    """For admins and inlines that staff may look at but never edit by hand:
    the data is written by the services (ledger, turns, cards), and an edit
    would break what they keep consistent."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
