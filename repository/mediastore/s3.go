package mediastore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/inkwell-dev/inkwell/domain"
)

// S3Config locates a bucket of an S3-compatible store.
type S3Config struct {
	Endpoint string // host[:port]
	Bucket   string
	Region   string
	Secure   bool // https
	// Creds signs the requests; nil reads AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and
	// AWS_SESSION_TOKEN from the environment.
	Creds *credentials.Credentials
}

// S3 keeps objects in a bucket through minio-go, a small client that speaks to any S3-compatible
// endpoint (AWS S3, MinIO, R2, Ceph) and presigns URLs without a round trip. Objects are written
// with their content type and CacheControl; GET /media/:key redirects to a presigned URL.
type S3 struct {
	c      *minio.Client
	bucket string
}

// NewS3 returns the store of cfg's bucket. It makes no request: Check does.
func NewS3(cfg S3Config) (*S3, error) {
	creds := cfg.Creds
	if creds == nil {
		creds = credentials.NewEnvAWS()
	}
	// Without credentials every request would go unsigned and no URL could be presigned: say so
	// at start rather than on the first upload.
	if v, err := creds.GetWithContext(&credentials.CredContext{Endpoint: cfg.Endpoint}); err != nil || v.SignerType.IsAnonymous() {
		return nil, errors.New("media store: S3 needs credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
	}
	c, err := minio.New(cfg.Endpoint, &minio.Options{Creds: creds, Secure: cfg.Secure, Region: cfg.Region})
	if err != nil {
		return nil, fmt.Errorf("media store: S3 endpoint %s: %w", cfg.Endpoint, err)
	}
	return &S3{c: c, bucket: cfg.Bucket}, nil
}

// Put uploads data under key (a second Put of a key writes the same bytes again: harmless).
func (s *S3) Put(ctx context.Context, key, contentType string, data []byte) error {
	_, err := s.c.PutObject(ctx, s.bucket, key, bytes.NewReader(data), int64(len(data)),
		minio.PutObjectOptions{ContentType: contentType, CacheControl: CacheControl})
	if err != nil {
		return fmt.Errorf("media store: put %s: %w", key, err)
	}
	return nil
}

// Delete removes key; S3 answers a missing key as deleted.
func (s *S3) Delete(ctx context.Context, key string) error {
	if err := s.c.RemoveObject(ctx, s.bucket, key, minio.RemoveObjectOptions{}); err != nil {
		if minio.ToErrorResponse(err).Code == "NoSuchKey" {
			return nil
		}
		return fmt.Errorf("media store: delete %s: %w", key, err)
	}
	return nil
}

// Open is ErrPresigns: clients fetch S3 objects from presigned URLs, never through the app.
func (s *S3) Open(context.Context, string) (domain.MediaObject, error) {
	return domain.MediaObject{}, ErrPresigns
}

// Presign signs a GET of key valid for PresignLifetime. It is computed locally (no request), so a
// key that is not in the bucket gets a URL the bucket answers 404.
func (s *S3) Presign(ctx context.Context, key string) (string, error) {
	// The bucket answers with these headers whatever the object's metadata says (an object put
	// by an older release, a store that drops Cache-Control).
	params := url.Values{"response-cache-control": {CacheControl}, "response-content-type": {domain.MediaContentType(key)}}
	u, err := s.c.PresignedGetObject(ctx, s.bucket, key, PresignLifetime, params)
	if err != nil {
		return "", fmt.Errorf("media store: presign %s: %w", key, err)
	}
	return u.String(), nil
}

// Check reports whether the bucket exists (and the credentials may see it).
func (s *S3) Check(ctx context.Context) error {
	ok, err := s.c.BucketExists(ctx, s.bucket)
	if err != nil {
		return fmt.Errorf("media store: bucket %s: %w", s.bucket, err)
	}
	if !ok {
		return fmt.Errorf("media store: bucket %s does not exist", s.bucket)
	}
	return nil
}
