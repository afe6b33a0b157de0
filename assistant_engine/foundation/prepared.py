"""UPDATEs of the hot paths, compiled by the ORM once instead of at every run.

Django compiles a queryset's SQL anew each time it runs: ~1 ms of Python for
an UPDATE with a filter, several times what the database then takes to run it
(SQLite: ~0.1 ms). A streaming turn writes its text every quarter second and
a worker runs hundreds of turns, so that compilation was most of the worker's
CPU left after the model stream itself (issue 36, `bench/turns.py`).

A `PreparedUpdate` is one statement's shape: `build(*values)` returns the
queryset and the values to set, as for `queryset.update(**values)`. The first
run on a database compiles it with the ORM, with probe values (unique, of each
argument's field type) where the arguments go, and notes where each probe
landed among the statement's parameters; later runs put the new values, made
ready by the field as the ORM would, in those places. So the SQL is the ORM's
own (its quoting, its dialect, its expressions) and the statement is counted
like any other (`django_assert_num_queries`, `connection.queries`).

An argument that is a bool or None is part of the shape, not a probe (a bool
can't be told from another one among the parameters; None changes the SQL):
each combination is compiled once.
"""

import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from django.db import connections, router, transaction
from django.db.models import Field, Model, QuerySet
from django.db.models.sql.subqueries import UpdateQuery

Build = Callable[..., tuple[QuerySet, dict[str, Any]]]


class CannotPrepare(TypeError):
    """The statement's shape can't be prepared (a probe did not land among its parameters)."""


class PreparedUpdate:
    def __init__(self, model: type[Model], build: Build, *fields: Field):
        """`fields`: the field each argument of `build` is a value of (for its probe and its preparation)."""
        self.model, self.build, self.fields = model, build, fields
        # (database alias, the bool/None arguments) → (sql, parameters, where each argument goes)
        self._compiled: dict[tuple, tuple[str, list, list[tuple[int, list[int]]]]] = {}

    def __call__(self, *values: Any) -> int:
        """Run it with these values; the number of rows it updated."""
        if len(values) != len(self.fields):
            raise TypeError(f"expected {len(self.fields)} values, got {len(values)}")
        alias = router.db_for_write(self.model)
        key = (alias, tuple(value if _in_shape(value) else _PROBED for value in values))
        compiled = self._compiled.get(key)
        if compiled is None:
            compiled = self._compiled[key] = self._compile(alias, values)
        sql, template, slots = compiled
        connection = connections[alias]
        params = list(template)
        for index, positions in slots:
            ready = self.fields[index].get_db_prep_save(values[index], connection)
            for position in positions:
                params[position] = ready
        with transaction.mark_for_rollback_on_error(using=alias), connection.cursor() as cursor:
            cursor.execute(sql, params)
            return cursor.rowcount

    def _compile(self, alias: str, values: tuple) -> tuple[str, list, list[tuple[int, list[int]]]]:
        """Compiled twice, with two sets of probes: a probe that happened to
        equal one of the statement's constants would not land in the same places."""
        first, second = self._with_probes(alias, values), self._with_probes(alias, values)
        if first[0] != second[0] or first[2] != second[2]:
            raise CannotPrepare("the statement's shape depends on its values")
        return first

    def _with_probes(self, alias: str, values: tuple) -> tuple[str, list, list[tuple[int, list[int]]]]:
        connection = connections[alias]
        probes = [value if _in_shape(value) else _probe(field, connection)
                  for field, value in zip(self.fields, values, strict=True)]
        queryset, updates = self.build(*probes)
        query = queryset.query.chain(UpdateQuery)
        query.add_update_values(updates)
        query.clear_select_clause()
        sql, params = query.get_compiler(alias).as_sql()
        params = list(params)
        slots = []
        for index, (field, value) in enumerate(zip(self.fields, values, strict=True)):
            if _in_shape(value):
                continue
            ready = field.get_db_prep_save(probes[index], connection)
            positions = [position for position, param in enumerate(params) if param == ready]
            if not positions:
                raise CannotPrepare(f"argument {index} ({field.name}) is not among the statement's parameters")
            slots.append((index, positions))
        return sql, params, slots


_PROBED = object()


def _in_shape(value: Any) -> bool:
    return value is None or isinstance(value, bool)


def _probe(field: Field, connection) -> Any:
    """A value of the field's type, unlikely to equal any other parameter of the statement."""
    internal = field.get_internal_type()
    token = uuid.uuid4()
    if internal == "UUIDField":
        return token
    if internal == "DateTimeField":
        return datetime(2001, 1, 1, tzinfo=UTC) + timedelta(microseconds=token.int % 10**12)
    if internal in ("CharField", "TextField"):
        return f"probe:{token.hex}"
    if internal.endswith("IntegerField") or internal in ("AutoField", "BigAutoField", "SmallAutoField"):
        # Within the column's range: the ORM makes a lookup out of it a constant false.
        low, high = connection.ops.integer_field_range(internal)
        low, high = max(low if low is not None else 0, 1_000), min(high if high is not None else 2**31 - 1, 2**31 - 1)
        return low + token.int % (high - low)
    raise CannotPrepare(f"no probe for a {internal}")
