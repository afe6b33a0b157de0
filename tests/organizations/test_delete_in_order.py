"""The erasers' shared body (organizations.personal_data.delete_in_order): a
batch never goes past its size, takes the querysets in order and touches
nobody else's rows."""

from assistant_engine.organizations.personal_data import delete_in_order
from workspace.models import Note, SentEmail


def note(person, title: str) -> Note:
    return Note.objects.create(organization=person.organization, owner=person.user, title=title, body="")


def sent(person, subject: str) -> SentEmail:
    return SentEmail.objects.create(organization=person.organization, sender=person.user,
                                    from_address="a@example.com", to="b@example.com", subject=subject, body="")


def test_a_batch_fills_from_the_first_queryset_then_the_next_and_stops_when_full(owner, colleague):
    for title in ("a", "b", "c"):
        note(owner, title)
    first_email, second_email = sent(owner, "one"), sent(owner, "two")
    kept = note(colleague, "colin's")
    assert first_email.pk < second_email.pk

    def the_persons_rows():
        return (Note.objects.filter(owner=owner.user), SentEmail.objects.filter(sender=owner.user))

    assert delete_in_order(the_persons_rows(), 4) == 4
    assert not Note.objects.filter(owner=owner.user).exists()
    assert list(SentEmail.objects.filter(sender=owner.user)) == [second_email]  # by primary key: the first went

    assert delete_in_order(the_persons_rows(), 4) == 1  # fewer than the batch: nothing left
    assert delete_in_order(the_persons_rows(), 4) == 0
    assert list(Note.objects.all()) == [kept]
