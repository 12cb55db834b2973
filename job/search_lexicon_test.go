package job_test

import (
	"context"
	"errors"
	"testing"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/job"
	"github.com/inkwell-dev/inkwell/repository/pg"
	"github.com/inkwell-dev/inkwell/repository/search"
)

type fakeFolder struct {
	calls int
	ran   bool
	err   error
}

func (f *fakeFolder) FoldNew(context.Context) (int, bool, error) {
	f.calls++
	return 3, f.ran, f.err
}

// The job reports what the pass folded, and a skip and a failure as such.
func TestLexiconJob_ReportsThePass(t *testing.T) {
	t.Parallel()
	f := &fakeFolder{ran: true}
	j := job.NewLexiconJob(f, testenv.Logger(t))
	if n, ran, err := j.RunOnce(context.Background()); n != 3 || !ran || err != nil || f.calls != 1 {
		t.Errorf("RunOnce = %d, %v, %v (%d calls)", n, ran, err, f.calls)
	}
	f.ran, f.err = false, errors.New("boom")
	if _, _, err := j.RunOnce(context.Background()); err == nil {
		t.Error("a failed pass: nil error")
	}
}

// Two instances' jobs ticking at once over one database: the articles are folded once.
func TestLexiconJob_TwoInstancesFoldOnce(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	ctx := context.Background()
	var author int64
	if err := db.Pool.QueryRow(ctx, `INSERT INTO users (email, email_canonical, username, password_hash)
		VALUES ('lexjob@example.com', 'lexjob@example.com', 'lexjob', 'x') RETURNING id`).Scan(&author); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Pool.Exec(ctx, `INSERT INTO articles (slug, author_id, title, description, body, status, created_at, published_at)
		SELECT 'lexjob-' || i, $1, 'dragon', '', 'wagon', 'published', now() - interval '1 hour', now() - interval '1 hour'
		FROM generate_series(1, 1200) i`, author); err != nil {
		t.Fatal(err)
	}
	jobs := []*job.LexiconJob{
		job.NewLexiconJob(search.NewLexicon(pg.SessionPool{Pool: db.Pool}, dao.New()), testenv.Logger(t)),
		job.NewLexiconJob(search.NewLexicon(pg.SessionPool{Pool: db.Pool}, dao.New()), testenv.Logger(t)),
	}
	type result struct {
		n   int
		err error
	}
	done := make(chan result, len(jobs))
	for _, j := range jobs {
		go func() {
			n, _, err := j.RunOnce(ctx)
			done <- result{n, err}
		}()
	}
	total := 0
	for range jobs {
		r := <-done
		if r.err != nil {
			t.Fatal(r.err)
		}
		total += r.n
	}
	// A job that skipped folds the rest at its next tick; here the other one did it all, or they
	// took turns: either way each article's change once.
	for {
		n, _, err := jobs[0].RunOnce(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		total += n
	}
	var ndoc int64
	if err := db.Pool.QueryRow(ctx, "SELECT ndoc FROM search_words WHERE word = 'dragon'").Scan(&ndoc); err != nil {
		t.Fatal(err)
	}
	if total != 1200 || ndoc != 1200 {
		t.Errorf("folded %d changes, dragon in %d articles; want 1200 each", total, ndoc)
	}
}
