"""The shop's guard for the assistant (settings.ASSISTANT_MEMBER_RESOLVER): the
signed-in person and the store they work in; None when they work in none."""

from stores.models import StoreMember


def resolve_member(request):
    if not request.user.is_authenticated:
        return None
    membership = StoreMember.objects.filter(user=request.user).select_related("store").order_by("store__name").first()
    if membership is None:
        return None
    return {
        "tenant": membership.store.key,
        "tenant_name": membership.store.name,
        "user": request.user,
        "admin": membership.role == StoreMember.Role.OWNER,
    }
