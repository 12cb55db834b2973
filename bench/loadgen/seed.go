package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// seedTags is the tag pool; articles draw 2 to 4 of the first -tags of them.
var seedTags = []string{"go", "redis", "postgres", "gin", "caching", "testing", "devops", "design", "api", "performance"}

var seedWords = strings.Fields(`lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod
tempor incididunt ut labore et dolore magna aliqua enim ad minim veniam quis nostrud exercitation
ullamco laboris nisi aliquip ex ea commodo consequat duis aute irure in reprehenderit voluptate velit
esse cillum fugiat nulla pariatur excepteur sint occaecat cupidatat non proident sunt culpa qui
officia deserunt mollit anim id est laborum`)

type seedConfig struct {
	base                                 *url.URL
	users, articles, tags, follows, favs int
	workers                              int
	pick                                 int
	writers                              int    // extra users who do nothing but sign write loads
	tokenFile                            string // where the writers' tokens go
	password                             string
	client                               *http.Client
	requests                             atomic.Int64
	seedRand                             uint64
}

func seedMain(args []string) error {
	fs := flag.NewFlagSet("loadgen seed", flag.ContinueOnError)
	base := fs.String("base", "http://127.0.0.1:18080", "inkwell base URL (loopback only)")
	users := fs.Int("users", 20, "users to register")
	articles := fs.Int("articles", 200, "articles to create, spread round-robin over the users")
	tags := fs.Int("tags", 8, fmt.Sprintf("distinct tags in use (2..%d)", len(seedTags)))
	follows := fs.Int("follows", 3, "users each user follows")
	favs := fs.Int("favorites", 10, "articles each user favorites")
	workers := fs.Int("workers", 4, "concurrent requests while seeding (1..16)")
	pick := fs.Int("pick", 100, "index of the article whose slug is printed on stdout")
	seed := fs.Uint64("seed", 1, "random seed (the data set is deterministic for a given seed)")
	writers := fs.Int("writers", 0, fmt.Sprintf("extra users to register for write loads, one per 'loadgen run' worker (0..%d); needs -tokens", maxTokens))
	tokenFile := fs.String("tokens", "", "write the -writers users' access tokens to this file, one per line (for 'loadgen run -tokens')")
	if err := fs.Parse(args); err != nil {
		return err
	}
	u, err := checkLoopbackURL(*base)
	if err != nil {
		return err
	}
	switch {
	case *users < 1 || *users > 1000:
		return errors.New("-users must be 1..1000")
	case *articles < 1 || *articles > 10000:
		return errors.New("-articles must be 1..10000")
	case *tags < 2 || *tags > len(seedTags):
		return fmt.Errorf("-tags must be 2..%d", len(seedTags))
	case *workers < 1 || *workers > 16:
		return errors.New("-workers must be 1..16")
	case *pick < 0 || *pick >= *articles:
		return errors.New("-pick must name an article: 0..articles-1")
	case *follows < 0 || *follows >= *users:
		return errors.New("-follows must be 0..users-1")
	case *favs < 0 || *favs > *articles:
		return errors.New("-favorites must be 0..articles")
	case *writers < 0 || *writers > maxTokens:
		return fmt.Errorf("-writers must be 0..%d", maxTokens)
	case (*writers > 0) != (*tokenFile != ""):
		return errors.New("-writers and -tokens go together: the writers' tokens must go somewhere")
	}
	s := &seedConfig{
		base: u, users: *users, articles: *articles, tags: *tags, follows: *follows, favs: *favs,
		workers: *workers, pick: *pick, writers: *writers, tokenFile: *tokenFile, password: "bench-password-1", seedRand: *seed,
		client: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: *workers}},
	}
	return s.run()
}

