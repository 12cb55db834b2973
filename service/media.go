package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/inkwell-dev/inkwell/domain"
)

//go:generate go tool mockgen -source=media.go -destination=mocks/media_mock.go -package=mocks

// ImageProcessor turns an uploaded file into the images inkwell stores (the media package).
type ImageProcessor interface {
	// Process reads at most max bytes of r (more is domain.ErrMediaTooLarge, and is never
	// buffered), sniffs the type from the bytes (anything but PNG, JPEG, GIF, WebP is
	// domain.ErrMediaUnsupported), checks the header's dimensions and a GIF's frame count before
	// decoding (too many pixels or frames, a truncated or corrupt file: a *domain.ValidationError
	// on "file"), then decodes, applies the EXIF orientation, drops every metadata and re-encodes
	// the original and each derived size. It waits for one of a few decoding slots (as many as
	// cores); ctx bounds the wait.
	Process(ctx context.Context, r io.Reader, max int64) (domain.ProcessedImage, error)
}

// MediaStore keeps encoded images under their content address (a local directory or S3).
type MediaStore interface {
	// Put stores data under key; storing a key that exists already is harmless (same bytes).
	Put(ctx context.Context, key, contentType string, data []byte) error
	// Delete removes key; a key that is not there is not an error.
	Delete(ctx context.Context, key string) error
}

// UploadStore keeps the uploads' rows, their owners' totals and the orphaned object keys
// (repository/uploads.Store).
type UploadStore interface {
	// Usage reads userID's quota usage, outside any unit of work (the check before processing).
	Usage(ctx context.Context, userID int64) (domain.UploadUsage, error)
	// LockUserIn serializes userID's uploads until tx ends, then reads the usage under the lock.
	LockUserIn(ctx context.Context, tx Tx, userID int64) (domain.UploadUsage, error)
	// InsertIn inserts u (UserID, Key, ContentType, sizes, SHA256, Variants), adds its bytes to the
	// user's total and takes its keys off the orphans; it returns u with ID and CreatedAt.
	InsertIn(ctx context.Context, tx Tx, u domain.Upload) (domain.Upload, error)
	// DeleteIn deletes userID's upload id, takes its bytes off the total and marks its keys
	// orphaned; domain.ErrNotFound when userID has no such upload.
	DeleteIn(ctx context.Context, tx Tx, userID, id int64) (domain.Upload, error)
	// List returns up to limit of userID's uploads after cursor (nil: the newest), newest first.
	List(ctx context.Context, userID int64, cursor *domain.Cursor, limit int) ([]domain.Upload, error)
	// SweepOrphans takes up to limit keys orphaned longer than grace ago and, in one unit of
	// work that holds them, calls remove for each that no upload uses, then forgets them all; an
	// error of remove rolls back (the keys stay orphans). It returns how many objects went.
	SweepOrphans(ctx context.Context, grace time.Duration, limit int, remove func(ctx context.Context, key string) error) (int, error)
}

// UploadConfig is what an operator decides about uploads.
type UploadConfig struct {
	MaxBytes int64 // one file's byte limit (INKWELL_UPLOAD_MAX_BYTES)
	Quota    domain.UploadQuota
}

// UploadOrphanGrace is how long an object whose last upload went stays in the store before the
// retention pass may delete it: an image deleted and uploaded again soon after is not removed and
// written again. Correctness does not rest on it (see docs/ARCHITECTURE.md, "Uploads").
const UploadOrphanGrace = time.Hour

// UploadList is one page of a user's uploads; NextCursor is set only when a next page exists.
type UploadList struct {
	Uploads    []domain.Upload
	NextCursor *domain.Cursor
}

// UploadService stores users' images: quota, processing, the store and the rows.
type UploadService struct {
	store UploadStore
	proc  ImageProcessor
	media MediaStore
	uow   UnitOfWork
	cfg   UploadConfig
	now   func() time.Time
}

// NewUploadService returns the upload use cases over their ports.
func NewUploadService(store UploadStore, proc ImageProcessor, media MediaStore, uow UnitOfWork, cfg UploadConfig) *UploadService {
	return &UploadService{store: store, proc: proc, media: media, uow: uow, cfg: cfg, now: time.Now}
}

// MaxBytes is one file's byte limit.
func (s *UploadService) MaxBytes() int64 { return s.cfg.MaxBytes }

