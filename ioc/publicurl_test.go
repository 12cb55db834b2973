package ioc

import "testing"

func TestPublicBaseURL(t *testing.T) {
	cases := []struct{ public, addr, want string }{
		{"", ":8080", "http://localhost:8080"},
		{"", "127.0.0.1:9000", "http://localhost:9000"},
		{"", "bad", "http://localhost:8080"},
		{"https://blog.example/", ":8080", "https://blog.example"},
		{" https://blog.example/news// ", ":8080", "https://blog.example/news"},
	}
	for _, c := range cases {
		if got := PublicBaseURL(ServerConfig{PublicURL: c.public, Addr: c.addr}); got != c.want {
			t.Errorf("PublicBaseURL(%q, %q) = %q, want %q", c.public, c.addr, got, c.want)
		}
	}
}

func TestPublicURLSettingsAreChecked(t *testing.T) {
	for _, v := range []string{"", "https://blog.example", "http://localhost:8080/", "https://blog.example/news"} {
		if err := checkPublicURL(v); err != nil {
			t.Errorf("INKWELL_PUBLIC_URL=%q refused: %v", v, err)
		}
	}
	for _, v := range []string{"blog.example", "/news", "ftp://blog.example", "https://", "https://blog.example?a=1", "https://blog.example/#x", "https://u:p@blog.example"} {
		if err := checkPublicURL(v); err == nil {
			t.Errorf("INKWELL_PUBLIC_URL=%q accepted", v)
		}
	}
	if err := checkArticleURL("{public}/article/{slug}"); err != nil {
		t.Error(err)
	}
	if err := checkArticleURL("{public}/article/"); err == nil {
		t.Error("INKWELL_ARTICLE_URL without {slug} accepted")
	}
}
