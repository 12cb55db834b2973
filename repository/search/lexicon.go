package search

import (
	"context"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/repository/pg"
)

// Lexicon words: what the lexicon pass keeps (queries/search_words.sql, SearchWordsApplyChanges) and what
// Suggest looks up, the same rule on both sides.
const (
	LexiconMinRunes = 3
	LexiconMaxRunes = 32
	// suggestMaxWords bounds the words one Suggest call looks at (a query has a handful).
	suggestMaxWords = 8
	// suggestTrigramCandidates is how many trigram neighbours of a word are weighed by edit distance.
	suggestTrigramCandidates = 10
)

// Lexicon is the lexicon of indexed words (search_words) behind "did you mean": Suggest
// corrects misspelt words, and the lexicon pass (Pass) folds the changes of published articles
// (published, edited, withdrawn, deleted) into it in the background, off the write path.
type Lexicon struct {
	pool *pgxpool.Pool
	q    dao.Querier
}

// NewLexicon returns the lexicon. Its pool is a session pool: a pass holds a session-level
// advisory lock.
func NewLexicon(pool pg.SessionPool, q dao.Querier) *Lexicon {
	return &Lexicon{pool: pool.Pool, q: q}
}

// Suggest maps each of words that is not in the lexicon to its closest lexicon word, when one is
// close enough; words in the lexicon, words too far from any, and words that are not lexicon
// words (too short or long, digits only, CJK) are left out. Keys are the words as given.
// Candidates are a word's nearest lexicon words by trigrams plus its edit-distance-1 variants
// that are lexicon words; the closest by Damerau-Levenshtein (optimal string alignment) distance
// wins, then the one in more articles, then the first in byte order. One statement.
func (l *Lexicon) Suggest(ctx context.Context, words []string) (map[string]string, error) {
	out := map[string]string{}
	given := map[string][]string{} // lexicon form → the words given that have it
	var asked, probes []string
	for _, w := range words {
		n, ok := lexiconForm(w)
		if !ok {
			continue
		}
		if _, seen := given[n]; !seen {
			if len(asked) == suggestMaxWords {
				continue
			}
			asked = append(asked, n)
			probes = append(probes, n)
			probes = appendVariants(probes, n)
		}
		given[n] = append(given[n], w)
	}
	if len(asked) == 0 {
		return out, nil
	}
	rows, err := l.q.SearchWordsCandidates(ctx, l.pool, dao.SearchWordsCandidatesParams{
		Words: asked, K: suggestTrigramCandidates, Probes: probes})
	if err != nil {
		return nil, pg.Wrapf(err, "search lexicon candidates")
	}
	known := map[string]int64{}                         // probes that are lexicon words
	near := map[string][]dao.SearchWordsCandidatesRow{} // trigram neighbours per asked word
	for _, r := range rows {
		if r.Query == "" {
			known[r.Word] = r.Ndoc
		} else {
			near[r.Query] = append(near[r.Query], r)
		}
	}
	for _, w := range asked {
		if _, ok := known[w]; ok {
			continue
		}
		best, bestDist, bestNdoc := "", maxEdits(w)+1, int64(-1)
		consider := func(c string, ndoc int64) {
			d := editDistance(w, c)
			if d < bestDist || (d == bestDist && (ndoc > bestNdoc || (ndoc == bestNdoc && c < best))) {
				best, bestDist, bestNdoc = c, d, ndoc
			}
		}
		for _, r := range near[w] {
			consider(r.Word, r.Ndoc)
		}
		for _, v := range appendVariants(nil, w) {
			if ndoc, ok := known[v]; ok {
				consider(v, ndoc)
			}
		}
		if best != "" {
			for _, g := range given[w] {
				out[g] = best
			}
		}
	}
	return out, nil
}

// lexiconForm is w as the lexicon stores it (lower-cased), and whether it is a lexicon word at all:
// 3–32 letters or digits, not digits only, no CJK (CJK text is searched by bigrams, not words).
func lexiconForm(w string) (string, bool) {
	w = strings.ToLower(strings.TrimSpace(w))
	n := utf8.RuneCountInString(w)
	if n < LexiconMinRunes || n > LexiconMaxRunes || !utf8.ValidString(w) {
		return "", false
	}
	letter := false
	for _, r := range w {
		switch {
		case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul):
			return "", false
		case unicode.IsLetter(r):
			letter = true
		case !unicode.IsDigit(r):
			return "", false
		}
	}
	return w, letter
}

// maxEdits is how far a suggestion may be from a word of its length: one edit for short words,
// where two would reach too many unrelated words, up to three for long ones.
func maxEdits(w string) int {
	switch n := utf8.RuneCountInString(w); {
	case n <= 4:
		return 1
	case n <= 8:
		return 2
	default:
		return 3
	}
}

