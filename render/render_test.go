package render_test

import (
	"strings"
	"testing"
	"time"
	"unicode"

	"golang.org/x/net/html"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/render"
)

var upload = domain.MediaPathPrefix + strings.Repeat("ab", 32) + ".png"

// hostile returns what in html a browser would run or embed: a forbidden element, an
// event-handler or style attribute, a script or data URL in an attribute (after the browser's own
// decoding and its skipping of blanks and control characters); "" when there is none.
func hostile(out string) string {
	if strings.Contains(strings.ToLower(out), "<script") {
		return "<script"
	}
	z := html.NewTokenizer(strings.NewReader(out))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return ""
		case html.StartTagToken, html.SelfClosingTagToken:
			tok := z.Token()
			switch tok.Data {
			case "script", "style", "iframe", "object", "embed", "form", "svg", "math", "input", "link", "meta", "base":
				return "<" + tok.Data
			}
			for _, a := range tok.Attr {
				if strings.HasPrefix(a.Key, "on") || a.Key == "style" {
					return a.Key + "="
				}
				v := strings.Map(func(r rune) rune {
					if r <= ' ' {
						return -1
					}
					return unicode.ToLower(r)
				}, a.Val)
				for _, scheme := range []string{"javascript:", "vbscript:", "data:"} {
					if strings.Contains(v, scheme) {
						return a.Key + "=" + scheme
					}
				}
			}
		}
	}
}

func TestRenderRemovesHostileMarkup(t *testing.T) {
	r := render.New()
	for name, md := range map[string]string{
		"script tag":                     "hi <script>alert(1)</script>",
		"script block":                   "<script>\nalert(1)\n</script>",
		"img onerror":                    `<img src="x" onerror="alert(1)">`,
		"javascript link":                "[click](javascript:alert(1))",
		"javascript link upper":          "[click](JaVaScRiPt:alert(1))",
		"javascript autolink":            "<javascript:alert(1)>",
		"javascript in raw html":         `<a href="javascript:alert(1)">x</a>`,
		"encoded tab":                    "[x](jav&#x09;ascript:alert(1))",
		"encoded tab raw":                `<a href="jav&#x09;ascript:alert(1)">x</a>`,
		"entity encoded":                 "[x](&#106;avascript:alert(1))",
		"vbscript":                       "[x](vbscript:msgbox(1))",
		"data image":                     "![x](data:image/png;base64,iVBORw0KGgo=)",
		"data html link":                 "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
		"svg":                            `<svg onload="alert(1)"><script>alert(1)</script></svg>`,
		"svg image":                      "![x](https://evil.example/x.svg\" onload=\"alert(1))",
		"style attribute":                `<p style="background:url(javascript:alert(1))">x</p>`,
		"style element":                  "<style>body{display:none}</style>",
		"iframe":                         `<iframe src="https://evil.example"></iframe>`,
		"object and embed":               `<object data="x.swf"></object><embed src="x.swf">`,
		"form":                           `<form action="https://evil.example"><input name=a></form>`,
		"nested tags":                    "<<script>script>alert(1)<</script>/script>",
		"html in link text":              "[<img src=x onerror=alert(1)>](https://ok.example)",
		"quote breaking title":           `[x](https://ok.example "a\" onmouseover=\"alert(1)")`,
		"html comment trick":             "<!-- --><script>alert(1)</script>",
		"markdown in raw html":           "<div onclick=\"alert(1)\">\n\n**x**\n\n</div>",
		"reference link to javascript":   "[x][1]\n\n[1]: javascript:alert(1)",
		"image with javascript":          "![x](javascript:alert(1))",
		"http image":                     "![x](http://plain.example/x.png)",
		"relative image outside uploads": "![x](/api/user)",
	} {
		t.Run(name, func(t *testing.T) {
			got := r.Render(md)
			if m := hostile(got); m != "" {
				t.Fatalf("Render(%q) = %q: holds %q", md, got, m)
			}
			if strings.Contains(got, "<img") && strings.Contains(got, "src=") && !strings.Contains(got, `src="https://`) && !strings.Contains(got, `src="`+domain.MediaPathPrefix) {
				t.Fatalf("Render(%q) = %q: an image from elsewhere", md, got)
			}
		})
	}
}

