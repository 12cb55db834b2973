package domain_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/inkwell-dev/inkwell/domain"
)

func TestSlugify(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		title string
		want  string
	}{
		{name: "words become lower-case and hyphen-separated", title: "How to Train Your Dragon", want: "how-to-train-your-dragon"},
		{name: "runs of spaces and punctuation collapse to one hyphen", title: "Hello,   World!!  Again", want: "hello-world-again"},
		{name: "leading and trailing punctuation is dropped", title: "  ...Hello, World!!  ", want: "hello-world"},
		{name: "symbols are separators", title: "C++ & Go: a -- comparison", want: "c-go-a-comparison"},
		{name: "underscores and dots are separators", title: "snake_case v1.26", want: "snake-case-v1-26"},
		{name: "existing hyphens are kept single", title: "well-known --- facts", want: "well-known-facts"},
		{name: "accented Latin letters are kept and lower-cased", title: "Ünïcode STRAßE Café", want: "ünïcode-straße-café"},
		{name: "Cyrillic is kept", title: "Привет, Мир", want: "привет-мир"},
		{name: "CJK is kept", title: "日本語 タイトル", want: "日本語-タイトル"},
		{name: "combining vowel signs stay inside their word", title: "हिन्दी में लेख", want: "हिन्दी-में-लेख"},
		{name: "Thai vowel and tone marks stay inside their word", title: "ภาษาไทย ที่ดี", want: "ภาษาไทย-ที่ดี"},
		{name: "a decomposed accent stays on its letter", title: "nai\u0308ve Cafe\u0301", want: "nai\u0308ve-cafe\u0301"},
		{name: "a mark with no letter before it is a separator", title: "\u0308abc !\u0301 def", want: "abc-def"},
		{name: "emoji are separators", title: "Launch 🚀 day", want: "launch-day"},
		{name: "digits only", title: "2026", want: "2026"},
		{name: "all punctuation gives an empty slug", title: "!!! ??? --- ...", want: ""},
		{name: "empty title", title: "", want: ""},
		{name: "blank title", title: " \t\n ", want: ""},
		{name: "long ASCII is cut at 80 bytes", title: strings.Repeat("a", 100), want: strings.Repeat("a", 80)},
		{name: "a hyphen that would be last is dropped", title: strings.Repeat("a", 80) + " b", want: strings.Repeat("a", 80)},
		{name: "a word that does not fit after a hyphen is dropped with it", title: strings.Repeat("a", 79) + " b", want: strings.Repeat("a", 79)},
		{name: "a word that fits exactly after a hyphen is kept", title: strings.Repeat("a", 78) + " b", want: strings.Repeat("a", 78) + "-b"},
		{name: "multi-byte letters are never split", title: strings.Repeat("é", 50), want: strings.Repeat("é", 40)},
		{name: "a multi-byte letter that would pass 80 bytes is left out", title: strings.Repeat("a", 79) + "é", want: strings.Repeat("a", 79)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := domain.Slugify(tc.title); got != tc.want {
				t.Errorf("Slugify(%q) = %q, want %q", tc.title, got, tc.want)
			}
		})
	}
}

// TestSlugify_Invariants checks, for titles of many lengths and separators around the 80-byte cut,
// that every slug is valid UTF-8, at most MaxSlugBaseLen bytes, lower-case, and neither starts nor
// ends with a hyphen nor contains two in a row.
func TestSlugify_Invariants(t *testing.T) {
	t.Parallel()
	words := []string{"a", "go", "Dragon", "é", "e\u0301", "日本", "ßx", "Привет", "हिन्दी", "42"}
	seps := []string{" ", "-", " -- ", "!", "、", "🚀", "_"}
	for _, w := range words {
		for _, sep := range seps {
			for n := 1; n <= 90; n++ {
				title := strings.Repeat(w+sep, n)
				got := domain.Slugify(title)
				if !utf8.ValidString(got) {
					t.Fatalf("Slugify(%q) = %q is not valid UTF-8", title, got)
				}
				if len(got) > domain.MaxSlugBaseLen {
					t.Fatalf("Slugify(%q) = %q is %d bytes, over %d", title, got, len(got), domain.MaxSlugBaseLen)
				}
				if got == "" || strings.HasPrefix(got, "-") || strings.HasSuffix(got, "-") || strings.Contains(got, "--") {
					t.Fatalf("Slugify(%q) = %q: empty, or a stray hyphen", title, got)
				}
				if got != strings.ToLower(got) {
					t.Fatalf("Slugify(%q) = %q is not lower-case", title, got)
				}
			}
		}
	}
}

