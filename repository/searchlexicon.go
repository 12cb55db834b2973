package repository

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/dao"
)

// Lexicon words: what the lexicon pass keeps (queries/search_words.sql, SearchWordsFold) and what
// Suggest looks up, the same rule on both sides.
const (
	lexiconMinRunes = 3
	lexiconMaxRunes = 32
	// suggestMaxWords bounds the words one Suggest call looks at (a query has a handful).
	suggestMaxWords = 8
	// suggestTrigramCandidates is how many trigram neighbours of a word are weighed by edit distance.
	suggestTrigramCandidates = 10
)

// SearchLexicon is the lexicon of indexed words (search_words) behind "did you mean": Suggest
// corrects misspelt words, and the lexicon pass (Pass) folds newly published articles into it in
// the background, off the publish path.
type SearchLexicon struct {
	pool *pgxpool.Pool
	q    dao.Querier
}

// NewSearchLexicon returns the lexicon.
func NewSearchLexicon(pool *pgxpool.Pool, q dao.Querier) *SearchLexicon {
	return &SearchLexicon{pool: pool, q: q}
}

// Suggest maps each of words that is not in the lexicon to its closest lexicon word, when one is
// close enough; words in the lexicon, words too far from any, and words that are not lexicon
// words (too short or long, digits only, CJK) are left out. Keys are the words as given.
// Candidates are a word's nearest lexicon words by trigrams plus its edit-distance-1 variants
// that are lexicon words; the closest by Damerau-Levenshtein (optimal string alignment) distance
// wins, then the one in more articles, then the first in byte order. One statement.
func (l *SearchLexicon) Suggest(ctx context.Context, words []string) (map[string]string, error) {
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
		return nil, wrapf(err, "search lexicon candidates")
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
	if n < lexiconMinRunes || n > lexiconMaxRunes || !utf8.ValidString(w) {
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
		if n := len(v); n >= lexiconMinRunes && n <= lexiconMaxRunes {
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
	// SettledBefore: articles created at or after it are left for a later pass (and so is every
	// article after them in id order), because a transaction still open could yet commit an
	// article with a lower id. The job passes its clock minus a lag; the seed its start.
	SettledBefore time.Time
	Batch         int   // articles per statement (default 500)
	MaxBatches    int   // statements per pass; 0 is no bound (the seed)
	Until         int64 // the last id to fold; 0 is no bound
	Wait          bool  // wait for a pass running elsewhere instead of skipping
}

// LexiconPass is what one pass did.
type LexiconPass struct {
	Ran       bool  // false: another pass held the lock (and Wait was false)
	Batches   int   // statements run
	Ranges    int   // of them, range statements run side by side (FoldRange)
	Articles  int   // articles looked at (published or not)
	Words     int   // lexicon rows added or counted up
	Watermark int64 // the id every article up to which has been looked at
}

// Pass folds the articles after the watermark into the lexicon, in batches of opts.Batch articles
// (one statement each, its own transaction), until a batch comes back short — the table's end or
// an article not settled yet — or after opts.MaxBatches. It runs under a session advisory lock, so
// one pass at a time runs in the whole fleet; each batch also locks the state row, and moves the
// watermark in the statement that folds the batch, so no article is folded twice.
func (l *SearchLexicon) Pass(ctx context.Context, opts LexiconPassOptions) (LexiconPass, error) {
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
func (l *SearchLexicon) locked(ctx context.Context, wait bool, fn func(conn *pgxpool.Conn) error) (ran bool, err error) {
	conn, err := l.pool.Acquire(ctx)
	if err != nil {
		return false, wrapf(err, "lexicon pass: acquire")
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
		return false, wrapf(err, "lexicon pass: lock")
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
func (l *SearchLexicon) pass(ctx context.Context, conn *pgxpool.Conn, opts LexiconPassOptions) (LexiconPass, error) {
	if opts.Batch <= 0 {
		opts.Batch = 500
	}
	until := opts.Until
	if until <= 0 {
		until = math.MaxInt64
	}
	res := LexiconPass{Ran: true}
	for opts.MaxBatches == 0 || res.Batches < opts.MaxBatches {
		row, err := l.q.SearchWordsFold(ctx, conn, dao.SearchWordsFoldParams{
			Until: until, SettledBefore: opts.SettledBefore, Batch: int32(min(opts.Batch, 1<<30))})
		if err != nil {
			return res, wrapf(err, "lexicon pass: fold after %d", res.Watermark)
		}
		res.Batches++
		res.Articles += int(row.Articles)
		res.Words += int(row.Words)
		res.Watermark = row.ArticleWatermark
		if int(row.Articles) < opts.Batch {
			break
		}
	}
	return res, nil
}

// FoldRange folds the articles with ids in [lo, hi] (a seed's own range, all committed) into the
// lexicon with up to workers statements side by side, then moves the watermark past them, under
// the pass's lock (waiting for one running elsewhere). The articles before lo are folded first by
// an ordinary pass; if one of them is not settled yet (an article created after settledBefore),
// the range is left to ordinary passes too, which fold it one batch at a time. Articles another
// writer inserts inside the range while it is folded may be missed (a seed is for benchmark and
// demo databases); none is folded twice. A failed statement leaves its range out of the lexicon.
func (l *SearchLexicon) FoldRange(ctx context.Context, lo, hi int64, settledBefore time.Time, workers int) (LexiconPass, error) {
	return l.foldRange(ctx, lo, hi, settledBefore, func(before int64) (int, int, error) {
		return l.foldStatements(ctx, before, hi, workers)
	})
}

// foldStatements folds the articles with ids in (after, hi] from the database, up to workers
// statements side by side; it returns the statements run and the words added.
func (l *SearchLexicon) foldStatements(ctx context.Context, after, hi int64, workers int) (int, int, error) {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		errs  []error
		words int
		n     int
	)
	slots := make(chan struct{}, max(workers, 1))
	for from := after; from < hi; from += seedLexiconBatch {
		to := min(from+seedLexiconBatch, hi)
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			added, err := l.q.SearchWordsFoldRange(ctx, l.pool, dao.SearchWordsFoldRangeParams{After: from, Through: to})
			mu.Lock()
			defer mu.Unlock()
			words, n = words+int(added), n+1
			if err != nil {
				errs = append(errs, wrapf(err, "lexicon fold: (%d, %d]", from, to))
			}
		})
	}
	wg.Wait()
	return n, words, errors.Join(errs...)
}

// FoldCounted is FoldRange for a range whose words the caller counted as it wrote the articles
// (the seed: words[i] occurs in ndocs[i] of the range's published articles, as the lexicon pass
// would count them). When the watermark is not right before lo (an ordinary pass folded part of
// the range meanwhile), the counts would add that part twice: the range is folded from the
// database instead.
func (l *SearchLexicon) FoldCounted(ctx context.Context, lo, hi int64, settledBefore time.Time, words []string, ndocs []int64, workers int) (LexiconPass, error) {
	return l.foldRange(ctx, lo, hi, settledBefore, func(before int64) (int, int, error) {
		if before != lo-1 {
			return l.foldStatements(ctx, before, hi, workers)
		}
		added, err := l.q.SearchWordsAdd(ctx, l.pool, dao.SearchWordsAddParams{Words: words, Ndocs: ndocs})
		return 1, int(added), wrapf(err, "lexicon fold: add %d counted words", len(words))
	})
}

// foldRange is FoldRange's frame: under the lock, fold what comes before lo, then fold (the
// watermark, hi] with fold (given the watermark), move the watermark past hi, and fold what came
// after. fold returns the statements it ran and the words it added.
func (l *SearchLexicon) foldRange(ctx context.Context, lo, hi int64, settledBefore time.Time, fold func(before int64) (int, int, error)) (LexiconPass, error) {
	var res LexiconPass
	_, err := l.locked(ctx, true, func(conn *pgxpool.Conn) error {
		var err error
		if lo > 1 { // Until 0 would mean no bound: nothing comes before id 1 anyway
			if res, err = l.pass(ctx, conn, LexiconPassOptions{SettledBefore: settledBefore, Batch: seedLexiconBatch, Until: lo - 1}); err != nil {
				return err
			}
		} else if res.Watermark, err = l.q.SearchLexiconWatermark(ctx, conn); err != nil {
			return wrapf(err, "lexicon fold: read the watermark")
		}
		before := res.Watermark
		// Settled up to lo, unless an article in (watermark, lo) stopped the pass.
		next, err := l.q.SearchLexiconUnfoldedBefore(ctx, conn, dao.SearchLexiconUnfoldedBeforeParams{After: before, Before: lo})
		if err != nil {
			return wrapf(err, "lexicon fold: check the watermark")
		}
		if next != 0 || before >= hi {
			more, err := l.pass(ctx, conn, LexiconPassOptions{SettledBefore: settledBefore, Batch: seedLexiconBatch})
			res.add(more)
			return err
		}
		statements, words, ferr := fold(before)
		errs := []error{ferr}
		// The watermark passes the range even if a statement failed: its articles stay out of the
		// lexicon (fewer suggestions), where folding the range again would count the others twice.
		if _, err := l.q.SearchLexiconAdvance(context.WithoutCancel(ctx), conn, dao.SearchLexiconAdvanceParams{FromID: before, ToID: hi}); err != nil {
			errs = append(errs, wrapf(err, "lexicon fold: advance the watermark"))
		}
		if err := errors.Join(errs...); err != nil {
			return err
		}
		res.Batches += statements
		res.Ranges = statements
		res.Articles += int(hi - before)
		res.Words += words
		res.Watermark = hi
		more, err := l.pass(ctx, conn, LexiconPassOptions{SettledBefore: settledBefore, Batch: seedLexiconBatch})
		res.add(more)
		return err
	})
	res.Ran = err == nil
	return res, err
}

func (p *LexiconPass) add(q LexiconPass) {
	p.Batches += q.Batches
	p.Articles += q.Articles
	p.Words += q.Words
	if q.Watermark > p.Watermark {
		p.Watermark = q.Watermark
	}
}

// The background pass's bounds: at most 100 statements of 500 articles per tick. A range fold
// (the seed's) takes 5,000 per statement, as nothing waits on it.
const (
	lexiconJobBatch      = 500
	lexiconJobMaxBatches = 100
	seedLexiconBatch     = 5000
)

// FoldNew is the background job's pass (job.LexiconFolder): bounded, and skipped when another
// instance is running one.
func (l *SearchLexicon) FoldNew(ctx context.Context, settledBefore time.Time) (int, bool, error) {
	p, err := l.Pass(ctx, LexiconPassOptions{SettledBefore: settledBefore, Batch: lexiconJobBatch, MaxBatches: lexiconJobMaxBatches})
	return p.Articles, p.Ran, err
}