func (s *seedConfig) run() error {
	start := time.Now()
	run := time.Now().UnixNano() % 1_000_000 // usernames stay unique if one database is seeded twice

	// 1. Users (Argon2id makes registration the slow step; the server bounds hashing itself).
	tokens := make([]string, s.users)
	names := make([]string, s.users)
	err := parallel(s.users, s.workers, func(i int) error {
		names[i] = fmt.Sprintf("bench%d_%03d", run, i)
		var err error
		tokens[i], err = s.register(names[i])
		return err
	})
	if err != nil {
		return fmt.Errorf("register users: %w", err)
	}

	// 2. Articles, round-robin over the authors, each with 2..4 tags and a 250..450-byte body.
	slugs := make([]string, s.articles)
	err = parallel(s.articles, s.workers, func(i int) error {
		r := rand.New(rand.NewPCG(s.seedRand, uint64(i)))
		ntags := min(2+r.IntN(3), s.tags) // -tags may be as few as 2
		perm := r.Perm(s.tags)[:ntags]
		tags := make([]string, ntags)
		for j, k := range perm {
			tags[j] = seedTags[k]
		}
		var out struct {
			Article struct{ Slug string } `json:"article"`
		}
		err := s.call(http.MethodPost, "/api/articles", tokens[i%s.users], map[string]any{"article": map[string]any{
			"title":       fmt.Sprintf("Bench article %03d %s", i, words(r, 3)),
			"description": words(r, 10),
			"body":        text(r, 250+r.IntN(200)),
			"tagList":     tags,
		}}, http.StatusCreated, &out)
		slugs[i] = out.Article.Slug
		return err
	})
	if err != nil {
		return fmt.Errorf("create articles: %w", err)
	}

	// 3. Follows (each user follows the next -follows users) and favorites (random articles).
	type action struct{ path, token string }
	var acts []action
	for i := range s.users {
		for k := 1; k <= s.follows; k++ {
			acts = append(acts, action{"/api/profiles/" + names[(i+k)%s.users] + "/follow", tokens[i]})
		}
		r := rand.New(rand.NewPCG(s.seedRand, uint64(1_000_000+i)))
		for _, a := range r.Perm(s.articles)[:s.favs] {
			acts = append(acts, action{"/api/articles/" + url.PathEscape(slugs[a]) + "/favorite", tokens[i]})
		}
	}
	err = parallel(len(acts), s.workers, func(i int) error {
		return s.call(http.MethodPost, acts[i].path, acts[i].token, nil, http.StatusOK, nil)
	})
	if err != nil {
		return fmt.Errorf("follows and favorites: %w", err)
	}

	// 4. Writers: users with nothing of their own, one per load-generator worker, whose tokens sign
	//    the write loads (each worker its own user, so a like and an unlike always change state).
	if s.writers > 0 {
		wtokens := make([]string, s.writers)
		err = parallel(s.writers, s.workers, func(i int) error {
			var err error
			wtokens[i], err = s.register(fmt.Sprintf("bench%d_w%03d", run, i))
			return err
		})
		if err != nil {
			return fmt.Errorf("register writers: %w", err)
		}
		if err := os.WriteFile(s.tokenFile, []byte(strings.Join(wtokens, "\n")+"\n"), 0o600); err != nil {
			return err
		}
	}

	fmt.Fprintf(os.Stderr, "seed: %d users, %d articles, %d tags, %d follows, %d favorites, %d writers: %d requests in %s\n",
		s.users, s.articles, s.tags, s.users*s.follows, s.users*s.favs, s.writers, s.requests.Load(),
		time.Since(start).Round(10*time.Millisecond))
	fmt.Println(slugs[s.pick])
	return nil
}

// register signs a user up and returns its access token.
func (s *seedConfig) register(name string) (string, error) {
	var out struct {
		User struct{ Token string } `json:"user"`
	}
	err := s.call(http.MethodPost, "/api/users", "", map[string]any{"user": map[string]string{
		"username": name, "email": name + "@bench.example", "password": s.password,
	}}, http.StatusCreated, &out)
	if err == nil && out.User.Token == "" {
		err = fmt.Errorf("registering %s answered no token", name)
	}
	return out.User.Token, err
}

// call sends one JSON request and decodes the response into out (when not nil).
func (s *seedConfig) call(method, path, token string, body any, want int, out any) error {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, s.base.JoinPath(path).String(), rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Token "+token)
	}
	s.requests.Add(1)
	resp, err := s.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != want {
		return fmt.Errorf("%s %s: status %d, want %d: %s", method, path, resp.StatusCode, want, bytes.TrimSpace(raw))
	}
	if out != nil {
		return json.Unmarshal(raw, out)
	}
	return nil
}

// parallel calls fn(0..n-1) on up to workers goroutines and returns the first error.
func parallel(n, workers int, fn func(i int) error) error {
	var (
		next     atomic.Int64
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	for range min(workers, n) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := fn(i); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					next.Store(int64(n)) // stop handing out work
					return
				}
			}
		})
	}
	wg.Wait()
	return firstErr
}

func words(r *rand.Rand, n int) string {
	w := make([]string, n)
	for i := range w {
		w[i] = seedWords[r.IntN(len(seedWords))]
	}
	return strings.Join(w, " ")
}

// text returns sentences of random words, about n bytes long.
func text(r *rand.Rand, n int) string {
	var b strings.Builder
	for b.Len() < n {
		s := words(r, 6+r.IntN(8))
		b.WriteString(strings.ToUpper(s[:1]) + s[1:] + ". ")
	}
	return strings.TrimSpace(b.String())
}
