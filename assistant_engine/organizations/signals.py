"""A removed member's API tokens in that organization go with the membership.

A signal, not a service: a membership is deleted by several doors that share
no code of ours — the admin's delete page and bulk action, the organization
page's inline in the admin, a person's erasure, the cascade of a deleted user
or organization, a shell — and a token left behind would come back to life if
the person were added again. The receiver runs inside the deletion's own
transaction (Django's Collector), so the tokens go exactly when the membership
does. Suspension keeps the tokens: lifting it restores access (the guard
refuses a suspended membership meanwhile).
"""

from django.db.models.signals import post_delete, pre_save
from django.dispatch import receiver

from assistant_engine.organizations.models import Membership
from assistant_engine.organizations.tokens import delete_tokens_in

# The fields that say whose membership in which organization it is (names and attnames).
PAIR_FIELDS = {"user", "user_id", "organization", "organization_id"}


@receiver(post_delete, sender=Membership, dispatch_uid="membership_removed_deletes_its_tokens")
def membership_removed_deletes_its_tokens(sender, instance: Membership, **kwargs) -> None:
    delete_tokens_in(organization_id=instance.organization_id, user_id=instance.user_id)


@receiver(pre_save, sender=Membership, dispatch_uid="membership_moved_deletes_its_tokens")
def membership_moved_deletes_its_tokens(sender, instance: Membership, update_fields=None, raw=False,
                                        **kwargs) -> None:
    """An existing membership given another person or organization (the admin's
    form allows it) is the removal of the old pair: its tokens go too. One
    query, on a save that may move it (not a fixture's, nor one limited to
    other fields, like a cap's or a suspension's)."""
    if raw or instance.pk is None or (update_fields is not None and not PAIR_FIELDS & set(update_fields)):
        return
    before = Membership.objects.filter(pk=instance.pk).values_list("organization_id", "user_id").first()
    if before is not None and before != (instance.organization_id, instance.user_id):
        delete_tokens_in(organization_id=before[0], user_id=before[1])