// Upload stores the image read from r for cred's user. declared is the size the client declared
// (the request's length; < 0 when unknown), a bound of the file's size used for the quota check
// before anything is read. The quota is checked again, with the stored size, under the user's
// lock in the unit of work that inserts the row, so concurrent uploads cannot overrun it. The
// objects are put after the row commits (docs/ARCHITECTURE.md, "Uploads"); when that fails the
// row is deleted again.
func (s *UploadService) Upload(ctx context.Context, cred domain.Credential, r io.Reader, declared int64) (domain.Upload, error) {
	if cred.UserID == 0 {
		return domain.Upload{}, domain.ErrUnauthorized
	}
	if !cred.CanWrite() {
		return domain.Upload{}, domain.ErrForbidden
	}
	if declared > s.cfg.MaxBytes {
		return domain.Upload{}, domain.ErrMediaTooLarge
	}
	bound := s.cfg.MaxBytes
	if declared >= 0 {
		bound = declared
	}
	usage, err := s.store.Usage(ctx, cred.UserID)
	if err != nil {
		return domain.Upload{}, err
	}
	if err := s.cfg.Quota.Check(usage, bound, s.now()); err != nil {
		return domain.Upload{}, err
	}
	img, err := s.proc.Process(ctx, r, s.cfg.MaxBytes)
	if err != nil {
		return domain.Upload{}, err
	}
	u := uploadOf(cred.UserID, img)
	err = s.uow.InTx(ctx, func(tx Tx) error {
		usage, err := s.store.LockUserIn(ctx, tx, cred.UserID)
		if err != nil {
			return err
		}
		if err := s.cfg.Quota.Check(usage, u.Bytes, s.now()); err != nil {
			return err
		}
		u, err = s.store.InsertIn(ctx, tx, uploadOf(cred.UserID, img))
		return err
	})
	if err != nil {
		return domain.Upload{}, err
	}
	for _, f := range append([]domain.ImageFile{img.Original}, img.Variants...) {
		if err := s.media.Put(ctx, f.Key(), f.ContentType, f.Data); err != nil {
			// The row goes again (its keys become orphans); the client retries the whole upload.
			undo := s.uow.InTx(context.WithoutCancel(ctx), func(tx Tx) error {
				_, err := s.store.DeleteIn(context.WithoutCancel(ctx), tx, cred.UserID, u.ID)
				return err
			})
			return domain.Upload{}, errors.Join(fmt.Errorf("store %s: %w", f.Key(), err), undo)
		}
	}
	return u, nil
}

func uploadOf(userID int64, img domain.ProcessedImage) domain.Upload {
	o := img.Original
	u := domain.Upload{UserID: userID, Key: o.Key(), ContentType: o.ContentType, Width: o.Width, Height: o.Height,
		Bytes: int64(len(o.Data)), SHA256: o.SHA256, Variants: make(map[string]domain.UploadVariant, len(img.Variants))}
	for _, v := range img.Variants {
		u.Variants[v.Name] = domain.UploadVariant{Key: v.Key(), Width: v.Width, Height: v.Height, Bytes: int64(len(v.Data))}
	}
	return u
}

// List returns a page of cred's own uploads, newest first.
func (s *UploadService) List(ctx context.Context, cred domain.Credential, p domain.Page) (UploadList, error) {
	if cred.UserID == 0 {
		return UploadList{}, domain.ErrUnauthorized
	}
	limit := p.Limit
	if limit <= 0 {
		limit = domain.DefaultPageLimit
	}
	limit = min(limit, domain.MaxPageLimit)
	rows, err := s.store.List(ctx, cred.UserID, p.Cursor, limit+1)
	if err != nil {
		return UploadList{}, err
	}
	out := UploadList{Uploads: rows}
	if len(rows) > limit {
		out.Uploads = rows[:limit]
		last := rows[limit-1]
		out.NextCursor = &domain.Cursor{CreatedAt: last.CreatedAt, ID: last.ID}
	}
	return out, nil
}

// Delete deletes cred's own upload id (another's is domain.ErrNotFound). Its objects stay until
// the retention pass finds no upload using their keys.
func (s *UploadService) Delete(ctx context.Context, cred domain.Credential, id int64) error {
	if cred.UserID == 0 {
		return domain.ErrUnauthorized
	}
	if !cred.CanWrite() {
		return domain.ErrForbidden
	}
	if id <= 0 {
		return domain.ErrNotFound
	}
	return s.uow.InTx(ctx, func(tx Tx) error {
		_, err := s.store.DeleteIn(ctx, tx, cred.UserID, id)
		return err
	})
}

// SweepOrphans deletes from the media store up to limit objects whose last upload went more than
// UploadOrphanGrace ago and that no upload uses now (the retention pass); it says how many.
func (s *UploadService) SweepOrphans(ctx context.Context, limit int) (int, error) {
	return s.store.SweepOrphans(ctx, UploadOrphanGrace, limit, s.media.Delete)
}
