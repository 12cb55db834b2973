package testenv

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The search lexicon's tests and the seeder's both hold the lexicon to a recount of the articles.

// LexiconWords is the "did you mean" lexicon as it is: every word of search_words and the
// articles it counts.
func LexiconWords(t testing.TB, pool *pgxpool.Pool) map[string]int64 {
	t.Helper()
	rows, err := pool.Query(context.Background(), "SELECT word, ndoc FROM search_words")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var w string
		var n int64
		if err := rows.Scan(&w, &n); err != nil {
			t.Fatal(err)
		}
		out[w] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// LexiconRecount is the lexicon folded afresh from every published article: what the lexicon must
// equal once every change is folded.
func LexiconRecount(t testing.TB, pool *pgxpool.Pool) map[string]int64 {
	t.Helper()
	rows, err := pool.Query(context.Background(), `
		SELECT w.word, w.ndoc
		FROM ts_stat($q$SELECT to_tsvector('simple', left(title, 1000) || ' ' || left(description, 4000) || ' ' || left(body, 100000))
		               FROM articles WHERE status = 'published'$q$) AS w (word, ndoc, nentry)
		WHERE w.word ~ '^[[:alnum:]]{3,32}$' AND w.word !~ '^[0-9]+$'
		  AND w.word !~ '[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]'`)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (struct {
		w string
		n int64
	}, error) {
		var v struct {
			w string
			n int64
		}
		return v, r.Scan(&v.w, &v.n)
	})
	if err != nil {
		t.Fatal(err)
	}
	m := make(map[string]int64, len(out))
	for _, v := range out {
		m[v.w] = v.n
	}
	return m
}
