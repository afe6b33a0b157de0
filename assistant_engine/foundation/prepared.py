"""The hot paths' UPDATEs and reads, compiled by the ORM once instead of at every run.

Django compiles a queryset's SQL anew each time it runs: ~1 ms of Python for
an UPDATE with a filter, several times what the database then takes to run it
(SQLite: ~0.1 ms). A streaming turn writes its text every quarter second and
a worker runs hundreds of turns; a turn's start and end read and write the
same few rows every time (issue 36: `bench/compare.py`, `bench/turns.py`).

A `PreparedUpdate` is one statement's shape: `build(*values)` returns the
queryset and the values to set, as for `queryset.update(**values)`; a
`PreparedValues`, a `values_list()` queryset, its rows converted by the ORM's
own converters. The first run on a database compiles it with the ORM, with
probe values (unique, of each argument's field type) where the arguments go,
and notes where each probe landed among the statement's parameters; later runs
put the new values, made ready by the field as the ORM would, in those places.
So the SQL is the ORM's own (its quoting, its dialect, its expressions) and
the statement is counted like any other (`django_assert_num_queries`,
`connection.queries`).

An argument that is a bool or None is part of the shape, not a probe (a bool
can't be told from another one among the parameters; None changes the SQL):
each combination is compiled once.
"""

import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

from django.conf import settings
from django.db import connections, router, transaction
from django.db.models import Field, Model
from django.db.models.sql.subqueries import UpdateQuery


class CannotPrepare(TypeError):
    """The statement's shape can't be prepared (a probe did not land among its parameters)."""


class _Prepared:
    """One statement's shape, compiled once per database and shape."""

    def __init__(self, model: type[Model], build: Callable, *fields: Field):
        """`fields`: the field each argument of `build` is a value of (for its probe and its preparation)."""
        self.model, self.build, self.fields = model, build, fields
        # (database alias, the bool/None arguments) → the compiled statement
        self._compiled: dict[tuple, _Compiled] = {}

    def _run(self, alias: str, values: tuple, take: Callable[[Any, "_Compiled"], Any]) -> Any:
        """What `take(cursor, compiled)` takes of the statement run with these values."""
        if len(values) != len(self.fields):
            raise TypeError(f"expected {len(self.fields)} values, got {len(values)}")
        key = (alias, tuple(value if _in_shape(value) else _PROBED for value in values))
        compiled = self._compiled.get(key)
        if compiled is None:
            compiled = self._compiled[key] = self._compile(alias, values)
        connection = connections[alias]
        params = list(compiled.params)
        for index, positions in compiled.slots:
            ready = self.fields[index].get_db_prep_save(values[index], connection)
            for position in positions:
                params[position] = ready
        with transaction.mark_for_rollback_on_error(using=alias), connection.cursor() as cursor:
            cursor.execute(compiled.sql, params)
            return take(cursor, compiled)

    def _compile(self, alias: str, values: tuple) -> "_Compiled":
        """Compiled twice, with two sets of probes: a probe that happened to
        equal one of the statement's constants would not land in the same places."""
        first, second = self._with_probes(alias, values), self._with_probes(alias, values)
        if first.sql != second.sql or first.slots != second.slots:
            raise CannotPrepare("the statement's shape depends on its values")
        return first

    def _with_probes(self, alias: str, values: tuple) -> "_Compiled":
        connection = connections[alias]
        probes = [value if _in_shape(value) else _probe(field, connection)
                  for field, value in zip(self.fields, values, strict=True)]
        compiler = self._compiler(alias, *probes)
        sql, params = compiler.as_sql()
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
        width = compiler.col_count if self.reads else 0
        columns = [column for column, _, _ in compiler.select[:width]] if self.reads else []
        return _Compiled(sql, params, slots, width, compiler.get_converters(columns) if columns else {})

    reads = False

    def _compiler(self, alias: str, *probes: Any):
        raise NotImplementedError


class _Compiled(NamedTuple):
    sql: str
    params: list
    slots: list[tuple[int, list[int]]]  # (argument, its places among the parameters)
    width: int  # the columns a row of it has (a read)
    converters: dict  # by column: the ORM's converters of its values (SQLite's UUIDs, dates)


class PreparedUpdate(_Prepared):
    """`build(*values)` returns the queryset and what to set, as for `queryset.update(**values)`."""

    def __call__(self, *values: Any) -> int:
        """Run it with these values; the number of rows it updated."""
        return self._run(router.db_for_write(self.model), values, lambda cursor, _: cursor.rowcount)

    def _compiler(self, alias: str, *probes: Any):
        queryset, updates = self.build(*probes)
        query = queryset.query.chain(UpdateQuery)
        query.add_update_values(updates)
        query.clear_select_clause()
        return query.get_compiler(alias)


class PreparedValues(_Prepared):
    """`build(*values)` returns a `values_list()` queryset; a call, its rows as
    tuples, each column converted as the ORM would (SQLite's UUIDs, dates).
    `for_update`: the queryset locks its rows (select_for_update), so it runs
    on the database the ORM writes to, and only inside a transaction."""

    reads = True

    def __init__(self, model: type[Model], build: Callable, *fields: Field, for_update: bool = False):
        super().__init__(model, build, *fields)
        self.for_update = for_update

    def __call__(self, *values: Any) -> list[tuple]:
        alias = router.db_for_write(self.model) if self.for_update else router.db_for_read(self.model)
        if self.for_update and connections[alias].get_autocommit():
            raise transaction.TransactionManagementError("a locking read runs inside a transaction")
        return self._run(alias, values, lambda cursor, compiled: _rows(cursor.fetchall(), compiled, alias))

    def _compiler(self, alias: str, *probes: Any):
        queryset = self.build(*probes)
        if bool(queryset.query.select_for_update) != self.for_update:
            raise CannotPrepare("for_update says whether the queryset locks its rows")
        return queryset.query.get_compiler(alias)


def _rows(rows: list, compiled: "_Compiled", alias: str) -> list[tuple]:
    if not compiled.converters:
        return [tuple(row[:compiled.width]) for row in rows]
    connection = connections[alias]
    return [_converted(row[:compiled.width], compiled.converters, connection) for row in rows]


def _converted(row, converters: dict, connection) -> tuple:
    row = list(row)
    for position, (functions, expression) in converters.items():
        value = row[position]
        for function in functions:
            value = function(value, expression, connection)
        row[position] = value
    return tuple(row)


_PROBED = object()


def _in_shape(value: Any) -> bool:
    return value is None or isinstance(value, bool)


def _probe(field: Field, connection) -> Any:
    """A value of the field's type, unlikely to equal any other parameter of the statement."""
    if field.is_relation:  # a foreign key: a value of the field it points to
        field = field.target_field
    internal = field.get_internal_type()
    token = uuid.uuid4()
    if internal == "UUIDField":
        return token
    if internal == "DateTimeField":  # aware or not as the product's dates are (USE_TZ)
        return datetime(2001, 1, 1, tzinfo=UTC if settings.USE_TZ else None) + timedelta(
            microseconds=token.int % 10**12)
    if internal in ("CharField", "TextField"):
        return f"probe:{token.hex}"
    if internal.endswith("IntegerField") or internal in ("AutoField", "BigAutoField", "SmallAutoField"):
        # Within the column's range: the ORM makes a lookup out of it a constant false.
        low, high = connection.ops.integer_field_range(internal)
        low, high = max(low if low is not None else 0, 1_000), min(high if high is not None else 2**31 - 1, 2**31 - 1)
        return low + token.int % (high - low)
    raise CannotPrepare(f"no probe for a {internal}")
