package repository

import (
	"github.com/google/wire"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/dao"
)

// NewQuerier returns the sqlc queries bound to the pool; a statement whose context carries a
// transaction (WithTx) runs in it.
func NewQuerier(pool *pgxpool.Pool) dao.Querier { return dao.New(ctxDB{pool: pool}) }

// ProviderSet builds the repositories.
var ProviderSet = wire.NewSet(NewQuerier, NewUserRepository, NewFollowRepository,
	NewArticleRepository, NewInteractiveRepository, NewCommentRepository, NewReadRepository, NewCollectionRepository,
	NewRankRepository, NewCounterMirror, NewJobQueue, NewOutbox, NewNotificationRepository,
	NewSessionRepository, NewAPIKeyRepository, NewIdempotencyStore)
