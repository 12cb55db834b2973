package repository

import (
	"github.com/google/wire"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/repository/pg"
)

// NewQuerier returns the sqlc queries. Each call names the connection it runs on: the pool, or a
// unit of work's Tx.
func NewQuerier() dao.Querier { return dao.New() }

// ProviderSet builds the repositories.
var ProviderSet = wire.NewSet(NewQuerier, pg.NewUnitOfWork, NewUserRepository, NewUserEmails, NewFollowRepository,
	NewArticleRepository, NewInteractiveRepository, NewCommentRepository, NewReadRepository, NewCollectionRepository,
	NewRankRepository, NewHotArticleStore, NewPublishingNotificationRepository, NewRetentionStore,
	NewAccountEraser, NewUploadReferences, NewSitemapRepository)
