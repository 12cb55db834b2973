package service

import (
	"context"

	"github.com/inkwell-dev/inkwell/domain"
)

//go:generate go tool mockgen -source=media_refs.go -destination=mocks/media_refs_mock.go -package=mocks

// UploadLookup finds which of a user's uploads object keys name (an upload's original or one of
// its derived sizes).
type UploadLookup interface {
	OwnedUploads(ctx context.Context, userID int64, keys []string) (map[string]int64, error)
}

// AvatarUploads is UploadLookup plus the record of the upload a user's avatar refers to.
type AvatarUploads interface {
	UploadLookup
	ReplaceAvatarIn(ctx context.Context, tx Tx, userID int64, uploadIDs []int64) error
}

// imageUploads resolves an image field (an avatar, a cover): an https URL refers to no upload; an
// upload's path must name one of userID's own uploads (422 on field otherwise).
func imageUploads(ctx context.Context, uploads UploadLookup, userID int64, field, image string) ([]int64, error) {
	key, ok := domain.MediaKeyOf(image)
	if !ok {
		return []int64{}, nil
	}
	owned, err := uploads.OwnedUploads(ctx, userID, []string{key})
	if err != nil {
		return nil, err
	}
	id, ok := owned[key]
	if !ok {
		return nil, domain.NewValidationError(field, "is not one of your uploads: upload the image first (POST /api/uploads)")
	}
	return []int64{id}, nil
}

// articleUploads resolves the uploads an article refers to: its cover (which must be the
// author's, like an avatar) and the author's uploads its body names (a body may also show other
// users' images; those are not the author's to keep).
func articleUploads(ctx context.Context, uploads UploadLookup, a domain.Article) ([]int64, error) {
	ids, err := imageUploads(ctx, uploads, a.AuthorID, "coverImage", a.CoverImage)
	if err != nil {
		return nil, err
	}
	keys := domain.MediaKeysIn(a.Body)
	if len(keys) == 0 {
		return ids, nil
	}
	owned, err := uploads.OwnedUploads(ctx, a.AuthorID, keys)
	if err != nil {
		return nil, err
	}
	seen := map[int64]bool{}
	for _, id := range ids {
		seen[id] = true
	}
	for _, k := range keys {
		if id, ok := owned[k]; ok && !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// newArticleUploads is articleUploads for an article being created: nil when it refers to none
// (a new article has no references to replace).
func newArticleUploads(ctx context.Context, uploads UploadLookup, a domain.Article) ([]int64, error) {
	ids, err := articleUploads(ctx, uploads, a)
	if len(ids) == 0 {
		return nil, err
	}
	return ids, err
}
