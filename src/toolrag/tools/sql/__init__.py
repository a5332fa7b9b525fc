"""SQL tools over any SQLAlchemy database: the tool spec, the read-only guard in three layers
(parse, connection, limits) and the sample database's seed build."""

from toolrag.tools.sql.columns import Rename, renamed_columns
from toolrag.tools.sql.db import ReadOnlyDatabase
from toolrag.tools.sql.guard import SelectGuard, SQLRejected, check_select
from toolrag.tools.sql.seed import build_sqlite
from toolrag.tools.sql.spec import SQLSpecConfig, SQLToolSpec

__all__ = [
    "ReadOnlyDatabase",
    "Rename",
    "SQLRejected",
    "SQLSpecConfig",
    "SQLToolSpec",
    "SelectGuard",
    "build_sqlite",
    "check_select",
    "renamed_columns",
]
