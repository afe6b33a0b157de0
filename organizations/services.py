from django.contrib.auth import get_user_model
from django.db import transaction

from organizations.models import Membership, Organization


def organization_create(*, slug: str, name: str, monthly_credits: int) -> Organization:
    return Organization.objects.create(slug=slug, name=name, monthly_credits=monthly_credits)


@transaction.atomic
def member_add(
    *,
    organization: Organization,
    username: str,
    role: str = Membership.Role.MEMBER,
    create_user: bool = False,
    password: str | None = None,
) -> Membership:
    User = get_user_model()
    user = User.objects.filter(username=username).first()
    if user is None:
        if not create_user:
            raise User.DoesNotExist(f"No user named {username!r}; pass --create-user to create one.")
        user = User.objects.create_user(username=username, password=password)
    membership, created = Membership.objects.get_or_create(
        organization=organization, user=user, defaults={"role": role}
    )
    if not created and membership.role != role:
        membership.role = role
        membership.save(update_fields=["role"])
    return membership
