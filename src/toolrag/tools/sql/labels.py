"""Names next to ids in ``run_sql`` results.

A small model asked *who* answers with what the rows hold, and ``V02`` is not an answer. After
a read query returns rows, each result column that holds a key of a table with a label column
gets a ``<column>_name`` column with that row's label, so the name is there to copy.

Everything comes from the database's own schema (reflection), for any database:

- a *label column* of a table is the first of ``name``, ``title``, ``label``, ``full_name``,
  ``display_name`` or ``<table-singular>_name`` it has (case and ``_`` ignored, so ``Name`` and
  ``FullName`` count) -- :func:`label_column`;
- a *link* goes from a ``(table, column)`` to the table and key column where its label is: a
  single-column foreign key to an allowed table with a label, or the single-column primary key
  of an allowed table with a label (:func:`reflect_labels`);
- a result column is mapped back to the ``table.column`` it reads with sqlglot: ``qualify``
  (with the reflected schema) qualifies every column and expands ``*``, and the scopes trace a
  column through aliases, derived tables, CTEs, ``UNION`` branches (all must agree) and
  ``COALESCE``/``MIN``/``MAX`` (:func:`column_sources`). When sqlglot cannot map the query,
  a result column whose name is a linked column of one of the query's tables is used instead,
  if all those tables agree on where its label is (:func:`plan_labels`).

The lookups themselves (one parameterised ``WHERE key IN (...)`` query per labelled column) run
in :meth:`toolrag.tools.sql.spec.SQLToolSpec.execute`, through
:meth:`toolrag.tools.sql.db.ReadOnlyDatabase.lookup`.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

import sqlglot
from sqlalchemy.engine import Engine
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.scope import Scope, build_scope
from sqlglot.schema import MappingSchema

LABEL_COLUMNS = ("name", "title", "label", "full_name", "display_name")
LABEL_SUFFIX = "_name"
# A table of people names them in these columns; its ``title`` is a job title or an honorific
# (Chinook's and Northwind's employees, AdventureWorks' Person), not a name.
_PERSON_PARTS = frozenset({"firstname", "lastname", "givenname", "familyname", "surname"})

Source = tuple[str, str]  # (table, column), lower-case


@dataclass(frozen=True)
class Target:
    """Where an id's name is: ``label`` on the row of ``table`` whose ``key`` is the id."""

    table: str
    key: str
    label: str


@dataclass
class LabelMap:
    """The links of one database's allowed tables, and their columns for sqlglot."""

    links: dict[Source, Target] = field(default_factory=dict)
    columns: dict[str, list[str]] = field(default_factory=dict)
    _schemas: dict[str, MappingSchema] = field(default_factory=dict, repr=False)

    @property
    def linked_tables(self) -> frozenset[str]:
        return frozenset(t for t, _ in self.links)

    def sqlglot_schema(self, dialect: str) -> MappingSchema:
        """The allowed tables' columns for sqlglot, named as the dialect resolves a quoted
        name (the reflected names are exact: ``"Customer"`` stays so on PostgreSQL)."""
        if dialect not in self._schemas:
            rules = Dialect.get_or_raise(dialect)

            def exact(name: str) -> str:
                return str(rules.normalize_identifier(exp.to_identifier(name, quoted=True)).name)

            mapping: dict[str, object] = {
                exact(t): {exact(c): "TEXT" for c in cols} for t, cols in self.columns.items()
            }
            self._schemas[dialect] = MappingSchema(mapping, dialect=dialect, normalize=False)
        return self._schemas[dialect]


@dataclass(frozen=True)
class Label:
    """One column to add: the name of the id in result column ``index``."""

    index: int
    column: str
    target: Target


def _norm(name: str) -> str:
    return name.lower().replace("_", "")


def _singulars(table: str) -> list[str]:
    t = table.lower()
    forms = [t]
    if t.endswith("ies"):
        forms.append(t[:-3] + "y")
    if t.endswith("es"):
        forms.append(t[:-2])
    if t.endswith("s"):
        forms.append(t[:-1])
    return forms


def label_column(table: str, columns: Sequence[str]) -> str | None:
    """The column of ``table`` that names its rows, or None: the first of ``name``,
    ``title``, ``label``, ``full_name``, ``display_name``, ``<table-singular>_name`` (case and
    ``_`` ignored). ``title`` does not count in a table with first/last-name columns."""
    by_norm: dict[str, str] = {}
    for c in columns:
        by_norm.setdefault(_norm(c), c)
    if _PERSON_PARTS.intersection(by_norm):
        by_norm.pop("title", None)
    for wanted in (*LABEL_COLUMNS, *(f"{s}{LABEL_SUFFIX}" for s in _singulars(table))):
        found = by_norm.get(_norm(wanted))
        if found is not None:
            return found
    return None


