package moderation

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/repository/pg"
)

// Reports files users' reports into the cases of the moderation queue.
type Reports struct {
	pool *pgxpool.Pool
	q    dao.Querier
}

// NewReports returns the report store.
func NewReports(pool *pgxpool.Pool, q dao.Querier) *Reports { return &Reports{pool: pool, q: q} }

// File files r (its Target's Kind, ID and ArticleID, ReporterID, Reason and Note) in one unit of
// work: it finds or opens the target's open case, inserts the report and counts it into the case.
// A reporter who already has an open report on the target gets that report back with
// created=false, and the case is left as it was.
func (s *Reports) File(ctx context.Context, r domain.Report) (domain.Report, bool, error) {
	var out domain.Report
	var created bool
	err := pg.InTx(ctx, s.pool, pg.DefaultRetry, func(tx *pg.Tx) error {
		caseID, err := s.q.ModerationCaseOpen(ctx, tx, dao.ModerationCaseOpenParams{
			TargetKind: string(r.Target.Kind), TargetID: r.Target.ID,
			ArticleID: pgtype.Int8{Int64: r.Target.ArticleID, Valid: r.Target.ArticleID != 0},
		})
		if err != nil {
			return pg.Wrapf(err, "open the case of %s %d", r.Target.Kind, r.Target.ID)
		}
		row, err := s.q.ReportInsert(ctx, tx, dao.ReportInsertParams{
			CaseID: caseID, ReporterID: r.ReporterID, Reason: string(r.Reason), Note: r.Note,
		})
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			// The reporter's open report on this case exists: the case holds the row lock, so
			// it committed before this statement began.
			old, err := s.q.ReportGetOpen(ctx, tx, dao.ReportGetOpenParams{CaseID: caseID, ReporterID: r.ReporterID})
			if err != nil {
				return pg.Wrapf(err, "read the open report of user %d on case %d", r.ReporterID, caseID)
			}
			out, created = reportOf(dao.ReportInsertRow(old), r.Target), false
			return nil
		case err != nil:
			return pg.Wrapf(err, "insert a report on case %d", caseID)
		}
		if err := s.q.ModerationCaseAddReport(ctx, tx, dao.ModerationCaseAddReportParams{
			ID: caseID, Reason: string(r.Reason), Note: r.Note,
		}); err != nil {
			return pg.Wrapf(err, "count a report into case %d", caseID)
		}
		out, created = reportOf(row, r.Target), true
		return nil
	})
	if err != nil {
		return domain.Report{}, false, err
	}
	return out, created, nil
}

func reportOf(r dao.ReportInsertRow, target domain.ModerationTarget) domain.Report {
	return domain.Report{
		ID: r.ID, CaseID: r.CaseID, ReporterID: r.ReporterID, Reason: domain.ReportReason(r.Reason),
		Note: r.Note, Status: domain.CaseStatus(r.Status), Target: target, CreatedAt: r.CreatedAt,
	}
}