func TestNormalizeTags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   []string
		want []string
	}{
		{name: "nil gives an empty, non-nil list", in: nil, want: []string{}},
		{name: "sorted alphabetically", in: []string{"training", "dragons"}, want: []string{"dragons", "training"}},
		{name: "any order comes out sorted", in: []string{"rust", "go", "zig"}, want: []string{"go", "rust", "zig"}},
		{name: "already sorted stays", in: []string{"a", "b", "c"}, want: []string{"a", "b", "c"}},
		{name: "tags are trimmed", in: []string{"  go ", "\trust\n"}, want: []string{"go", "rust"}},
		{name: "trimmed before sorting", in: []string{" zig", "b", "  a"}, want: []string{"a", "b", "zig"}},
		{name: "duplicates are dropped", in: []string{"go", "rust", "go", " rust ", "zig"}, want: []string{"go", "rust", "zig"}},
		{name: "blank tags are dropped", in: []string{"", "go", "   "}, want: []string{"go"}},
		{name: "only blanks give an empty, non-nil list", in: []string{" ", ""}, want: []string{}},
		{name: "case is significant, upper case first", in: []string{"go", "Go"}, want: []string{"Go", "go"}},
		{name: "byte order beyond ASCII", in: []string{"épée", "zen", "art"}, want: []string{"art", "zen", "épée"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := append([]string(nil), tc.in...)
			got := domain.NormalizeTags(tc.in)
			if got == nil || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("NormalizeTags(%q) = %#v, want %#v", tc.in, got, tc.want)
			}
			if !reflect.DeepEqual(in, tc.in) {
				t.Errorf("NormalizeTags changed its argument: %q, was %q", tc.in, in)
			}
		})
	}
}

func TestValidateArticle(t *testing.T) {
	t.Parallel()
	ok := "fine"
	p := func(s string) *string { return &s }
	tagsN := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("tag%d", i)
		}
		return out
	}
	tests := []struct {
		name                     string
		title, description, body *string
		tags                     []string
		want                     map[string][]string // nil: valid
	}{
		{name: "valid article", title: p("How to train your dragon"), description: p("Ever wonder how?"), body: p("You have to believe"), tags: []string{"dragons"}},
		{name: "nothing given (an empty update) is valid", want: nil},
		{
			name: "blank fields", title: p("   "), description: p("\t"), body: p(" \n "),
			want: map[string][]string{"title": {"can't be blank"}, "description": {"can't be blank"}, "body": {"can't be blank"}},
		},
		{name: "title of 200 characters (multi-byte) is fine", title: p(strings.Repeat("é", 200))},
		{name: "surrounding spaces do not count towards the title limit", title: p("  " + strings.Repeat("t", 200) + "  ")},
		{name: "title of 201 characters", title: p(strings.Repeat("é", 201)), want: map[string][]string{"title": {"is too long (maximum is 200 characters)"}}},
		{name: "title without a letter or digit", title: p("!!! ???"), want: map[string][]string{"title": {"must contain at least one letter or digit"}}},
		{name: "description of 1000 characters is fine", description: p(strings.Repeat("d", 1000))},
		{name: "description of 1001 characters", description: p(strings.Repeat("d", 1001)), want: map[string][]string{"description": {"is too long (maximum is 1000 characters)"}}},
		{name: "body of 200000 characters is fine", body: p(strings.Repeat("ü", 200_000))},
		{name: "body of 200001 characters", body: p(strings.Repeat("b", 200_001)), want: map[string][]string{"body": {"is too long (maximum is 200000 characters)"}}},
		{name: "ten tags are fine", title: &ok, tags: tagsN(10)},
		{name: "eleven tags", tags: tagsN(11), want: map[string][]string{"tagList": {"has too many tags (maximum is 10)"}}},
		{name: "a blank tag", tags: []string{"go", "  "}, want: map[string][]string{"tagList": {"can't contain blank tags"}}},
		{name: "a tag of 40 characters is fine", tags: []string{strings.Repeat("ж", 40)}},
		{name: "a tag of 41 characters", tags: []string{"go", strings.Repeat("ж", 41)}, want: map[string][]string{"tagList": {"has a tag that is too long (maximum is 40 characters)"}}},
		{
			name: "several blank and long tags are reported once each kind",
			tags: append(tagsN(10), "", strings.Repeat("x", 41), ""),
			want: map[string][]string{"tagList": {"has too many tags (maximum is 10)", "can't contain blank tags"}},
		},
		{
			name: "every problem at once", title: p(""), description: p(strings.Repeat("d", 1001)), body: p(""), tags: []string{""},
			want: map[string][]string{
				"title":       {"can't be blank"},
				"description": {"is too long (maximum is 1000 characters)"},
				"body":        {"can't be blank"},
				"tagList":     {"can't contain blank tags"},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v := &domain.ValidationError{}
			domain.ValidateArticle(v, tc.title, tc.description, tc.body, tc.tags)
			if tc.want == nil {
				if err := v.OrNil(); err != nil {
					t.Fatalf("unexpected validation error: %v", err)
				}
				return
			}
			if !reflect.DeepEqual(v.Fields, tc.want) {
				t.Errorf("fields = %v, want %v", v.Fields, tc.want)
			}
		})
	}
}

