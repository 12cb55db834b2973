package moderation

import (
	"context"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/repository/pg"
	"github.com/inkwell-dev/inkwell/service"
)

// Resolver closes the reports of a target an action settled.
type Resolver struct {
	pool *pgxpool.Pool
	q    dao.Querier
}

// NewResolver returns the resolver.
func NewResolver(pool *pgxpool.Pool, q dao.Querier) *Resolver { return &Resolver{pool: pool, q: q} }

// ResolveTargetIn resolves target's open case and reports in the caller's unit of work and
// notifies each reporter under eventID; resolved is false when no case was open.
func (r *Resolver) ResolveTargetIn(ctx context.Context, stx service.Tx, target domain.ModerationTarget, actorID int64, resolution, eventID string) (bool, error) {
	told, err := r.q.ModerationCaseResolveTarget(ctx, pg.TxOf(stx), dao.ModerationCaseResolveTargetParams{
		ActorID: pgtype.Int8{Int64: actorID, Valid: actorID != 0}, Resolution: resolution,
		TargetKind: string(target.Kind), TargetID: target.ID, EventID: eventID,
		Detail: "Your report about " + target.Label + " was reviewed by a moderator. Thank you.",
	})
	if err != nil {
		return false, pg.Wrapf(err, "resolve the reports of %s %d", target.Kind, target.ID)
	}
	return len(told) > 0, nil
}
