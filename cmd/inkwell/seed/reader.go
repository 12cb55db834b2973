package seed

import (
	"context"
	"fmt"
)

// Reader is one reader added to a seed: a user with the seed's password who follows Follows of
// the seeded authors and favorites Favorites of the seeded articles, so the feed and
// ?favorited= lists have a realistic signed-in viewer to measure (make bench's scale section).
type Reader struct {
	Username  string // also the email's local part; "" adds no reader
	Follows   int    // at most the seed's Users
	Favorites int    // at most the seed's Articles
}

// seedReader adds o.Reader in one transaction, with set-based INSERT ... SELECT statements: the
// follows and likes go through the tables' usual triggers (a few hundred rows), so whatever counts
// they maintain stay exact. The authors and articles are drawn at random from this seed run's
// (tag), not from data already in the database.
func (s *Seeder) seedReader(ctx context.Context, o Options, tag string, progress func(string, int, int)) error {
	r := o.Reader
	if r.Username == "" {
		return nil
	}
	if r.Follows < 0 || r.Follows > o.Users || r.Favorites < 0 || r.Favorites > o.Articles {
		return fmt.Errorf("seed reader: %d follows of %d users, %d favorites of %d articles", r.Follows, o.Users, r.Favorites, o.Articles)
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	var id int64
	if err := tx.QueryRow(ctx,
		"INSERT INTO users (email, username, password_hash) VALUES ($1, $2, $3) RETURNING id",
		r.Username+"@example.com", r.Username, o.PasswordHash).Scan(&id); err != nil {
		return fmt.Errorf("seed reader: %w", err)
	}
	if _, err := tx.Exec(ctx, `
		INSERT INTO follows (follower_id, followee_id)
		SELECT $1, u.id FROM users u WHERE u.username LIKE $2 ORDER BY random() LIMIT $3`,
		id, "seed"+tag+`\_%`, r.Follows); err != nil {
		return fmt.Errorf("seed reader follows: %w", err)
	}
	if _, err := tx.Exec(ctx, `
		INSERT INTO likes (user_id, biz, biz_id, liked)
		SELECT $1, 'article', a.id, true FROM articles a WHERE a.slug LIKE $2 ORDER BY random() LIMIT $3`,
		id, fmt.Sprintf("seed-%s-%%", tag), r.Favorites); err != nil {
		return fmt.Errorf("seed reader favorites: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return err
	}
	// The planner's view of the two tables must include the reader (a feed plan over a follows
	// table it believes empty is not the plan a real reader gets).
	if _, err := s.pool.Exec(ctx, "ANALYZE follows, likes"); err != nil {
		return fmt.Errorf("analyze follows, likes: %w", err)
	}
	progress("reader", r.Follows+r.Favorites, r.Follows+r.Favorites)
	return nil
}