func TestValidateComment(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body string
		want []string // messages for "body"; nil: valid
	}{
		{name: "ordinary comment", body: "Thank you so much!"},
		{name: "empty", body: "", want: []string{"can't be blank"}},
		{name: "whitespace only", body: " \n\t ", want: []string{"can't be blank"}},
		{name: "10000 characters (multi-byte) is fine", body: strings.Repeat("ё", 10_000)},
		{name: "10001 characters", body: strings.Repeat("c", 10_001), want: []string{"is too long (maximum is 10000 characters)"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v := &domain.ValidationError{}
			domain.ValidateComment(v, tc.body)
			if tc.want == nil {
				if err := v.OrNil(); err != nil {
					t.Fatalf("unexpected validation error: %v", err)
				}
				return
			}
			if want := map[string][]string{"body": tc.want}; !reflect.DeepEqual(v.Fields, want) {
				t.Errorf("fields = %v, want %v", v.Fields, want)
			}
		})
	}
}

func TestArticle_VisibleTo(t *testing.T) {
	t.Parallel()
	const author, other int64 = 11, 12
	tests := []struct {
		name     string
		status   domain.ArticleStatus
		authorID int64
		viewerID int64
		want     bool
	}{
		{name: "published, anonymous", status: domain.StatusPublished, authorID: author, viewerID: 0, want: true},
		{name: "published, someone else", status: domain.StatusPublished, authorID: author, viewerID: other, want: true},
		{name: "published, author", status: domain.StatusPublished, authorID: author, viewerID: author, want: true},
		{name: "draft, anonymous", status: domain.StatusDraft, authorID: author, viewerID: 0, want: false},
		{name: "draft, someone else", status: domain.StatusDraft, authorID: author, viewerID: other, want: false},
		{name: "draft, author", status: domain.StatusDraft, authorID: author, viewerID: author, want: true},
		{name: "withdrawn, anonymous", status: domain.StatusWithdrawn, authorID: author, viewerID: 0, want: false},
		{name: "withdrawn, someone else", status: domain.StatusWithdrawn, authorID: author, viewerID: other, want: false},
		{name: "withdrawn, author", status: domain.StatusWithdrawn, authorID: author, viewerID: author, want: true},
		// An article whose author id was never set must not become readable to every anonymous client.
		{name: "draft without an author id, anonymous", status: domain.StatusDraft, authorID: 0, viewerID: 0, want: false},
		{name: "unknown status, someone else", status: "archived", authorID: author, viewerID: other, want: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := domain.Article{ID: 1, AuthorID: tc.authorID, Status: tc.status}
			if got := a.VisibleTo(tc.viewerID); got != tc.want {
				t.Errorf("VisibleTo(%d) of a %s article by %d = %v, want %v", tc.viewerID, tc.status, tc.authorID, got, tc.want)
			}
		})
	}
}

func TestParseArticleStatus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in     string
		want   domain.ArticleStatus
		wantOK bool
	}{
		{in: "draft", want: domain.StatusDraft, wantOK: true},
		{in: "published", want: domain.StatusPublished, wantOK: true},
		{in: "withdrawn", want: domain.StatusWithdrawn, wantOK: true},
		{in: "scheduled", want: domain.StatusScheduled, wantOK: true},
		{in: "hidden"},
		{in: ""},
		{in: "Draft"},
		{in: "PUBLISHED"},
		{in: " draft"},
		{in: "deleted"},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%q", tc.in), func(t *testing.T) {
			t.Parallel()
			got, ok := domain.ParseArticleStatus(tc.in)
			if got != tc.want || ok != tc.wantOK {
				t.Errorf("ParseArticleStatus(%q) = (%q, %v), want (%q, %v)", tc.in, got, ok, tc.want, tc.wantOK)
			}
		})
	}
}
