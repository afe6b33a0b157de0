"""The shop's own pages: its sign-in (not the engine's) and its orders, with the assistant's panel."""

from django.contrib.auth import authenticate, login, logout
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST
from orders.models import Order
from stores.models import StoreMember


def sign_in(request):
    error = ""
    if request.method == "POST":
        user = authenticate(request, username=request.POST.get("email", ""), password=request.POST.get("password", ""))
        if user is not None:
            login(request, user)
            next_url = request.GET.get("next", "")
            safe = url_has_allowed_host_and_scheme(next_url, allowed_hosts={request.get_host()})
            return redirect(next_url if safe and next_url else "orders")
        error = "Wrong e-mail or password."
    return render(request, "shop/sign_in.html", {"error": error}, status=400 if error else 200)


@require_POST
def sign_out(request):
    logout(request)
    return redirect("sign-in")


@login_required
def orders(request):
    membership = StoreMember.objects.filter(user=request.user).select_related("store").order_by("store__name").first()
    store_orders = Order.objects.filter(store=membership.store) if membership else Order.objects.none()
    return render(request, "shop/orders.html", {"store": membership and membership.store, "orders": store_orders})