// appendVariants appends the lexicon-length words one edit from w (a deletion, a transposition of
// neighbours, a substitution or an insertion of a letter a–z or one of w's own): a word of n
// letters has about 54n+26 of them, probed on the lexicon's primary key.
func appendVariants(dst []string, w string) []string {
	rs := []rune(w)
	alphabet := []rune("abcdefghijklmnopqrstuvwxyz")
	for _, r := range rs {
		if !slices.Contains(alphabet, r) {
			alphabet = append(alphabet, r)
		}
	}
	buf := make([]rune, 0, len(rs)+1)
	add := func(v []rune) {
		if n := len(v); n >= LexiconMinRunes && n <= LexiconMaxRunes {
			dst = append(dst, string(v))
		}
	}
	for i := range rs {
		add(append(append(buf[:0], rs[:i]...), rs[i+1:]...)) // deletion
		if i+1 < len(rs) && rs[i] != rs[i+1] {
			v := append(buf[:0], rs...)
			v[i], v[i+1] = v[i+1], v[i]
			add(v) // transposition
		}
		for _, a := range alphabet {
			if a != rs[i] {
				v := append(buf[:0], rs...)
				v[i] = a
				add(v) // substitution
			}
		}
	}
	for i := 0; i <= len(rs); i++ {
		for _, a := range alphabet {
			v := append(append(append(buf[:0], rs[:i]...), a), rs[i:]...)
			add(v) // insertion
		}
	}
	return dst
}

