package search_test

import (
	"strings"
	"testing"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/service"
)

// FuzzSearchQuery sends arbitrary q to PostgreSQL (websearch_to_tsquery, the CJK tsquery, the
// ranking and the snippets): any query the edge accepts must be answered, never fail (a failure
// here is a 500). `make fuzz` runs it.
func FuzzSearchQuery(f *testing.F) {
	db := testenv.NewDB(f)
	if _, err := db.Pool.Exec(f.Context(), `
		INSERT INTO users (email, username, password_hash) VALUES ('fuzz@example.com', 'fuzz', 'x');
		INSERT INTO articles (slug, author_id, title, description, body, status, published_at, search_vector, search_seq)
		SELECT 'fuzz-' || i, u.id, t.title, 'about ' || t.title, t.body, 'published', now() - i * interval '1 minute',
		       inkwell_search_document('english', t.title, 'about ' || t.title, t.body), nextval('articles_search_seq')
		FROM users u, (VALUES (1, 'Dragons', 'here be dragons and their eggs'), (2, '缓存击穿', '我们讨论缓存击穿和雪崩'),
		                      (3, 'Tokyo', '東京タワーは日本の電波塔です'), (4, 'Odd <b> & "quotes"', 'a:* & | ! ( ) <-> '' \\ end')) AS t(i, title, body)`); err != nil {
		f.Fatal(err)
	}
	repo := setup(f, db, envOpts{}).search
	for _, q := range []string{"dragons", `"here be" -eggs or tokyo`, "缓存", "缓", "東京 タワー", "!", "a:*", `'`, `\`, "( ) & |",
		"<->", "-", `""`, "or or or", "the and", "dragon's", "x" + strings.Repeat("缓", 200), "\u200b", "\ufeff", "ﾃｽﾄ", "𝔡𝔯𝔞𝔤𝔬𝔫",
		"a\u0301", "%", "_", strings.Repeat("-", 40), strings.Repeat("- (", 40), "dragons:A", "!dragons", "dragons <2> eggs", "'dragons' & 'eggs'"} {
		f.Add(q, 20)
	}
	f.Fuzz(func(t *testing.T, q string, limit int) {
		terms, err := domain.ParseSearchQuery(q)
		if err != nil || strings.ContainsRune(q, 0) || !isUTF8(q) {
			return // refused at the edge with a 422
		}
		limit = 1 + (limit%100+100)%100
		page, err := repo.Search(t.Context(), service.SearchQuery{Terms: terms, Limit: limit})
		if err != nil {
			t.Fatalf("search %q: %v", q, err)
		}
		if page.Next != nil {
			if _, err := repo.Search(t.Context(), service.SearchQuery{Terms: terms, Limit: limit, After: page.Next}); err != nil {
				t.Fatalf("search %q, page 2: %v", q, err)
			}
		}
	})
}

func isUTF8(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }
