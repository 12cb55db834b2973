package search_test

import (
	"context"
	"slices"
	"testing"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/repository/search"
)

func TestPeopleSearch_ExactThenPrefixThenSimilarThenBio(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	ctx := context.Background()
	ids := map[int64]string{}
	for name, bio := range map[string]string{
		"Alice": "", "alice.w": "", "alicia": "", "malice": "", "ali_baba": "", "bob": "Dragons and wagons, mostly dragons",
		"carol": "wagon builder", "dave": "Alice's friend",
	} {
		var id int64
		if err := db.Pool.QueryRow(ctx, `INSERT INTO users (email, email_canonical, username, password_hash, bio)
			VALUES ($1, $1, $2, 'x', $3) RETURNING id`, name+"@example.com", name, bio).Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids[id] = name
	}
	people := search.NewPeople(db.Pool, dao.New(), nil)
	names := func(q string, limit int) []string {
		t.Helper()
		got, err := people.SearchUsers(ctx, q, limit)
		if err != nil {
			t.Fatalf("SearchUsers(%q): %v", q, err)
		}
		out := make([]string, len(got))
		for i, id := range got {
			out[i] = ids[id]
		}
		return out
	}
	for _, c := range []struct {
		q     string
		limit int
		want  []string
	}{
		// exact (any case), prefix (alice.w, also similar: counted once, as a prefix), similar
		// (alicia and malice equally, by name), bio words (dave's "Alice's").
		{"ALICE", 10, []string{"Alice", "alice.w", "alicia", "malice", "dave"}},
		{"alice", 2, []string{"Alice", "alice.w"}},
		{"dragons", 10, []string{"bob"}}, // bio words, in any case
		{"wagon", 10, []string{"carol"}}, // 'simple' words are not stemmed: wagons is another word
		{"bo", 10, []string{"bob"}},
		// LIKE metacharacters match themselves: ali_b is a prefix of ali_baba (then similar names:
		// its trigrams ignore the _), a_i of nobody (unescaped it would be a prefix of ali_baba,
		// Alice…), % and \ of nobody (unescaped, % would match everyone and a lone \ would be an
		// invalid pattern).
		{"ali_b", 10, []string{"ali_baba", "Alice", "alicia"}},
		{"a_i", 10, []string{}},
		{"%", 10, []string{}},
		{`\`, 10, []string{}},
		{"zzzzzz", 10, []string{}},
	} {
		if got := names(c.q, c.limit); !slices.Equal(got, c.want) {
			t.Errorf("SearchUsers(%q, %d) = %q, want %q", c.q, c.limit, got, c.want)
		}
	}
}

func TestTagSearch_PrefixByArticleCount(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	ctx := context.Background()
	if _, err := db.Pool.Exec(ctx, `INSERT INTO tag_article_counts (tag, published) VALUES
		('Go', 5), ('golang', 9), ('gopher', 1), ('go_lang', 2), ('gone', 0), ('100%', 4), ('rust', 7), ('a\b', 1)`); err != nil {
		t.Fatal(err)
	}
	tags := search.NewTags(db.Pool, dao.New(), nil)
	for _, c := range []struct {
		q     string
		limit int
		want  []string
	}{
		{"go", 10, []string{"golang", "Go", "go_lang", "gopher"}}, // most used first; gone has no published article
		{"GO", 2, []string{"golang", "Go"}},
		{"go_", 10, []string{"go_lang"}},
		{"100%", 10, []string{"100%"}},
		{"%", 10, []string{}},
		{`a\`, 10, []string{`a\b`}},
		{`\`, 10, []string{}},
		{"python", 10, []string{}},
	} {
		got, err := tags.SearchTags(ctx, c.q, c.limit)
		if err != nil {
			t.Fatalf("SearchTags(%q): %v", c.q, err)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("SearchTags(%q, %d) = %q, want %q", c.q, c.limit, got, c.want)
		}
	}
}
