package domain

import (
	"fmt"
	"net/url"
	"strings"
)

// PublicLinks makes the absolute links inkwell hands to readers outside the JSON API (feeds,
// sitemaps, robots.txt): the site's public base URL (INKWELL_PUBLIC_URL) and the article link
// template (INKWELL_ARTICLE_URL), checked once by NewPublicLinks. The zero value is not usable.
type PublicLinks struct {
	base     string // absolute http(s) URL, no query, no fragment, no trailing slash
	template string // contains {slug}; {public} already replaced by base
}

// NewPublicLinks checks base (an absolute http or https URL without query or fragment; trailing
// slashes are trimmed) and the article template (must contain {slug}; {public} is replaced by the
// base) and returns the links they make.
func NewPublicLinks(base, articleTemplate string) (PublicLinks, error) {
	base = strings.TrimRight(strings.TrimSpace(base), "/")
	if err := CheckPublicURL(base); err != nil {
		return PublicLinks{}, err
	}
	tmpl := strings.ReplaceAll(strings.TrimSpace(articleTemplate), "{public}", base)
	if err := CheckArticleURLTemplate(tmpl); err != nil {
		return PublicLinks{}, err
	}
	return PublicLinks{base: base, template: tmpl}, nil
}

// CheckPublicURL judges a public base URL: absolute, http or https, with a host and without
// query, fragment or user information.
func CheckPublicURL(s string) error {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return fmt.Errorf("public URL %q does not parse: %w", s, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("public URL %q: want an absolute http or https URL, e.g. https://blog.example", s)
	case u.Host == "" || u.Opaque != "":
		return fmt.Errorf("public URL %q has no host", s)
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(s, "#"):
		return fmt.Errorf("public URL %q: want no query or fragment", s)
	case u.User != nil:
		return fmt.Errorf("public URL %q: want no user information", s)
	}
	return nil
}

// CheckArticleURLTemplate judges an article link template once {public} is replaced: it must
// contain {slug} and, with a slug in place, be an absolute http(s) URL.
func CheckArticleURLTemplate(tmpl string) error {
	if !strings.Contains(tmpl, "{slug}") {
		return fmt.Errorf("article URL template %q must contain {slug}", tmpl)
	}
	u, err := url.Parse(strings.ReplaceAll(tmpl, "{slug}", "a-slug"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("article URL template %q: want an absolute http or https URL, e.g. {public}/article/{slug}", tmpl)
	}
	return nil
}

// Base is the public base URL, without a trailing slash: Base()+"/sitemap.xml" is a link.
func (l PublicLinks) Base() string { return l.base }

// Article is the public link of the article with this slug (path-escaped, so any slug makes a
// valid URL).
func (l PublicLinks) Article(slug string) string {
	return strings.ReplaceAll(l.template, "{slug}", url.PathEscape(slug))
}
