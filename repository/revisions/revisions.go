package revisions

import (
	"context"
	"math"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/repository/pg"
	"github.com/inkwell-dev/inkwell/service"
)

// Store keeps article revisions (service.RevisionStore).
// History is read through reads (a read replica that has replayed enough; nil: pool).
type Store struct {
	pool  *pgxpool.Pool
	reads *pg.ReadRouter
	q     dao.Querier
}

// NewStore returns the revision store.
func NewStore(pool *pgxpool.Pool, q dao.Querier, reads *pg.ReadRouter) *Store {
	return &Store{pool: pool, reads: reads, q: q}
}

// WriteIn keeps rev, the content an edit in tx is replacing, and prunes the article's revisions
// beyond the newest domain.MaxRevisionsKept, both in tx: an edit that fails keeps nothing.
func (s *Store) WriteIn(ctx context.Context, stx service.Tx, rev domain.ArticleRevision) error {
	tx := pg.TxOf(stx)
	tags := rev.Tags
	if tags == nil {
		tags = []string{}
	}
	if err := s.q.ArticleRevisionInsert(ctx, tx, dao.ArticleRevisionInsertParams{
		ArticleID: rev.ArticleID, Version: rev.Version, Title: rev.Title, Description: rev.Description,
		Body: rev.Body, Tags: tags, CreatedAt: rev.CreatedAt,
	}); err != nil {
		return pg.Wrapf(err, "keep version %d of article %d", rev.Version, rev.ArticleID)
	}
	if _, err := s.q.ArticleRevisionPrune(ctx, tx, dao.ArticleRevisionPruneParams{
		ArticleID: rev.ArticleID, Keep: domain.MaxRevisionsKept,
	}); err != nil {
		return pg.Wrapf(err, "prune the revisions of article %d", rev.ArticleID)
	}
	return nil
}

// List reads up to limit revisions of articleID older than version before (0: from the newest),
// newest first, without bodies.
func (s *Store) List(ctx context.Context, articleID int64, before int32, limit int) ([]domain.ArticleRevision, error) {
	if before <= 0 {
		before = math.MaxInt32
	}
	rows, err := s.q.ArticleRevisionList(ctx, pg.ReadsOn(ctx, s.reads, s.pool), dao.ArticleRevisionListParams{
		ArticleID: articleID, BeforeVersion: before, Lim: int32(limit),
	})
	if err != nil {
		return nil, pg.Wrapf(err, "list the revisions of article %d", articleID)
	}
	out := make([]domain.ArticleRevision, len(rows))
	for i, r := range rows {
		out[i] = domain.ArticleRevision{
			ArticleID: articleID, Version: r.Version, Title: r.Title, Description: r.Description,
			Tags: nonNil(r.Tags), CreatedAt: r.CreatedAt,
		}
	}
	return out, nil
}

// Get reads version of articleID, with its body; domain.ErrNotFound when it is not kept.
func (s *Store) Get(ctx context.Context, articleID int64, version int32) (domain.ArticleRevision, error) {
	r, err := s.q.ArticleRevisionGet(ctx, pg.ReadsOn(ctx, s.reads, s.pool), dao.ArticleRevisionGetParams{ArticleID: articleID, Version: version})
	if err != nil {
		return domain.ArticleRevision{}, pg.Wrapf(err, "get version %d of article %d", version, articleID)
	}
	return domain.ArticleRevision{
		ArticleID: articleID, Version: r.Version, Title: r.Title, Description: r.Description, Body: r.Body,
		Tags: nonNil(r.Tags), CreatedAt: r.CreatedAt,
	}, nil
}

func nonNil(t []string) []string {
	if t == nil {
		return []string{}
	}
	return t
}
