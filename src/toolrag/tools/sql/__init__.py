"""SQL tools over any SQLAlchemy database: the tool spec, the read-only guard in three layers
(parse, connection, limits) and the sample database's seed build."""
