package ioc

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
)

// PublicBaseURL is INKWELL_PUBLIC_URL without its trailing slashes or, when it is empty,
// http://localhost:PORT with INKWELL_ADDR's port: right for a laptop, wrong behind a balancer,
// which is why production sets it (docs/OPERATIONS.md).
func PublicBaseURL(s ServerConfig) string {
	if u := strings.TrimRight(strings.TrimSpace(s.PublicURL), "/"); u != "" {
		return u
	}
	port := "8080"
	if _, p, err := net.SplitHostPort(s.Addr); err == nil && p != "" {
		port = p
	}
	return "http://localhost:" + port
}

// checkPublicURL is INKWELL_PUBLIC_URL's rule (domain.NewPublicLinks applies the same one when
// the links are built; here it fails the start with the setting's name).
func checkPublicURL(v string) error {
	v = strings.TrimRight(strings.TrimSpace(v), "/")
	if v == "" {
		return nil
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return fmt.Errorf("%q: want an absolute http or https URL, e.g. https://blog.example", v)
	}
	if u.RawQuery != "" || u.ForceQuery || strings.Contains(v, "#") {
		return fmt.Errorf("%q: want no query or fragment", v)
	}
	return nil
}

// checkArticleURL is INKWELL_ARTICLE_URL's rule: it names {slug}; the rest is checked with the
// public URL in place when the links are built.
func checkArticleURL(v string) error {
	if !strings.Contains(v, "{slug}") {
		return errors.New("must contain {slug}, e.g. {public}/article/{slug}")
	}
	return nil
}
