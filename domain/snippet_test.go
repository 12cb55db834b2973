package domain_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/inkwell-dev/inkwell/domain"
)

// words returns n words "w0 w1 …" from the given index.
func words(from, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "w" + strings.Repeat("x", (from+i)%3) + string(rune('a'+(from+i)%26))
	}
	return out
}

func matchOf(ws ...string) func(string) bool {
	return func(w string) bool { return slices.Contains(ws, strings.ToLower(w)) }
}

func TestSnippet(t *testing.T) {
	t.Parallel()
	long := func(parts ...string) string { return strings.Join(parts, " ") }
	filler := func(n int) string { return strings.Join(words(0, n), " ") }
	for _, tc := range []struct {
		name  string
		text  string
		match func(string) bool
		want  string
	}{
		{name: "empty", text: "", match: matchOf("x"), want: ""},
		{name: "no words", text: " … !! ", match: matchOf("x"), want: ""},
		{name: "a match is marked with the words before and after it, case kept",
			text: "Here be Dragons, said the map.", match: matchOf("dragons"), want: "Here be \x01Dragons\x02, said the map"},
		{name: "text between words is kept as written, markup included",
			text: "a <b>dragon</b> & co", match: matchOf("dragon"), want: "a <b>\x01dragon\x02</b> & co"},
		{name: "no match: the opening 30 words",
			text: filler(50), match: matchOf("nothing"), want: filler(30)},
		{name: "a fragment starts 6 words before the first match and holds 30 words",
			text: long(filler(100), "dragon", filler(100)), match: matchOf("dragon"),
			want: long(strings.Join(words(94, 6), " "), "\x01dragon\x02", filler(23))},
		{name: "matches close together share a fragment",
			text: long(filler(3), "dragon", "and", "egg", filler(40)), match: matchOf("dragon", "egg"),
			want: long(filler(3), "\x01dragon\x02", "and", "\x01egg\x02", filler(24))},
		{name: "matches far apart: two fragments, the third match is left out",
			text: long("dragon", filler(60), "egg", filler(60), "dragon", filler(10)), match: matchOf("dragon", "egg"),
			want: long("\x01dragon\x02", filler(29)) + " … " + long(strings.Join(words(54, 6), " "), "\x01egg\x02", filler(23))},
		{name: "a second fragment never repeats the first one's words",
			text: long("dragon", filler(31), "egg", filler(40)), match: matchOf("dragon", "egg"),
			want: long("\x01dragon\x02", filler(29)) + " … " + long(strings.Join(words(29, 2), " "), "\x01egg\x02", filler(27))},
		{name: "letters of any script and digits are words",
			text: "Über 3d Drachen—und Eier", match: matchOf("über", "3d", "eier"), want: "\x01Über\x02 \x013d\x02 Drachen—und \x01Eier\x02"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := domain.Snippet(tc.text, tc.match); got != tc.want {
				t.Fatalf("Snippet:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestSnippetText_RemovesMarks(t *testing.T) {
	t.Parallel()
	got := domain.SnippetText("a \x01summary\x02", "the \x02body")
	if got != "a summary\nthe body" {
		t.Fatalf("SnippetText = %q", got)
	}
}

func TestSnippetWords(t *testing.T) {
	t.Parallel()
	got := slices.Collect(domain.SnippetWords("Here be Dragons, 3d—Über!"))
	if want := []string{"Here", "be", "Dragons", "3d", "Über"}; !slices.Equal(got, want) {
		t.Fatalf("SnippetWords = %q, want %q", got, want)
	}
}

// A page's snippet for a 130-word text (the seed's size) with a match near the end.
func BenchmarkSnippet(b *testing.B) {
	text := domain.SnippetText("A Short description of the article.", strings.Repeat("Then the words of a body go on, and on. ", 16)+"Here be Dragons.")
	match := func(w string) bool { return (w[0] == 'd' || w[0] == 'D') && strings.ToLower(w) == "dragons" }
	b.ReportAllocs()
	for b.Loop() {
		if domain.Snippet(text, match) == "" {
			b.Fatal("no snippet")
		}
	}
}
