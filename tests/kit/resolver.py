"""A product's guard for the tests, with no model of its own: a person's tenant
is the group they are in ("store:<key>:<name>"); staff are its admins. A
person in no such group is not a member (None)."""

PREFIX = "store:"


def resolve_member(request):
    user = request.user
    if not user.is_authenticated:
        return None
    group = user.groups.filter(name__startswith=PREFIX).order_by("name").first()
    if group is None:
        return None
    _, key, name = group.name.split(":", 2)
    return {"tenant": key, "tenant_name": name, "user": user, "admin": user.is_staff}


def broken_resolver(request):
    return {"tenant": "", "user": request.user}
