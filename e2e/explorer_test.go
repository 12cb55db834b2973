package e2e

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// browserTimeout bounds the whole browser session: start, page load, the try-it-out round trip.
// The page is ~1.5 MB of script from a loopback port; a cold Chromium on a busy 2-core machine
// takes a few seconds of it.
const browserTimeout = 60 * time.Second

// chromiumNames are the binaries scripts/services.sh chromium finds or installs.
var chromiumNames = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// chromium is the path of a Chromium (or Chrome) binary. One not installed is installed with
// scripts/services.sh chromium (root on Debian: apt-get); the test is skipped only when that is
// impossible too, and fails instead under CI, which must run it (make test installs it first).
func chromium(t *testing.T) string {
	t.Helper()
	find := func() string {
		for _, name := range chromiumNames {
			if p, err := exec.LookPath(name); err == nil {
				return p
			}
		}
		return ""
	}
	if p := find(); p != "" {
		return p
	}
	out, err := exec.Command("../scripts/services.sh", "chromium").CombinedOutput()
	if p := find(); err == nil && p != "" {
		t.Logf("installed Chromium: %s", strings.TrimSpace(string(out)))
		return p
	}
	msg := "no Chromium found (" + strings.Join(chromiumNames, ", ") + ") and scripts/services.sh chromium could not install one: " +
		strings.TrimSpace(string(out))
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// TestAPIExplorerInABrowser opens /api/docs in headless Chromium as a person would: the page
// renders the document's operations from the assets the server embeds (nothing from another
// origin, no script error, no policy violation), and "Try it out" → "Execute" on GET /api/tags
// reaches this server and shows its 200 in the page.
func TestAPIExplorerInABrowser(t *testing.T) {
	parallel(t)
	bin := chromium(t)
	app := startApp(t)

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 1600),
		// The page must work offline: any host but this machine's fails to resolve.
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost"),
	)
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses to sandbox itself as root
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	// The first call on a context starts the browser and the browser lives as long as that
	// context, so the steps' deadline goes on a child (chromedp.Run's rule); the watchdog ends a
	// browser that hangs where no deadline reaches (its start), a little after the steps' one.
	ctx, cancel := chromedp.NewContext(allocCtx)
	defer cancel()
	watchdog := time.AfterFunc(browserTimeout+15*time.Second, cancel)
	defer watchdog.Stop()

	// Everything the page writes to its console, errors included (a blocked load, a policy
	// violation and an uncaught exception each are one).
	var (
		mu       sync.Mutex
		problems []string
	)
	messages := chromedp.Console(ctx)
	consoleDone := make(chan struct{})
	go func() {
		defer close(consoleDone)
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.IsException() || m.Type == chromedp.ConsoleError {
				mu.Lock()
				problems = append(problems, m.String())
				mu.Unlock()
			}
		}
	}()
	stepCtx, stepCancel := context.WithTimeout(ctx, browserTimeout)
	defer stepCancel()
	// A step that fails says what the console said meanwhile (a blocked script stops the page
	// long before the deadline).
	console := func() string {
		mu.Lock()
		defer mu.Unlock()
		if len(problems) == 0 {
			return "the console has no error"
		}
		return "the console says:\n" + strings.Join(problems, "\n")
	}

	const tags = `#operations-Tags-GetTags`
	run := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(stepCtx, steps...); err != nil {
			if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
				t.Fatalf("%s: not done within %s: %v; %s", what, browserTimeout, err, console())
			}
			t.Fatalf("%s: %v; %s", what, err, console())
		}
	}
	evalString := func(what, expr string) string {
		t.Helper()
		v, err := chromedp.Run(stepCtx, chromedp.Poll[string](expr))
		if err != nil {
			t.Fatalf("%s: %v; %s", what, err, console())
		}
		return v
	}

	// The page lists the document's operations: the article endpoints under the /api server.
	run("load /api/docs",
		chromedp.Navigate(app.URL+"/api/docs"),
		chromedp.WaitVisible(chromedp.CSS(`#operations-Articles-GetArticles`)),
	)
	server := evalString("the server list", `document.querySelector('.servers select')?.value`)
	if server != "/api" {
		t.Errorf("the server the page sends requests to is %q, want /api", server)
	}
	paths := evalString("the article paths",
		`[...document.querySelectorAll('.opblock-tag-section .opblock-summary-path')].map(e => e.innerText.trim()).join(' ') || null`)
	for _, want := range []string{"/articles", "/articles/feed", "/articles/{slug}", "/articles/{slug}/comments", "/tags"} {
		if !strings.Contains(" "+paths+" ", " "+want+" ") {
			t.Errorf("the page does not list %s; it lists: %s", want, paths)
		}
	}

	// Try it out on GET /api/tags: the request goes to this origin and its 200 shows in the page.
	run("try it out on GET /api/tags",
		chromedp.Click(chromedp.CSS(tags+` .opblock-summary-control`)),
		chromedp.WaitVisible(chromedp.CSS(tags+` .try-out__btn`)),
		chromedp.Click(chromedp.CSS(tags+` .try-out__btn`)),
		chromedp.WaitVisible(chromedp.CSS(tags+` .btn.execute`)),
		chromedp.Click(chromedp.CSS(tags+` .btn.execute`)),
		chromedp.WaitVisible(chromedp.CSS(tags+` .live-responses-table tbody .response-col_status`)),
	)
	status := evalString("the response status",
		`document.querySelector('`+tags+` .live-responses-table tbody .response-col_status')?.innerText.trim()`)
	if status != "200" {
		t.Errorf("the page shows status %q for GET /api/tags, want 200", status)
	}
	body := evalString("the response body",
		`document.querySelector('`+tags+` .live-responses-table tbody .response-col_description pre')?.innerText`)
	if !strings.Contains(body, `"tags"`) {
		t.Errorf("the page shows the body %q for GET /api/tags, want a tag list", body)
	}
	reqURL := evalString("the request URL", `document.querySelector('`+tags+` .request-url pre')?.innerText.trim()`)
	if reqURL != app.URL+"/api/tags" {
		t.Errorf("the page sent GET %s, want %s (this origin)", reqURL, app.URL+"/api/tags")
	}

	// Offline: every resource the page loaded came from this origin.
	loaded := evalString("the loaded resources",
		`performance.getEntriesByType('resource').map(e => e.name).join('\n') || null`)
	for u := range strings.SplitSeq(loaded, "\n") {
		if !strings.HasPrefix(u, app.URL+"/") {
			t.Errorf("the page loaded %s, which is not on %s", u, app.URL)
		}
	}
	if path := os.Getenv("INKWELL_E2E_SCREENSHOT"); path != "" { // to look at the page: a PNG
		png, err := chromedp.Run(stepCtx, chromedp.FullScreenshot(100))
		if err == nil {
			err = os.WriteFile(path, png, 0o600)
		}
		if err != nil {
			t.Errorf("screenshot: %v", err)
		}
	}

	cancel() // ends the browser, and with it the console subscription
	<-consoleDone
	mu.Lock()
	defer mu.Unlock()
	for _, p := range problems {
		t.Errorf("the page's console has an error: %s", p)
	}
}
