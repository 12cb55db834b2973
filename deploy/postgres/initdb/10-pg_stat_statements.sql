-- Compose's PostgreSQL runs this once, in the inkwell database (POSTGRES_DB), when its volume is
-- new. The library is preloaded by the server's command line (docker-compose.yml); the extension
-- adds the pg_stat_statements view that docs/OPERATIONS.md queries for slow statements.
CREATE EXTENSION IF NOT EXISTS pg_stat_statements;
