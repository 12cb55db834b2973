package ioc

import (
	"strings"
	"testing"
)

func TestParseMediaURL(t *testing.T) {
	good := map[string]MediaLocation{
		"file://.data/media":            {Scheme: "file", Dir: ".data/media"},
		"file:///var/lib/inkwell/media": {Scheme: "file", Dir: "/var/lib/inkwell/media"},
		"s3://pics":                     {Scheme: "s3", Bucket: "pics", Endpoint: "s3.amazonaws.com", Region: "us-east-1", Secure: true},
		"s3://pics?endpoint=127.0.0.1:9000&region=eu-west-1&secure=false": {Scheme: "s3", Bucket: "pics", Endpoint: "127.0.0.1:9000", Region: "eu-west-1"},
	}
	for in, want := range good {
		got, err := ParseMediaURL(in)
		if err != nil || got != want {
			t.Errorf("ParseMediaURL(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	bad := map[string]string{
		"":                               "want file://DIR",
		".data/media":                    "want file://DIR",
		"http://example.com/media":       "scheme must be file or s3",
		"file://":                        "name a directory",
		"file://dir?x=1":                 "directory only",
		"s3://":                          "the bucket only",
		"s3://pics/sub":                  "the bucket only",
		"s3://key:secret@pics":           "AWS_ACCESS_KEY_ID",
		"s3://pics?endpoint=http://h:9":  "without a scheme",
		"s3://pics?endpoint=h:99999":     "want host:port",
		"s3://pics?secure=maybe":         "true or false",
		"s3://pics?bucket-style=virtual": "unknown parameter",
	}
	for in, want := range bad {
		_, err := ParseMediaURL(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseMediaURL(%q) = %v; want an error saying %q", in, err, want)
		}
	}
}
