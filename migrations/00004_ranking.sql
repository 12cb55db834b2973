-- +goose Up
-- The ranking job scans published articles newest-published first, stopping at the cutoff.
CREATE INDEX articles_published_at_idx ON articles (published_at DESC, id DESC) WHERE status = 'published';

-- +goose Down
DROP INDEX articles_published_at_idx;