// editDistance is the optimal-string-alignment distance between a and b, in runes: insertions,
// deletions, substitutions and transpositions of neighbours count one each (dargon → dragon: 1).
func editDistance(a, b string) int {
	s, t := []rune(a), []rune(b)
	prev2 := make([]int, len(t)+1)
	prev := make([]int, len(t)+1)
	cur := make([]int, len(t)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(s); i++ {
		cur[0] = i
		for j := 1; j <= len(t); j++ {
			cost := 1
			if s[i-1] == t[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && s[i-1] == t[j-2] && s[i-2] == t[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(t)]
}

// LexiconPassOptions tunes one lexicon pass.
type LexiconPassOptions struct {
	Batch      int  // changes per transaction (default 500; an article's every change comes along)
	MaxBatches int  // transactions per pass; 0 is no bound
	Wait       bool // wait for a pass running elsewhere instead of skipping
}

// LexiconPass is what one pass did.
type LexiconPass struct {
	Ran     bool // false: another pass held the lock (and Wait was false)
	Batches int  // transactions run
	Changes int  // change rows folded and deleted
	Added   int  // articles whose text was counted
	Removed int  // texts subtracted
	Words   int  // lexicon rows added, counted up or down
}

// Pass folds the lexicon's change log (search_lexicon_changes, written by triggers on articles in
// the transaction of every change; migration 00026) into the lexicon, oldest changes first, in
// batches of opts.Batch changes, each one transaction, until the log is empty or after
// opts.MaxBatches. Its work follows the changes, not the table: with nothing to fold it is one
// index probe. It runs under a session advisory lock, so one pass at a time runs in the whole
// fleet, and a batch deletes the changes it folded in its own transaction, so none is folded twice.
func (l *Lexicon) Pass(ctx context.Context, opts LexiconPassOptions) (LexiconPass, error) {
	var res LexiconPass
	ran, err := l.locked(ctx, opts.Wait, func(conn *pgxpool.Conn) error {
		var err error
		res, err = l.pass(ctx, conn, opts)
		return err
	})
	res.Ran = ran
	return res, err
}

// locked runs fn holding the lexicon pass's advisory lock on a connection of its own; ran is false
// when the lock was taken elsewhere and wait is false.
func (l *Lexicon) locked(ctx context.Context, wait bool, fn func(conn *pgxpool.Conn) error) (ran bool, err error) {
	conn, err := l.pool.Acquire(ctx)
	if err != nil {
		return false, pg.Wrapf(err, "lexicon pass: acquire")
	}
	if wait {
		err = l.q.SearchLexiconLock(ctx, conn)
	} else {
		var ok bool
		if ok, err = l.q.SearchLexiconTryLock(ctx, conn); err == nil && !ok {
			conn.Release()
			return false, nil
		}
	}
	if err != nil {
		conn.Release()
		return false, pg.Wrapf(err, "lexicon pass: lock")
	}
	defer func() {
		// A connection that may still hold the lock must not go back to the pool.
		if held, err := l.q.SearchLexiconUnlock(context.WithoutCancel(ctx), conn); err != nil || !held {
			_ = conn.Conn().Close(context.WithoutCancel(ctx))
		}
		conn.Release()
	}()
	return true, fn(conn)
}

// pass runs the batches of one pass; the caller holds the lock.
func (l *Lexicon) pass(ctx context.Context, conn *pgxpool.Conn, opts LexiconPassOptions) (LexiconPass, error) {
	if opts.Batch <= 0 {
		opts.Batch = lexiconJobBatch
	}
	res := LexiconPass{Ran: true}
	for opts.MaxBatches == 0 || res.Batches < opts.MaxBatches {
		n, err := l.batch(ctx, conn, min(opts.Batch, 1<<30), &res)
		if err != nil {
			return res, err
		}
		if n < opts.Batch {
			break
		}
	}
	return res, nil
}

// batch folds the articles of the oldest lim changes, every change of theirs, in one transaction;
// it returns how many change rows it read. REPEATABLE READ: the articles' texts are read in the
// snapshot the changes were read in, so an addition with no later change visible reads the very
// text it added (a change committed after the snapshot brings its own rows, folded next time).
func (l *Lexicon) batch(ctx context.Context, conn *pgxpool.Conn, lim int, res *LexiconPass) (int, error) {
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead})
	if err != nil {
		return 0, pg.Wrapf(err, "lexicon pass: begin")
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	rows, err := l.q.SearchLexiconChangesBatch(ctx, tx, int32(lim))
	if err != nil {
		return 0, pg.Wrapf(err, "lexicon pass: read changes")
	}
	if len(rows) == 0 {
		return 0, nil
	}
	added, removed, ids := settleLexiconChanges(rows)
	applied, err := l.q.SearchWordsApplyChanges(ctx, tx, dao.SearchWordsApplyChangesParams{Added: added, Removed: removed})
	if err != nil {
		return 0, pg.Wrapf(err, "lexicon pass: fold %d changes", len(ids))
	}
	if len(applied.Emptied) > 0 {
		if err := l.q.SearchWordsDropEmptied(ctx, tx, applied.Emptied); err != nil {
			return 0, pg.Wrapf(err, "lexicon pass: drop %d words", len(applied.Emptied))
		}
	}
	if err := l.q.SearchLexiconChangesDelete(ctx, tx, ids); err != nil {
		return 0, pg.Wrapf(err, "lexicon pass: delete %d changes", len(ids))
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, pg.Wrapf(err, "lexicon pass: commit")
	}
	res.Batches++
	res.Changes += len(ids)
	res.Added += len(added)
	res.Removed += len(removed)
	res.Words += int(applied.Words)
	return len(rows), nil
}

// settleLexiconChanges pairs each article's changes (rows in article, then log order): an
// addition is cancelled by the removal that follows it, whose text is the one the addition would
// have counted. What is left of an article is at most a removal first (a text an earlier pass
// counted: subtract it) and an addition last (count the article's text as it is). It returns the
// articles to count, the removal rows to subtract, and every row it settled.
func settleLexiconChanges(rows []dao.SearchLexiconChangesBatchRow) (added, removed, ids []int64) {
	pending := int64(0) // an article whose last addition nothing has removed yet
	for i, r := range rows {
		if i > 0 && r.ArticleID != rows[i-1].ArticleID && pending != 0 {
			added, pending = append(added, pending), 0
		}
		ids = append(ids, r.ID)
		switch {
		case !r.Removed:
			pending = r.ArticleID // a second addition in a row supersedes the first
		case pending != 0:
			pending = 0 // the text this removal takes away was never counted
		default:
			removed = append(removed, r.ID)
		}
	}
	if pending != 0 {
		added = append(added, pending)
	}
	return added, removed, ids
}

// FoldCounted adds words the caller counted as it wrote the articles (the seed: words[i] occurs
// in ndocs[i] of the published articles it inserted with inkwell.lexicon_insert_counted on, so
// the triggers logged no change for them), under the pass's lock, waiting for a pass running
// elsewhere.
func (l *Lexicon) FoldCounted(ctx context.Context, words []string, ndocs []int64) (LexiconPass, error) {
	var res LexiconPass
	_, err := l.locked(ctx, true, func(conn *pgxpool.Conn) error {
		added, err := l.q.SearchWordsAdd(ctx, conn, dao.SearchWordsAddParams{Words: words, Ndocs: ndocs})
		res.Batches, res.Words = 1, int(added)
		return pg.Wrapf(err, "lexicon fold: add %d counted words", len(words))
	})
	res.Ran = err == nil
	return res, err
}

// The background pass's bounds: at most 100 transactions of 500 changes per tick.
const (
	lexiconJobBatch      = 500
	lexiconJobMaxBatches = 100
)

// FoldNew is the background job's pass (job.LexiconFolder): bounded, and skipped when another
// instance is running one.
func (l *Lexicon) FoldNew(ctx context.Context) (int, bool, error) {
	p, err := l.Pass(ctx, LexiconPassOptions{Batch: lexiconJobBatch, MaxBatches: lexiconJobMaxBatches})
	return p.Changes, p.Ran, err
}
