package moderation

import (
	"context"
	"math"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/repository/pg"
	"github.com/inkwell-dev/inkwell/service"
)

// Cases is the moderation queue: the cases reports are grouped into, listed, resolved and counted.
type Cases struct {
	pool *pgxpool.Pool
	q    dao.Querier
	pub  NoticePublisher // nil: the resolution notices are not announced (notification_stream.go)
}

// NewCases returns the queue; pub learns, after COMMIT, the reporters a resolution noticed.
func NewCases(pool *pgxpool.Pool, q dao.Querier, pub NoticePublisher) *Cases {
	return &Cases{pool: pool, q: q, pub: pub}
}

// List returns up to limit cases with status after cursor (nil: from the start): open cases
// oldest first, resolved ones newest resolution first. Each page is one index range
// (moderation_cases_open_idx, moderation_cases_resolved_idx).
func (c *Cases) List(ctx context.Context, status domain.CaseStatus, cursor *domain.Cursor, limit int) ([]domain.ModerationCase, error) {
	var rows []caseRow
	if status == domain.CaseResolved {
		before := domain.Cursor{CreatedAt: time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC), ID: math.MaxInt64}
		if cursor != nil {
			before = *cursor
		}
		rs, err := c.q.ModerationCaseListResolved(ctx, c.pool, dao.ModerationCaseListResolvedParams{BeforeAt: before.CreatedAt, BeforeID: before.ID, Lim: int32(limit)})
		if err != nil {
			return nil, pg.Wrapf(err, "list resolved moderation cases")
		}
		for _, r := range rs {
			rows = append(rows, caseRow(r))
		}
	} else {
		// The first page passes the smallest cursor rather than none: one statement whose cursor
		// is an index condition under a generic plan too.
		after := domain.Cursor{CreatedAt: time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), ID: 0}
		if cursor != nil {
			after = *cursor
		}
		rs, err := c.q.ModerationCaseListOpen(ctx, c.pool, dao.ModerationCaseListOpenParams{AfterAt: after.CreatedAt, AfterID: after.ID, Lim: int32(limit)})
		if err != nil {
			return nil, pg.Wrapf(err, "list open moderation cases")
		}
		for _, r := range rs {
			rows = append(rows, caseRow(r))
		}
	}
	out := make([]domain.ModerationCase, len(rows))
	for i, r := range rows {
		out[i] = r.domain()
	}
	return out, nil
}

// Get returns the case with id; domain.ErrNotFound when there is none.
func (c *Cases) Get(ctx context.Context, id int64) (domain.ModerationCase, error) {
	return c.get(ctx, c.pool, id)
}

// LockIn takes the row lock of the case with id in the caller's unit of work and returns the
// case as it stands under the lock; domain.ErrNotFound when there is none. A resolution holds it
// so that two moderators resolving one case at once are one 200 and one 409.
func (c *Cases) LockIn(ctx context.Context, stx service.Tx, id int64) (domain.ModerationCase, error) {
	tx := pg.TxOf(stx)
	if _, err := c.q.ModerationCaseLock(ctx, tx, id); err != nil {
		return domain.ModerationCase{}, pg.Wrapf(err, "lock moderation case %d", id)
	}
	return c.get(ctx, tx, id)
}

func (c *Cases) get(ctx context.Context, db dao.DBTX, id int64) (domain.ModerationCase, error) {
	r, err := c.q.ModerationCaseGet(ctx, db, id)
	if err != nil {
		return domain.ModerationCase{}, pg.Wrapf(err, "read moderation case %d", id)
	}
	return caseRow(r).domain(), nil
}

// ResolveTargetIn resolves the target's open case and all its open reports in the caller's unit
// of work and, in the same statement, notices each reporter once (kind
// domain.NoticeReportResolved, event id eventID; the notice names the target by its Label, never
// the action). resolution is "hide" or "dismiss"; actorID 0 is the system. No open case: false,
// and nothing is written. The reporters noticed are announced to their live streams once the
// unit of work has committed (the statement returns them).
func (c *Cases) ResolveTargetIn(ctx context.Context, stx service.Tx, target domain.ModerationTarget, actorID int64, resolution string, eventID string) (bool, error) {
	row, err := c.q.ModerationCaseResolve(ctx, pg.TxOf(stx), dao.ModerationCaseResolveParams{
		ActorID:    pgtype.Int8{Int64: actorID, Valid: actorID != 0},
		Resolution: resolution, TargetKind: string(target.Kind), TargetID: target.ID,
		Kind: domain.NoticeReportResolved, EventID: eventID, Detail: domain.ReportResolvedDetail(target.Label),
	})
	if err != nil {
		return false, pg.Wrapf(err, "resolve the open case of %s %d", target.Kind, target.ID)
	}
	if users := row.Notified; len(users) > 0 && c.pub != nil {
		stx.AfterCommit(func(ctx context.Context) { c.pub.Notified(ctx, users) })
	}
	return row.Resolved > 0, nil
}

// QueueStats is the moderation queue's size, for metrics.
type QueueStats struct {
	OpenCases   int64
	OpenReports int64
	// OldestOpenedAt is when the oldest open case was opened; zero when none is open.
	OldestOpenedAt time.Time
}

// OpenStats reads the queue's size: a count over the partial index of open cases (the queue
// itself) and its first entry.
func (c *Cases) OpenStats(ctx context.Context) (QueueStats, error) {
	r, err := c.q.ModerationCaseOpenStats(ctx, c.pool)
	if err != nil {
		return QueueStats{}, pg.Wrapf(err, "read the moderation queue's size")
	}
	st := QueueStats{OpenCases: r.OpenCases, OpenReports: r.OpenReports}
	if r.OpenCases > 0 {
		st.OldestOpenedAt = r.OldestOpenedAt
	}
	return st, nil
}

// caseRow is the shape every case query returns.
type caseRow struct {
	ID          int64
	TargetKind  string
	TargetID    int64
	ArticleID   pgtype.Int8
	Status      string
	ReportCount int32
	Reasons     []string
	NewestNote  string
	OpenedAt    time.Time
	UpdatedAt   time.Time
	ResolvedAt  pgtype.Timestamptz
	Resolution  pgtype.Text
	ArticleSlug string
	Username    string
	OwnerID     int64
}

func (r caseRow) domain() domain.ModerationCase {
	kind := domain.TargetKind(r.TargetKind)
	out := domain.ModerationCase{
		ID: r.ID,
		Target: domain.ModerationTarget{
			Kind: kind, ID: r.TargetID, ArticleID: r.ArticleID.Int64, OwnerID: r.OwnerID,
			Label: domain.TargetLabel(kind, r.TargetID, r.ArticleSlug, r.Username),
		},
		ArticleSlug: r.ArticleSlug, Username: r.Username,
		Status: domain.CaseStatus(r.Status), ReportCount: int(r.ReportCount), NewestNote: r.NewestNote,
		OpenedAt: r.OpenedAt, UpdatedAt: r.UpdatedAt, ResolvedAt: r.ResolvedAt.Time, Resolution: r.Resolution.String,
	}
	out.Reasons = make([]domain.ReportReason, len(r.Reasons))
	for i, s := range r.Reasons {
		out.Reasons[i] = domain.ReportReason(s)
	}
	return out
}
