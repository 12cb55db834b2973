package repository

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/repository/pg"
	"github.com/inkwell-dev/inkwell/service"
)

// Owners of upload references (upload_references.owner_kind).
const (
	uploadOwnerAvatar  = "avatar"
	uploadOwnerArticle = "article"
)

// UploadReferences records what refers to which upload: a user's avatar, an article's cover and
// body (migration 00028). Retention deletes an upload nothing has referred to for 7 days.
type UploadReferences struct {
	pool *pgxpool.Pool
	q    dao.Querier
}

// NewUploadReferences returns the store.
func NewUploadReferences(pool *pgxpool.Pool, q dao.Querier) *UploadReferences {
	return &UploadReferences{pool: pool, q: q}
}

// OwnedUploads returns, for the keys among keys that name an upload of userID (its original or a
// derived size), the upload's id.
func (r *UploadReferences) OwnedUploads(ctx context.Context, userID int64, keys []string) (map[string]int64, error) {
	out := map[string]int64{}
	if len(keys) == 0 {
		return out, nil
	}
	rows, err := r.q.UploadsOwnedByKeys(ctx, r.pool, dao.UploadsOwnedByKeysParams{UserID: userID, Keys: keys})
	if err != nil {
		return nil, pg.Wrapf(err, "find uploads of user %d", userID)
	}
	for _, row := range rows {
		out[row.Key] = row.ID
	}
	return out, nil
}

// ReplaceIn makes the uploads ownerKind/ownerID refers to exactly uploadIDs, in the caller's
// unit of work.
func (r *UploadReferences) ReplaceIn(ctx context.Context, tx service.Tx, ownerKind string, ownerID int64, uploadIDs []int64) error {
	return replaceUploadReferences(ctx, r.q, pg.TxOf(tx), ownerKind, ownerID, uploadIDs)
}

func replaceUploadReferences(ctx context.Context, q dao.Querier, db dao.DBTX, ownerKind string, ownerID int64, uploadIDs []int64) error {
	if uploadIDs == nil {
		uploadIDs = []int64{}
	}
	return pg.Wrapf(q.UploadReferencesReplace(ctx, db, dao.UploadReferencesReplaceParams{
		OwnerKind: ownerKind, OwnerID: ownerID, UploadIds: uploadIDs,
	}), "record the uploads %s %d refers to", ownerKind, ownerID)
}

// ReplaceAvatarIn records the uploads user userID's avatar refers to (none, or one).
func (r *UploadReferences) ReplaceAvatarIn(ctx context.Context, tx service.Tx, userID int64, uploadIDs []int64) error {
	return r.ReplaceIn(ctx, tx, uploadOwnerAvatar, userID, uploadIDs)
}
