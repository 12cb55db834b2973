package repository

import (
	"github.com/google/wire"

	"github.com/inkwell-dev/inkwell/dao"
)

// NewQuerier returns the sqlc queries. Each call names the connection it runs on: the pool, or a
// unit of work's Tx.
func NewQuerier() dao.Querier { return dao.New() }

// ProviderSet builds the repositories.
var ProviderSet = wire.NewSet(NewQuerier, NewUserRepository, NewUserEmails, NewFollowRepository,
	NewArticleRepository, NewInteractiveRepository, NewCommentRepository, NewReadRepository, NewCollectionRepository,
	NewRankRepository, NewHotArticleStore, NewJobQueue, NewOutbox, NewNotificationRepository,
	NewSessionRepository, NewAPIKeyRepository, NewIdempotencyStore, NewRetentionStore,
	NewAccountEraser)
