package repository_test

import (
	"strings"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/cmd/inkwell/seed"
	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/internal/testenv"
)

// seedForPlans bulk-loads db the way `inkwell seed` does, adds a reader's follows and likes, and
// analyzes every table.
func seedForPlans(t *testing.T, db *testenv.DB) {
	t.Helper()
	ctx := t.Context()
	err := seed.New(db.Pool, dao.New()).Seed(ctx, seed.Options{
		Users: 300, Articles: 30_000, Days: 60, PasswordHash: "not-a-hash", Now: time.Now(),
	}, func(string, int, int) {})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		`INSERT INTO users (email, username, password_hash) VALUES ('reader@example.com', 'reader', 'x')`,
		`INSERT INTO follows (follower_id, followee_id)
		 SELECT r.id, u.id FROM users r, users u WHERE r.username = 'reader' AND u.id <> r.id ORDER BY u.id LIMIT 100`,
		`INSERT INTO likes (user_id, biz, biz_id, liked)
		 SELECT r.id, 'article', a.id, true FROM users r, articles a WHERE r.username = 'reader' AND a.id % 150 = 0`,
		`INSERT INTO likes (user_id, biz, biz_id, liked)
		 SELECT u.id, 'article', a.id, true FROM users u, articles a
		 WHERE u.username <> 'reader' AND a.id % 600 = u.id % 600`,
		`INSERT INTO follows (follower_id, followee_id)
		 SELECT u.id, v.id FROM users u, users v WHERE u.id <> v.id AND (u.id + v.id) % 10 = 0 ON CONFLICT DO NOTHING`,
		`INSERT INTO notifications (user_id, kind, actor_id, article_id, event_id, created_at)
		 SELECT u.id, 'article_published', a.author_id, a.id, 'ev-' || a.id || '-' || u.id, a.created_at
		 FROM users u, articles a WHERE a.id % 300 = u.id % 300`,
		`INSERT INTO reading_history (user_id, article_id, last_read_at)
		 SELECT u.id, a.id, a.created_at FROM users u, articles a WHERE a.id % 300 = (u.id + 7) % 300`,
		`INSERT INTO collections (owner_id, name) SELECT u.id, 'c' || g FROM users u, generate_series(1, 3) g`,
		`INSERT INTO collection_items (collection_id, article_id, created_at)
		 SELECT c.id, a.id, a.created_at FROM collections c, articles a WHERE a.id % 900 = c.id % 900`,
		`UPDATE articles SET status = CASE WHEN id % 10 = 0 THEN 'draft' ELSE 'withdrawn' END WHERE id % 10 IN (0, 1)`,
		`INSERT INTO user_blocks (blocker_id, blocked_id, created_at)
		 SELECT u.id, v.id, now() - (v.id || ' minutes')::interval FROM users u, users v
		 WHERE u.id <> v.id AND (u.id * 7 + v.id) % 25 = 0`,
		`INSERT INTO comments (article_id, seq, author_id, body)
		 SELECT a.id, g, a.author_id, 'a comment' FROM articles a, generate_series(1, 3) g WHERE a.id % 3 = 0`,
		// Replies (issue #32): every ninth article's first comment answered.
		`INSERT INTO comments (article_id, seq, author_id, body, parent_id, root_id, depth)
		 SELECT c.article_id, 3 + g, c.author_id, 'a reply', c.id, c.id, 2
		 FROM comments c, generate_series(1, 3) g WHERE c.seq = 1 AND c.article_id % 9 = 0`,
		// 30,000 uploads, 100 per user, each with three derived sizes.
		`INSERT INTO uploads (user_id, object_key, content_type, width, height, bytes, sha256, variant_keys)
		 SELECT u.id, md5(g::text) || md5(g::text) || '.png', 'image/png', 10, 10, 100, md5(g::text) || md5(g::text),
		        ARRAY[md5(g || 'a') || md5(g || 'a') || '.png', md5(g || 'c') || md5(g || 'c') || '.png', md5(g || 't') || md5(g || 't') || '.png']
		 FROM generate_series(1, 30000) g JOIN users u ON u.id = 1 + g % 300`,
		// The feed's probes of follows are index-only scans once its visibility map is set: without
		// it (autovacuum not yet come by) the planner may pick a bitmap scan instead.
		`VACUUM follows`,
		`ANALYZE`,
	} {
		if _, err := db.Pool.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// Every list reads its page off an index in the list's own order and stops after the page,
// whatever the plan cache does: pgx prepares statements, and a generic plan (planned once for any
// arguments) must keep the cursor as an index condition and need no sort of the matching rows. A
// sort or a filter over the matches would make the page cost grow with the data. The plans are
// those of a seeded database (30,000 articles by 300 authors over 20 tags, a tenth drafts and a
// tenth withdrawn, every user following and liking some, comments, notifications, histories and
// folders), analyzed, so the planner weighs real selectivities.
func TestListQueries_GenericPlansWalkAnIndexAndStopAtThePage(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	seedForPlans(t, db)
	q := dao.New()
	later := time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)
	// Each case: the query's SQL, EXECUTE arguments, and what its plan must and must not hold.
	cases := []struct {
		name    string
		sql     func(dao.DBTX)
		args    string
		want    []string
		notWant []string
	}{
		{
			name: "global",
			sql: func(c dao.DBTX) {
				_, _ = q.ArticleListPublished(t.Context(), c, dao.ArticleListPublishedParams{BeforeCreatedAt: later})
			},
			args:    "(now(), 1, 20, 0)",
			want:    []string{"Limit", "using articles_published_idx", "Index Cond: (ROW(created_at, id) < ROW($1, $2))"},
			notWant: []string{"Sort", "Seq Scan", "Filter"},
		},
		{
			// A sitemap page is a range of the publication order: the thousandth page is the same
			// range scan as the first, never an OFFSET walk (migration 00031).
			name: "sitemap page",
			sql: func(c dao.DBTX) {
				_, _ = q.SitemapPage(t.Context(), c, dao.SitemapPageParams{FromSeq: 1000, UntilSeq: 2000})
			},
			args:    "(14000, 15000)",
			want:    []string{"using articles_sitemap_idx", "Index Cond: ((search_seq >= $1) AND (search_seq < $2))"},
			notWant: []string{"Sort", "Seq Scan", "Filter", "Bitmap"},
		},
		{
			// The sitemap index counts no rows: the last place is one probe at the index's end.
			name:    "sitemap last place",
			sql:     func(c dao.DBTX) { _, _ = q.SitemapLastSeq(t.Context(), c) },
			want:    []string{"Limit", "Index Only Scan Backward using articles_sitemap_idx"},
			notWant: []string{"Sort", "Seq Scan", "Filter", "Bitmap"},
		},
		{
			name: "tag",
			sql: func(c dao.DBTX) {
				_, _ = q.ArticleListByTag(t.Context(), c, dao.ArticleListByTagParams{BeforeCreatedAt: later})
			},
			args:    "('go', now(), 1, 20, 0)",
			want:    []string{"Limit", "Index Only Scan Backward using article_tags_pkey", "Index Cond: ((tag = $1) AND (ROW(created_at, article_id) < ROW($2, $3)))", "articles_pkey"},
			notWant: []string{"Sort", "Seq Scan", "Filter"},
		},
		{
			name: "author",
			sql: func(c dao.DBTX) {
				_, _ = q.ArticleListPublishedByAuthor(t.Context(), c, dao.ArticleListPublishedByAuthorParams{BeforeCreatedAt: later})
			},
			args:    "(1, now(), 1, 20, 0)",
			want:    []string{"Limit", "using articles_author_status_idx", "Index Cond: ((author_id = $1) AND (status = 'published'::text) AND (ROW(created_at, id) < ROW($2, $3)))"},
			notWant: []string{"Sort", "Seq Scan", "Filter"},
		},
		{
			name: "favorited",
			sql: func(c dao.DBTX) {
				_, _ = q.ArticleListFavorited(t.Context(), c, dao.ArticleListFavoritedParams{BeforeCreatedAt: later})
			},
			args:    "(1, now(), 1, 20, 0)",
			want:    []string{"Limit", "Index Only Scan Backward using favorite_articles_pkey", "Index Cond: ((user_id = $1) AND (ROW(created_at, article_id) < ROW($2, $3)))", "articles_pkey"},
			notWant: []string{"Sort", "Seq Scan", "Filter"},
		},
		{
			// The feed sorts, but only what its probes bring: one head per followed author, then
			// depth rows of each of depth authors. Every probe is a bounded index-only read.
			name: "feed",
			sql: func(c dao.DBTX) {
				_, _ = q.ArticleListFeed(t.Context(), c, dao.ArticleListFeedParams{BeforeCreatedAt: later})
			},
			args: "(now(), 1, 1, 20, 0, 20)",
			want: []string{"follows_pkey", // an index scan or a bitmap scan of it, by the planner's estimate of the follows
				"Index Only Scan using articles_author_status_idx",
				"Index Cond: ((author_id = f.followee_id) AND (status = 'published'::text) AND (ROW(created_at, id) < ROW("},
			notWant: []string{"Seq Scan", "Filter"},
		},
		{
			name: "own, every status",
			sql: func(c dao.DBTX) {
				_, _ = q.ArticleListByAuthor(t.Context(), c, dao.ArticleListByAuthorParams{})
			},
			args:    "(1, now(), 1, 21, 0, 21)",
			want:    []string{"Limit", "Merge Append", "using articles_author_status_idx", "Index Cond: ((author_id = $1) AND (status = 'withdrawn'::text) AND (ROW(created_at, id) < ROW($2, $3)))"},
			notWant: []string{"Sort  ", "Seq Scan", "Filter"},
		},
		{
			name: "own, one status",
			sql: func(c dao.DBTX) {
				_, _ = q.ArticleListByAuthorStatus(t.Context(), c, dao.ArticleListByAuthorStatusParams{})
			},
			args:    "(1, 'draft', now(), 1, 0, 21)",
			want:    []string{"Limit", "using articles_author_status_idx", "Index Cond: ((author_id = $1) AND (status = $2) AND (ROW(created_at, id) < ROW($3, $4)))"},
			notWant: []string{"Sort", "Seq Scan", "Filter"},
		},
		{
			name: "comments",
			sql: func(c dao.DBTX) {
				_, _ = q.CommentListByArticle(t.Context(), c, dao.CommentListByArticleParams{})
			},
			args:    "(1, 0, 20)",
			want:    []string{"Limit", "using comments_article_seq_key", "Index Cond: ((article_id = $1) AND (seq > $2))"},
			notWant: []string{"Sort", "Seq Scan", "Filter"},
		},
		{
			// One comment's replies (?parent=ID, issue #32).
			name: "comment replies",
			sql: func(c dao.DBTX) {
				_, _ = q.CommentListReplies(t.Context(), c, dao.CommentListRepliesParams{})
			},
			args:    "(1, 0, 20)",
			want:    []string{"Limit", "using comments_replies_idx", "Index Cond: ((parent_id = $1) AND (id > $2))"},
			notWant: []string{"Sort", "Seq Scan", "Filter"},
		},
		{
			name: "collection items",
			sql: func(c dao.DBTX) {
				_, _ = q.CollectionItemList(t.Context(), c, dao.CollectionItemListParams{})
			},
			args:    "(1, now(), 1, 20)",
			want:    []string{"Limit", "using collection_items_recent_idx", "articles_pkey"},
			notWant: []string{"Sort", "Seq Scan"},
		},
		{
			name: "history",
			sql: func(c dao.DBTX) {
				_, _ = q.ReadHistoryList(t.Context(), c, dao.ReadHistoryListParams{})
			},
			args:    "(1, now(), 1, 20)",
			want:    []string{"Limit", "using reading_history_recent_idx"},
			notWant: []string{"Sort", "Seq Scan"},
		},
		{
			name: "notifications",
			sql: func(c dao.DBTX) {
				_, _ = q.NotificationList(t.Context(), c, dao.NotificationListParams{})
			},
			args:    "(1, now(), 1, 20)",
			want:    []string{"Limit", "using notifications_recent_idx"},
			notWant: []string{"Sort", "Seq Scan"},
		},
		{
			// Live streams' replay and catch-up: each woken user's notifications after an id, one
			// index range per stream (migration 00036).
			name: "notifications after an id",
			sql: func(c dao.DBTX) {
				_, _ = q.NotificationStreamAfterMany(t.Context(), c, dao.NotificationStreamAfterManyParams{})
			},
			args:    "('{1,2}', '{0,5}', 100)",
			want:    []string{"Limit", "using notifications_user_id_idx", "Index Cond: ((user_id = ($1)[g.i]) AND (id > ($2)[g.i]))"},
			notWant: []string{"Seq Scan on notifications"}, // users: the small seed's table is hashed whole
		},
		{
			name:    "a user's newest notification id",
			sql:     func(c dao.DBTX) { _, _ = q.NotificationStreamLatestID(t.Context(), c, 0) },
			args:    "(1)",
			want:    []string{"Limit", "Index Only Scan Backward using notifications_user_id_idx"},
			notWant: []string{"Sort", "Seq Scan"},
		},
		{
			// A search's windows: each probe of the GIN index names the words and the window.
			name: "search windows",
			sql: func(c dao.DBTX) {
				_, _ = q.ArticleSearchWindow10(t.Context(), c, dao.ArticleSearchWindow10Params{})
			},
			args:    "(29, 0, 30000, NULL, NULL, 200, 'english', 'dragon', 'x')",
			want:    []string{"Limit", "Bitmap Index Scan on articles_search_window_idx", "((search_seq >> 10))::integer = w.n"},
			notWant: []string{"Seq Scan on articles"},
		},
		{
			// Every match, for rare queries: off the GIN index, never a walk of the table.
			name: "search every match",
			sql: func(c dao.DBTX) {
				_, _ = q.ArticleSearchAll(t.Context(), c, dao.ArticleSearchAllParams{})
			},
			args:    "('english', 'dragon', 'x', 30001, NULL, NULL, 200)",
			want:    []string{"Bitmap Index Scan on articles_search_window_idx"},
			notWant: []string{"Seq Scan on articles", "Index Scan Backward"},
		},
		{
			// The search pool plans every statement once (PlanStatementsOnce): the snapshot
			// reads the counts by key (the seed's 20 tags fit a page, which the planner reads
			// whole; a long tag list has its key).
			name: "search snapshot",
			sql: func(c dao.DBTX) {
				_, _ = q.ArticleSearchSnapshot(t.Context(), c, dao.ArticleSearchSnapshotParams{})
			},
			args:    "('tag1', 1)",
			want:    []string{"Index Scan using author_article_counts_pkey", "(tag = $1)"},
			notWant: []string{"Seq Scan on author_article_counts", "Seq Scan on articles"},
		},
		{
			// A page's snippet texts, by id.
			name: "search texts",
			sql: func(c dao.DBTX) {
				_, _ = q.ArticleSearchTexts(t.Context(), c, nil)
			},
			args:    "('{1,2,3}')",
			want:    []string{"Index Scan using articles_pkey"},
			notWant: []string{"Seq Scan on articles"},
		},
		{
			// How common the query's words are: off the lexicon's indexes.
			name: "search word estimates",
			sql: func(c dao.DBTX) {
				_, _ = q.SearchWordsEstimate(t.Context(), c, dao.SearchWordsEstimateParams{})
			},
			args:    "('english', '{dragon,eggs}')",
			want:    []string{"on search_words"},
			notWant: []string{"Seq Scan on search_words"},
		},
		{
			// The lexicon pass reads the oldest changes off the log's key, then their articles'
			// changes off its article index: its cost follows the changes, never the articles.
			name: "lexicon pass",
			sql: func(c dao.DBTX) {
				_, _ = q.SearchLexiconChangesBatch(t.Context(), c, 500)
			},
			args:    "(500)",
			want:    []string{"using search_lexicon_changes_pkey", "using search_lexicon_changes_article_idx"},
			notWant: []string{"on articles", "Seq Scan"},
		},
		{
			// A suspension hides the author's published articles and its end restores them:
			// both walk the author's rows of one status, never the table.
			name: "suspension hides",
			sql: func(c dao.DBTX) {
				_, _ = q.ArticleHideByAuthor(t.Context(), c, 1)
			},
			args:    "(1)",
			want:    []string{"articles_author_status_idx", "(author_id = $1)", "(status = 'published'::text)"},
			notWant: []string{"Seq Scan"},
		},
		{
			name: "suspension ends",
			sql: func(c dao.DBTX) {
				_, _ = q.ArticleRestoreByAuthor(t.Context(), c, dao.ArticleRestoreByAuthorParams{})
			},
			args:    "('english', 1)",
			want:    []string{"articles_author_status_idx", "(author_id = $2)", "(status = 'hidden'::text)"},
			notWant: []string{"Seq Scan"},
		},
		{
			// The author's own count of hidden articles: an index-only count of those rows.
			name: "hidden articles of an author",
			sql: func(c dao.DBTX) {
				_, _ = q.ArticleCountHiddenByAuthor(t.Context(), c, 1)
			},
			args:    "(1)",
			want:    []string{"Index Only Scan using articles_author_status_idx"},
			notWant: []string{"Seq Scan"},
		},
		{
			// A viewer's blocked set (cached per viewer): the primary key's prefix, index only.
			name: "blocked set",
			sql: func(c dao.DBTX) {
				_, _ = q.UserBlockListBlockedIDs(t.Context(), c, 1)
			},
			args:    "(1)",
			want:    []string{"Index Only Scan using user_blocks_pkey", "Index Cond: (blocker_id = $1)"},
			notWant: []string{"Sort", "Seq Scan", "Filter"},
		},
		{
			// A follow's check: two index-only probes of both users' ids (the planner picks either
			// index: both hold the pair).
			name: "blocks between two users",
			sql: func(c dao.DBTX) {
				_, _ = q.UserBlockBetween(t.Context(), c, dao.UserBlockBetweenParams{A: 1, B: 2})
			},
			args:    "(1, 2)",
			want:    []string{"InitPlan 1", "InitPlan 2", "Index Only Scan using user_blocks_"},
			notWant: []string{"Seq Scan", "Filter", "Sort"},
		},
		{
			// GET /api/user/blocks: the recent index in its own order, stopping after the page. The
			// cursor's time is the index condition; the filter only skips blocks made at the
			// cursor's very microsecond with a smaller id.
			name: "block list",
			sql: func(c dao.DBTX) {
				_, _ = q.UserBlockListRecent(t.Context(), c, dao.UserBlockListRecentParams{BeforeCreatedAt: later})
			},
			args:    "(1, now(), 0, 20)",
			want:    []string{"Limit", "using user_blocks_recent_idx", "Index Cond: ((blocker_id = $1) AND (created_at <= $2))", "users_pkey"},
			notWant: []string{"Sort", "Seq Scan"},
		},
		{
			// An avatar or a body naming uploads: index probes per key, not a walk of the
			// user's uploads (up to their quota's worth).
			name: "uploads named by keys",
			sql: func(c dao.DBTX) {
				_, _ = q.UploadsOwnedByKeys(t.Context(), c, dao.UploadsOwnedByKeysParams{})
			},
			args:    "(1, ARRAY['x.png', 'y.png'])",
			want:    []string{"uploads_object_key_idx", "uploads_variant_keys_idx"},
			notWant: []string{"Seq Scan", "uploads_user_recent_idx"},
		},
		{
			name: "tag cloud",
			sql: func(c dao.DBTX) {
				_, _ = q.TagListPopular(t.Context(), c, 100)
			},
			args:    "(100)",
			want:    []string{"Limit", "using tag_article_counts_popular_idx"},
			notWant: []string{"Sort", "Seq Scan", "Filter"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			plan := genericPlan(t, db, captureSQL(t, tc.sql), tc.args)
			for _, w := range tc.want {
				if !strings.Contains(plan, w) {
					t.Errorf("the generic plan lacks %q:\n%s", w, plan)
				}
			}
			for _, nw := range tc.notWant {
				if strings.Contains(plan, nw) {
					t.Errorf("the generic plan holds %q:\n%s", nw, plan)
				}
			}
		})
	}
}

// captureSQL returns the SQL a generated query sends.
func captureSQL(t *testing.T, run func(dao.DBTX)) string {
	t.Helper()
	var captured string
	run(sqlCapture{sql: &captured})
	if captured == "" {
		t.Fatal("could not capture the query's SQL")
	}
	return captured
}

// genericPlan prepares sql on a connection of its own and explains its generic plan for args.
func genericPlan(t *testing.T, db *testenv.DB, sql, args string) string {
	t.Helper()
	return testenv.GenericPlan(t, db.Pool, sql, args)
}
