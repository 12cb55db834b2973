package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

const maxPages = 1000

// pagesMain prints the URL of the n-th page of a keyset-paged list: it reads page 1 at -url and
// follows each answer's nextCursor, so a benchmark can then hammer a deep page the way a client
// reaches it (the API's cursor is opaque: only the server can make one).
func pagesMain(args []string) error {
	fs := flag.NewFlagSet("loadgen pages", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "Usage: loadgen pages -url URL -n N [-auth FILE]\n\nFollows nextCursor from the first page at URL to page N and prints page N's URL.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	raw := fs.String("url", "", "the list's first page, e.g. http://127.0.0.1:18080/api/articles?limit=20 (loopback only)")
	n := fs.Int("n", 50, fmt.Sprintf("the page to reach, 1..%d", maxPages))
	authFile := fs.String("auth", "", "FILE: sign the requests with the first token in FILE (e.g. for the feed)")
	timeout := fs.Duration("timeout", 30*time.Second, "per-request timeout")
	if err := fs.Parse(args); err != nil {
		return err
	}
	first, err := checkLoopbackURL(*raw)
	switch {
	case err != nil:
		return err
	case *n < 1 || *n > maxPages:
		return fmt.Errorf("-n must be 1..%d", maxPages)
	case fs.NArg() > 0:
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	token := ""
	if *authFile != "" {
		t := []target{{Name: "pages", Methods: []string{http.MethodGet}}}
		if err := attachReaders(t, []string{"pages=" + *authFile}); err != nil {
			return err
		}
		token = t[0].Token
	}
	page, err := walkPages(&http.Client{Timeout: *timeout}, first, *n, token)
	if err != nil {
		return err
	}
	fmt.Println(page)
	return nil
}

// walkPages returns the URL of page n: first with cursor set to page n-1's nextCursor.
func walkPages(client *http.Client, first *url.URL, n int, token string) (string, error) {
	page := first.String()
	for i := 1; i < n; i++ {
		cursor, err := nextCursor(client, page, token)
		if err != nil {
			return "", fmt.Errorf("page %d: %w", i, err)
		}
		if cursor == "" {
			return "", fmt.Errorf("page %d has no nextCursor: the list ends before page %d", i, n)
		}
		page = withCursor(first, cursor)
	}
	return page, nil
}

func nextCursor(client *http.Client, page, token string) (string, error) {
	req, err := http.NewRequest(http.MethodGet, page, nil)
	if err != nil {
		return "", err
	}
	if token != "" {
		req.Header.Set("Authorization", "Token "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: status %d", page, resp.StatusCode)
	}
	var body struct {
		Articles   []json.RawMessage `json:"articles"`
		NextCursor string            `json:"nextCursor"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return "", fmt.Errorf("GET %s: %w", page, err)
	}
	if body.Articles == nil {
		return "", errors.New("the answer has no articles array")
	}
	return body.NextCursor, nil
}

// withCursor is first with its cursor parameter (if any) replaced by cursor.
func withCursor(first *url.URL, cursor string) string {
	u := *first
	q := u.Query()
	q.Set("cursor", cursor)
	u.RawQuery = q.Encode()
	return u.String()
}