func TestRenderKeepsWhatAuthorsWrite(t *testing.T) {
	r := render.New()
	for name, c := range map[string]struct{ md, want string }{
		"table":          {"| a | b |\n|:-|-:|\n| 1 | 2 |", `<th align="left">a</th>`},
		"table cell":     {"| a | b |\n|:-|-:|\n| 1 | 2 |", `<td align="right">2</td>`},
		"strikethrough":  {"~~gone~~", "<del>gone</del>"},
		"autolink www":   {"see www.example.com now", `<a href="http://www.example.com" rel="nofollow ugc noopener">www.example.com</a>`},
		"autolink https": {"see https://example.com/a?b=c now", `<a href="https://example.com/a?b=c" rel="nofollow ugc noopener">`},
		"link rel":       {"[x](https://example.com)", `<a href="https://example.com" rel="nofollow ugc noopener">x</a>`},
		"angle autolink": {"<https://example.com>", `<a href="https://example.com" rel="nofollow ugc noopener">`},
		"mailto":         {"[m](mailto:a@example.com)", `href="mailto:a@example.com"`},
		"https image":    {"![cat](https://img.example/cat.png)", `<img src="https://img.example/cat.png" alt="cat">`},
		"upload image":   {"![cat](" + upload + ")", `<img src="` + upload + `" alt="cat">`},
		"code escaped":   {"`<script>`", "<code>&lt;script&gt;</code>"},
		"fenced code":    {"```go\nfunc main() {}\n```", `<pre><code class="language-go">func main() {}`},
		"emphasis":       {"*a* **b**", "<em>a</em> <strong>b</strong>"},
		"list":           {"- a\n- b", "<ul>\n<li>a</li>\n<li>b</li>\n</ul>"},
		"blockquote":     {"> q", "<blockquote>\n<p>q</p>\n</blockquote>"},
	} {
		t.Run(name, func(t *testing.T) {
			if got := r.Render(c.md); !strings.Contains(got, c.want) {
				t.Fatalf("Render(%q) = %q, want it to hold %q", c.md, got, c.want)
			}
		})
	}
}

func TestRenderDropsImagesFromElsewhere(t *testing.T) {
	r := render.New()
	for _, md := range []string{"![x](http://plain.example/x.png)", "![x](/api/user)", "![x](/media/../api/user)",
		"![x](data:image/png;base64,iVBORw0KGgo=)", "![x](//evil.example/x.png)"} {
		if got := r.Render(md); strings.Contains(got, "src=") {
			t.Errorf("Render(%q) = %q: kept the source", md, got)
		}
	}
}

func TestRenderHeadingIDsAreStableAndUnique(t *testing.T) {
	r := render.New()
	md := "# Getting started\n\ntext\n\n## Getting started\n\n### Getting started\n\n## Other *part*"
	got := r.Render(md)
	for _, want := range []string{`<h1 id="getting-started">`, `<h2 id="getting-started-1">`, `<h3 id="getting-started-2">`, `<h2 id="other-part">`} {
		if !strings.Contains(got, want) {
			t.Errorf("Render = %q, want it to hold %q", got, want)
		}
	}
	if again := r.Render(md); again != got {
		t.Errorf("a second rendering differs:\n%s\n%s", got, again)
	}
}

func TestRenderEveryLinkCarriesRel(t *testing.T) {
	got := render.New().Render("[a](https://a.example) www.b.example <https://c.example> [d][1]\n\n[1]: /article/x")
	if n, rels := strings.Count(got, "<a "), strings.Count(got, `rel="`+render.LinkRel+`"`); n != 4 || rels != n {
		t.Fatalf("Render = %q: %d links, %d with rel", got, n, rels)
	}
}

func TestRenderEmptyBody(t *testing.T) {
	if got := render.New().Render(""); got != "" {
		t.Fatalf("Render(\"\") = %q", got)
	}
}

// hugeBodies are bodies at the article size limit built to make a parser work hardest: deep
// nesting of every kind, long runs of delimiters, many links.
func hugeBodies() map[string]string {
	n := domain.MaxBodyLen
	return map[string]string{
		"nested quotes":      strings.Repeat(">", n),
		"spaced quotes":      strings.Repeat("> ", n/2),
		"quotes in lists":    strings.Repeat("- > ", n/4),
		"lists in quotes":    strings.Repeat("> 1. ", n/5),
		"nested lists":       strings.Repeat("- ", n/2),
		"nested brackets":    strings.Repeat("[", n/2) + strings.Repeat("]", n/2),
		"nested emphasis":    strings.Repeat("*a", n/2),
		"unclosed backticks": strings.Repeat("`a", n/2),
		"nested html":        strings.Repeat("<div>", n/5),
		"many links":         strings.Repeat("[a](https://e.x) ", n/17),
		"table":              "|a|b|\n|-|-|\n" + strings.Repeat("|1|2|\n", n/6),
		"autolinks":          strings.Repeat("www.a.bc ", n/9),
	}
}

func TestRenderHugeInputsInBoundedTime(t *testing.T) {
	r := render.New()
	for name, md := range hugeBodies() {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			out := r.Render(md)
			// A generous bound under the race detector on a shared machine: a quadratic parse of
			// 200k characters takes minutes, not seconds.
			if took := time.Since(start); took > 10*time.Second {
				t.Fatalf("Render took %v", took)
			}
			if m := hostile(out); m != "" {
				t.Fatalf("output holds %q", m)
			}
		})
	}
}

func BenchmarkRender(b *testing.B) {
	r := render.New()
	for name, md := range hugeBodies() {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(md)))
			for b.Loop() {
				r.Render(md)
			}
		})
	}
}
