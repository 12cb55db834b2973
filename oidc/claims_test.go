package oidc

import (
	"encoding/json"
	"testing"
)

func TestEmailVerifiedIsABoolOrTheStringTrue(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]bool{
		`{"email_verified":true}`:    true,
		`{"email_verified":"true"}`:  true,
		`{"email_verified":"TRUE"}`:  true,
		`{"email_verified":false}`:   false,
		`{"email_verified":"false"}`: false,
		`{"email_verified":1}`:       false,
		`{}`:                         false,
	} {
		var c claims
		if err := json.Unmarshal([]byte(raw), &c); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if bool(c.EmailVerified) != want {
			t.Errorf("%s: email_verified = %v, want %v", raw, c.EmailVerified, want)
		}
	}
}

func TestPictureMustBeHTTPS(t *testing.T) {
	t.Parallel()
	if httpsOnly("http://example.com/a.png") != "" || httpsOnly("javascript:alert(1)") != "" ||
		httpsOnly("https://example.com/a.png") != "https://example.com/a.png" {
		t.Fatal("httpsOnly")
	}
}
