package ioc

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// DefaultMediaURL keeps uploads in a directory under .data, the data directory `make run` and
// scripts/services.sh use, so a development start needs nothing more.
const DefaultMediaURL = "file://.data/media"

// MediaLocation is INKWELL_MEDIA_URL read: a local directory (Dir) or an S3 bucket.
type MediaLocation struct {
	Scheme string // "file" or "s3"

	Dir string // file: the directory, as written (relative to the working directory, or absolute)

	Bucket   string // s3: the bucket
	Endpoint string // s3: host[:port]; s3.amazonaws.com when the URL names none
	Region   string // s3: us-east-1 when the URL names none
	Secure   bool   // s3: https (the default); secure=false speaks plain http (a local MinIO)
}

// ParseMediaURL reads INKWELL_MEDIA_URL: file://DIR or s3://BUCKET?endpoint=&region=&secure=.
// The S3 credentials are not in it: they come from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.
func ParseMediaURL(v string) (MediaLocation, error) {
	scheme, rest, ok := strings.Cut(v, "://")
	if !ok {
		return MediaLocation{}, fmt.Errorf("%q: want file://DIR or s3://BUCKET?endpoint=host:port&region=REGION", v)
	}
	switch scheme {
	case "file":
		if strings.ContainsAny(rest, "?#") {
			return MediaLocation{}, fmt.Errorf("%q: a file:// media URL is a directory only (no ? or #)", v)
		}
		if strings.Trim(rest, "/") == "" {
			return MediaLocation{}, fmt.Errorf("%q: name a directory, e.g. file://.data/media or file:///var/lib/inkwell/media", v)
		}
		return MediaLocation{Scheme: "file", Dir: rest}, nil
	case "s3":
		return parseS3URL(v)
	default:
		return MediaLocation{}, fmt.Errorf("%q: the scheme must be file or s3, not %q", v, scheme)
	}
}

func parseS3URL(v string) (MediaLocation, error) {
	u, err := url.Parse(v)
	if err != nil {
		return MediaLocation{}, fmt.Errorf("%q: %w", v, err)
	}
	if u.User != nil {
		return MediaLocation{}, errors.New("INKWELL_MEDIA_URL must not hold credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
	}
	if u.Host == "" || (u.Path != "" && u.Path != "/") {
		return MediaLocation{}, fmt.Errorf("%q: want s3://BUCKET?endpoint=host:port&region=REGION (the bucket only, no path)", v)
	}
	loc := MediaLocation{Scheme: "s3", Bucket: u.Host, Endpoint: "s3.amazonaws.com", Region: "us-east-1", Secure: true}
	q := u.Query()
	for k := range q {
		switch k {
		case "endpoint", "region", "secure":
		default:
			return MediaLocation{}, fmt.Errorf("%q: unknown parameter %q (want endpoint, region, secure)", v, k)
		}
	}
	if e := q.Get("endpoint"); e != "" {
		if strings.Contains(e, "/") {
			return MediaLocation{}, fmt.Errorf("%q: endpoint is host[:port], without a scheme or path (secure=false for http)", v)
		}
		if host, port, err := net.SplitHostPort(e); err == nil {
			if n, err := strconv.Atoi(port); host == "" || err != nil || n < 1 || n > 65535 {
				return MediaLocation{}, fmt.Errorf("%q: endpoint %q: want host:port", v, e)
			}
		}
		loc.Endpoint = e
	}
	if r := q.Get("region"); r != "" {
		loc.Region = r
	}
	if s := q.Get("secure"); s != "" {
		b, err := strconv.ParseBool(s)
		if err != nil {
			return MediaLocation{}, fmt.Errorf("%q: secure must be true or false, not %q", v, s)
		}
		loc.Secure = b
	}
	return loc, nil
}
