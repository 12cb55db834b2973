package inkwell

import (
	"fmt"

	"github.com/inkwell-dev/inkwell/ioc"
	"github.com/inkwell-dev/inkwell/repository/mediastore"
)

// NewMediaStore opens the media store INKWELL_MEDIA_URL names: a local directory (created if
// missing) or an S3 bucket (credentials from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY; no request
// is made here: GET /readyz checks the bucket).
func NewMediaStore(cfg *ioc.Config) (*mediastore.Store, func(), error) {
	loc, err := ioc.ParseMediaURL(cfg.Media.URL)
	if err != nil {
		return nil, nil, fmt.Errorf("INKWELL_MEDIA_URL %w", err)
	}
	switch loc.Scheme {
	case "file":
		l, err := mediastore.NewLocal(loc.Dir)
		if err != nil {
			return nil, nil, err
		}
		return mediastore.NewStore(l, "file"), func() {}, nil
	default:
		s3, err := mediastore.NewS3(mediastore.S3Config{Endpoint: loc.Endpoint, Bucket: loc.Bucket, Region: loc.Region, Secure: loc.Secure})
		if err != nil {
			return nil, nil, err
		}
		return mediastore.NewStore(s3, "s3"), func() {}, nil
	}
}