def reflect_labels(engine: Engine, tables: Collection[str]) -> LabelMap:
    """The links among ``tables`` (the allow-list): only these tables are ever read for a
    label. Raises SQLAlchemy's errors when the schema cannot be read."""
    from sqlalchemy import inspect

    insp = inspect(engine)
    allowed = set(tables)
    columns = {t: [str(c["name"]) for c in insp.get_columns(t)] for t in tables}
    labels = {t: label_column(t, cols) for t, cols in columns.items()}
    links: dict[Source, Target] = {}
    for t in tables:  # a labelled table's own key
        label = labels[t]
        pk = insp.get_pk_constraint(t).get("constrained_columns") or []
        if label and len(pk) == 1 and pk[0] and pk[0] != label:
            links[(t.lower(), str(pk[0]).lower())] = Target(t, str(pk[0]), label)
    for t in tables:  # foreign keys to a labelled, allowed table (these win over the above)
        for fk in insp.get_foreign_keys(t):
            src, ref = fk["constrained_columns"], fk["referred_columns"]
            other = fk["referred_table"]
            if (
                len(src) != 1
                or len(ref) != 1
                or not ref[0]
                or other not in allowed
                or fk.get("referred_schema") not in (None, insp.default_schema_name)
            ):
                continue
            label = labels[other]
            if label and ref[0] != label:
                links[(t.lower(), str(src[0]).lower())] = Target(other, str(ref[0]), label)
    return LabelMap(links=links, columns=columns)


# --- result column -> table.column ----------------------------------------------------------
def column_sources(
    sql: str, dialect: str, schema: MappingSchema | None
) -> list[frozenset[Source]] | None:
    """Per result column, the ``(table, column)`` pairs its values come from (empty: computed,
    or not traceable); None when sqlglot cannot qualify the query."""
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
        tree = qualify(tree, dialect=dialect, schema=schema, validate_qualify_columns=False)
        root = build_scope(tree)
        if root is None:
            return None
        return [_sources_at(root, i) for i in range(len(_selects(root)))]
    except Exception:  # sqlglot's OptimizeError, SchemaError, ...: the name fallback instead
        return None


def _selects(scope: Scope) -> list[exp.Expr]:
    while isinstance(scope.expression, exp.SetOperation) and scope.set_operation_scopes:
        scope = scope.set_operation_scopes[0]
    query = scope.expression
    return list(query.selects) if isinstance(query, exp.Query) else []


def _sources_at(scope: Scope, index: int) -> frozenset[Source]:
    if isinstance(scope.expression, exp.SetOperation):  # a UNION: each branch's column there
        parts = [_sources_at(s, index) for s in scope.set_operation_scopes]
        return frozenset().union(*parts) if all(parts) else frozenset()
    selects = _selects(scope)
    return _expr_sources(scope, selects[index]) if index < len(selects) else frozenset()


def _expr_sources(scope: Scope, node: exp.Expr) -> frozenset[Source]:
    while isinstance(node, exp.Alias | exp.Paren):
        node = node.this
    if isinstance(node, exp.Column):
        source = scope.sources.get(node.table)
        if isinstance(source, exp.Table):
            return frozenset({(str(source.name).lower(), str(node.name).lower())})
        if isinstance(source, Scope):  # a derived table or CTE: its column of that name
            name = str(node.name).lower()
            for i, select in enumerate(_selects(source)):
                if str(select.alias_or_name).lower() == name:
                    return _sources_at(source, i)
        return frozenset()
    if isinstance(node, exp.Coalesce | exp.Min | exp.Max):  # USING joins, MIN(id)
        parts = [_expr_sources(scope, a) for a in (node.this, *node.expressions)]
        return frozenset().union(*parts) if parts and all(parts) else frozenset()
    return frozenset()


def plan_labels(
    columns: Sequence[str],
    sources: list[frozenset[Source]] | None,
    query_tables: Collection[str],
    labels: LabelMap,
) -> list[Label]:
    """The ``<column>_name`` columns to add: for each result column that holds a linked key,
    unless the query already selects that label or the new name is taken."""
    lowered = [c.lower() for c in columns]
    if sources is not None and len(sources) != len(columns):
        sources = None  # the mapping does not line up with what the database returned
    selected: set[Source] = set().union(*sources) if sources else set()
    untraced = {lowered[i] for i in range(len(columns)) if sources is None or not sources[i]}
    taken = set(lowered)
    plan = []
    for i, name in enumerate(columns):
        if sources is not None:
            found = {labels.links.get(s) for s in sources[i]}
        else:  # by name over the query's tables
            found = {
                labels.links[(t.lower(), lowered[i])]
                for t in query_tables
                if (t.lower(), lowered[i]) in labels.links
            }
        if len(found) != 1:
            continue
        target = found.pop()
        if target is None:
            continue
        new = f"{name}{LABEL_SUFFIX}"
        label = target.label.lower()
        if (target.table.lower(), label) in selected or label in untraced or new.lower() in taken:
            continue  # the query shows the name already (or a column of that name exists)
        taken.add(new.lower())
        plan.append(Label(index=i, column=new, target=target))
    return plan
