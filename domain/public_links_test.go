package domain

import "testing"

func TestPublicLinks(t *testing.T) {
	cases := []struct {
		name, base, tmpl string
		wantBase, slug   string
		wantArticle      string
	}{
		{"default template", "https://blog.example", "{public}/article/{slug}", "https://blog.example", "hello-world", "https://blog.example/article/hello-world"},
		{"trailing slashes trimmed", "https://blog.example/", "{public}/article/{slug}", "https://blog.example", "a", "https://blog.example/article/a"},
		{"base with a path", "http://localhost:8080/blog//", "{public}/p/{slug}", "http://localhost:8080/blog", "a", "http://localhost:8080/blog/p/a"},
		{"template elsewhere", "https://api.example", "https://www.example/#/article/{slug}", "https://api.example", "a", "https://www.example/#/article/a"},
		{"slug escaped", "https://blog.example", "{public}/article/{slug}", "https://blog.example", "a b/c?d", "https://blog.example/article/a%20b%2Fc%3Fd"},
		{"unicode slug escaped", "https://blog.example", "{public}/article/{slug}", "https://blog.example", "café", "https://blog.example/article/caf%C3%A9"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l, err := NewPublicLinks(c.base, c.tmpl)
			if err != nil {
				t.Fatal(err)
			}
			if l.Base() != c.wantBase {
				t.Errorf("Base() = %q, want %q", l.Base(), c.wantBase)
			}
			if got := l.Article(c.slug); got != c.wantArticle {
				t.Errorf("Article(%q) = %q, want %q", c.slug, got, c.wantArticle)
			}
		})
	}
}

func TestPublicLinksRefusesBadSettings(t *testing.T) {
	cases := []struct{ name, base, tmpl string }{
		{"empty base", "", "{public}/article/{slug}"},
		{"relative base", "/blog", "{public}/article/{slug}"},
		{"no scheme", "blog.example", "{public}/article/{slug}"},
		{"other scheme", "ftp://blog.example", "{public}/article/{slug}"},
		{"no host", "https://", "{public}/article/{slug}"},
		{"query", "https://blog.example?x=1", "{public}/article/{slug}"},
		{"empty query", "https://blog.example/?", "{public}/article/{slug}"},
		{"fragment", "https://blog.example#top", "{public}/article/{slug}"},
		{"user info", "https://me:pw@blog.example", "{public}/article/{slug}"},
		{"template without slug", "https://blog.example", "{public}/article/"},
		{"relative template", "https://blog.example", "/article/{slug}"},
		{"empty template", "https://blog.example", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := NewPublicLinks(c.base, c.tmpl); err == nil {
				t.Errorf("NewPublicLinks(%q, %q) accepted", c.base, c.tmpl)
			}
		})
	}
}
