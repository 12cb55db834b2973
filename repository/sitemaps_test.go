package repository_test

import (
	"slices"
	"testing"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/repository"
	"github.com/inkwell-dev/inkwell/service"
)

// A sitemap slice is the published articles of a range of publication places, in that order;
// drafts, withdrawn and hidden articles are in no slice, and the last place is a published one's.
func TestSitemapRepository_SlicesFollowThePublicationOrder(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	ctx := t.Context()
	for _, s := range []string{
		`INSERT INTO users (email, username, password_hash) VALUES ('map@example.com', 'map', 'x')`,
		`INSERT INTO articles (slug, author_id, title, description, body, status, published_at, search_seq)
		 SELECT v.slug, u.id, v.slug, 'd', 'b', v.status, CASE WHEN v.seq IS NOT NULL THEN now() END, v.seq
		 FROM users u, (VALUES ('p1', 'published', 1), ('p999', 'published', 999), ('p998', 'published', 998),
		                       ('p1000', 'published', 1000), ('p1500', 'published', 1500), ('gone', 'withdrawn', 1200),
		                       ('late-gone', 'withdrawn', 2500), ('draft', 'draft', NULL), ('unplaced', 'published', NULL))
		      AS v(slug, status, seq)`,
		`INSERT INTO articles (slug, author_id, title, description, body, status, hidden_status, published_at, search_seq)
		 SELECT 'hidden', id, 'h', 'd', 'b', 'hidden', 'published', now(), 1100 FROM users`,
	} {
		if _, err := db.Pool.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	r := repository.NewSitemapRepository(db.Pool, dao.New())
	last, err := r.LastSitemapSeq(ctx)
	if err != nil || last != 1500 {
		t.Fatalf("last place = %d, %v; want 1500 (the last published one)", last, err)
	}
	slugs := func(from, until int64) []string {
		t.Helper()
		got, err := r.SitemapSlice(ctx, from, until)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]string, len(got))
		for i, a := range got {
			if a.UpdatedAt.IsZero() {
				t.Errorf("%s has no updated time", a.Slug)
			}
			out[i] = a.Slug
		}
		return out
	}
	if got := slugs(0, 1000); !slices.Equal(got, []string{"p1", "p998", "p999"}) {
		t.Errorf("places [0, 1000) = %v", got)
	}
	if got := slugs(1000, 2000); !slices.Equal(got, []string{"p1000", "p1500"}) {
		t.Errorf("places [1000, 2000) = %v", got)
	}
	if got := slugs(2000, 3000); len(got) != 0 {
		t.Errorf("places [2000, 3000) = %v, want none", got)
	}
	var _ service.SitemapStore = r
}
