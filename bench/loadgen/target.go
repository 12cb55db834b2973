package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
)

// A target is one row of a run: a URL and the methods each worker cycles through. A read target
// (GET only) is sent anonymously; a write target (any other method) is sent by each worker as its
// own user, with the token on the worker's line of -tokens.

const (
	maxCycle     = 4       // methods in one target's cycle
	maxBodyBytes = 1 << 16 // request body of a target
	maxTokens    = maxConcurrency
)

var (
	targetName  = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,32}$`)
	allowedVerb = map[string]bool{
		http.MethodGet: true, http.MethodPost: true, http.MethodPut: true, http.MethodPatch: true, http.MethodDelete: true,
	}
)

type target struct {
	Name    string
	URL     string
	Methods []string // each worker sends Methods[0], Methods[1], ... and starts over
	Body    []byte   // sent with POST, PUT and PATCH (as application/json)
	Path    string   // methods and path shown in the table
	Token   string   // a read target's one signed-in reader (-auth); write targets use -tokens
	Signed  bool     // a read sent signed in (-signed): each worker as its own user, as writes are
	// URLs (-urls NAME=FILE) replace URL for a read: worker i sends URLs[i], URLs[i+1], … in turn,
	// so a row can mix many queries (the search rows); Path shows URL, the first of them.
	URLs []string
}

// signs reports whether the target's workers send a token: writes always, reads when -signed.
func (t target) signs() bool { return t.Signed || t.writes() }

// markSigned sets Signed on the targets named in list (comma-separated).
func markSigned(targets []target, list string) error {
	if list == "" {
		return nil
	}
	for _, name := range strings.Split(list, ",") {
		i := slices.IndexFunc(targets, func(t target) bool { return t.Name == name })
		if i < 0 {
			return fmt.Errorf("-signed: no target named %q", name)
		}
		targets[i].Signed = true
	}
	return nil
}

// writes reports whether the target changes state, so its workers need users.
func (t target) writes() bool {
	for _, m := range t.Methods {
		if m != http.MethodGet {
			return true
		}
	}
	return false
}

func hasBody(method string) bool {
	return method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch
}

// parseTarget reads NAME=URL (GET) or NAME=METHOD[+METHOD...] URL, e.g.
// "likes=POST+DELETE http://127.0.0.1:18080/api/articles/x/favorite".
func parseTarget(arg string) (target, error) {
	name, spec, ok := strings.Cut(arg, "=")
	if !ok || name == "" || spec == "" {
		return target{}, fmt.Errorf("target %q: want NAME=URL or NAME=METHOD[+METHOD...] URL", arg)
	}
	if !targetName.MatchString(name) {
		return target{}, fmt.Errorf("target %q: NAME must be 1-32 letters, digits, '_', '.' or '-'", arg)
	}
	methods := []string{http.MethodGet}
	raw := spec
	if verbs, rest, ok := strings.Cut(spec, " "); ok {
		raw = strings.TrimSpace(rest)
		methods = strings.Split(verbs, "+")
		if len(methods) > maxCycle {
			return target{}, fmt.Errorf("target %q: at most %d methods in a cycle", arg, maxCycle)
		}
		for _, m := range methods {
			if !allowedVerb[m] {
				return target{}, fmt.Errorf("target %q: method %q: want GET, POST, PUT, PATCH or DELETE (upper case), joined by '+'", arg, m)
			}
		}
	}
	if strings.ContainsAny(raw, " \t\r\n") {
		return target{}, fmt.Errorf("target %q: want one URL after the methods (spaces in it must be escaped as %%20)", arg)
	}
	u, err := checkLoopbackURL(raw)
	if err != nil {
		return target{}, fmt.Errorf("target %s: %w", name, err)
	}
	return target{Name: name, URL: u.String(), Methods: methods, Path: strings.Join(methods, "+") + " " + u.RequestURI()}, nil
}

// parseTargets parses every target argument and attaches the -body values (NAME=JSON) to them.
func parseTargets(args, bodies []string) ([]target, error) {
	var targets []target
	index := map[string]int{}
	for _, a := range args {
		t, err := parseTarget(a)
		if err != nil {
			return nil, err
		}
		if _, dup := index[t.Name]; dup {
			return nil, fmt.Errorf("target %q is named twice", t.Name)
		}
		index[t.Name] = len(targets)
		targets = append(targets, t)
	}
	for _, b := range bodies {
		name, body, ok := strings.Cut(b, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("-body %q: want NAME=JSON", b)
		}
		i, found := index[name]
		switch {
		case !found:
			return nil, fmt.Errorf("-body %q: no target named %q", b, name)
		case targets[i].Body != nil:
			return nil, fmt.Errorf("-body: target %q has two bodies", name)
		case len(body) > maxBodyBytes:
			return nil, fmt.Errorf("-body for %q: longer than %d bytes", name, maxBodyBytes)
		case !json.Valid([]byte(body)):
			return nil, fmt.Errorf("-body for %q: not valid JSON: %s", name, body)
		}
		var sends bool
		for _, m := range targets[i].Methods {
			sends = sends || hasBody(m)
		}
		if !sends {
			return nil, fmt.Errorf("-body for %q: the target sends no POST, PUT or PATCH to carry it", name)
		}
		targets[i].Body = []byte(body)
	}
	return targets, nil
}

// attachReaders gives read targets the token of -auth NAME=FILE (the file's first token): every
// worker of such a target reads as that one user, e.g. the feed of a reader following many authors.
func attachReaders(targets []target, auths []string) error {
	for _, a := range auths {
		name, file, ok := strings.Cut(a, "=")
		if !ok || name == "" || file == "" {
			return fmt.Errorf("-auth %q: want NAME=FILE", a)
		}
		i := slices.IndexFunc(targets, func(t target) bool { return t.Name == name })
		switch {
		case i < 0:
			return fmt.Errorf("-auth %q: no target named %q", a, name)
		case targets[i].writes():
			return fmt.Errorf("-auth %q: %s is a write target (its workers sign with -tokens)", a, name)
		case targets[i].Token != "":
			return fmt.Errorf("-auth: target %q has two readers", name)
		}
		f, err := os.Open(file)
		if err != nil {
			return fmt.Errorf("-auth: %w", err)
		}
		tokens, err := readTokens(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("-auth %s: %w", file, err)
		}
		if len(tokens) == 0 {
			return fmt.Errorf("-auth %s: no token in the file", file)
		}
		targets[i].Token = tokens[0]
	}
	return nil
}

// readTokens reads one access token per line (blank lines and lines starting with '#' skipped).
// Worker i of a write target signs its requests with token i, so tokens must be distinct: two
// workers sharing a user would undo each other's likes.
func readTokens(r io.Reader) ([]string, error) {
	var tokens []string
	seen := map[string]int{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 16<<10)
	for line := 1; sc.Scan(); line++ {
		tok := strings.TrimSpace(sc.Text())
		if tok == "" || strings.HasPrefix(tok, "#") {
			continue
		}
		if strings.ContainsAny(tok, " \t") {
			return nil, fmt.Errorf("line %d: a token has no spaces", line)
		}
		if prev, dup := seen[tok]; dup {
			return nil, fmt.Errorf("lines %d and %d hold the same token (every worker needs its own user)", prev, line)
		}
		if len(tokens) == maxTokens {
			return nil, fmt.Errorf("more than %d tokens", maxTokens)
		}
		seen[tok] = line
		tokens = append(tokens, tok)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return tokens, nil
}

// workerTokens checks that every write target can give each of c workers its own user.
func workerTokens(targets []target, tokenFile string, c int) ([]string, error) {
	var writers []string
	for _, t := range targets {
		if t.signs() {
			writers = append(writers, t.Name)
		}
	}
	if len(writers) == 0 {
		return nil, nil
	}
	if tokenFile == "" {
		return nil, fmt.Errorf("targets %s are sent signed in: give -tokens FILE with one access token per worker (loadgen seed -writers %d -tokens FILE writes one)",
			strings.Join(writers, ", "), c)
	}
	f, err := os.Open(tokenFile)
	if err != nil {
		return nil, fmt.Errorf("-tokens: %w", err)
	}
	defer f.Close()
	tokens, err := readTokens(f)
	if err != nil {
		return nil, fmt.Errorf("-tokens %s: %w", tokenFile, err)
	}
	if len(tokens) < c {
		return nil, fmt.Errorf("-tokens %s holds %d tokens; the write targets (%s) need one per worker: %d (-c)",
			tokenFile, len(tokens), strings.Join(writers, ", "), c)
	}
	return tokens[:c], nil
}

// errNoTargets is returned when run is given nothing to measure.
var errNoTargets = errors.New("no targets: give NAME=URL or NAME=METHOD[+METHOD...] URL arguments")

// maxURLs bounds a -urls file.
const maxURLs = 100_000

// attachURLs reads -urls NAME=FILE: the loopback URLs, one per line (blank lines and lines
// starting with '#' skipped), that the GET target NAME cycles through instead of its own URL.
func attachURLs(targets []target, specs []string) error {
	for _, spec := range specs {
		name, file, ok := strings.Cut(spec, "=")
		if !ok || name == "" || file == "" {
			return fmt.Errorf("-urls %q: want NAME=FILE", spec)
		}
		i := slices.IndexFunc(targets, func(t target) bool { return t.Name == name })
		switch {
		case i < 0:
			return fmt.Errorf("-urls %q: no target named %q", spec, name)
		case targets[i].writes():
			return fmt.Errorf("-urls %q: %s is a write target; -urls is for reads", spec, name)
		case targets[i].URLs != nil:
			return fmt.Errorf("-urls: target %q has two URL files", name)
		}
		f, err := os.Open(file)
		if err != nil {
			return fmt.Errorf("-urls: %w", err)
		}
		var urls []string
		sc := bufio.NewScanner(f)
		for line := 1; sc.Scan(); line++ {
			raw := strings.TrimSpace(sc.Text())
			if raw == "" || strings.HasPrefix(raw, "#") {
				continue
			}
			u, err := checkLoopbackURL(raw)
			if err != nil {
				f.Close()
				return fmt.Errorf("-urls %s line %d: %w", file, line, err)
			}
			if urls = append(urls, u.String()); len(urls) > maxURLs {
				f.Close()
				return fmt.Errorf("-urls %s: more than %d URLs", file, maxURLs)
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return fmt.Errorf("-urls %s: %w", file, err)
		}
		if len(urls) == 0 {
			return fmt.Errorf("-urls %s: no URL in the file", file)
		}
		targets[i].URLs = urls
	}
	return nil
}
