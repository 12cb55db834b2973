package inkwell

import (
	"flag"
	"io"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/ioc"
	"github.com/inkwell-dev/inkwell/repository"
	"github.com/inkwell-dev/inkwell/repository/pg"
)

// TestRetentionRulesAreKnown: every rule the settings make has a policy in the repository, so
// adding a setting without its statements (or the reverse) fails here, not at the first run.
func TestRetentionRulesAreKnown(t *testing.T) {
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cfg := ioc.Flags(fs)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	store := NewRetentionStore(repository.NewRetentionStore(pg.SessionPool{}, nil), nil, nil)
	seen := map[string]bool{}
	for _, r := range NewRetentionRules(cfg) {
		if !store.Knows(r.Name) || seen[r.Name] {
			t.Errorf("rule %q: known %v, seen before %v", r.Name, store.Knows(r.Name), seen[r.Name])
		}
		seen[r.Name] = true
		if r.Off() {
			t.Errorf("rule %q is off by default", r.Name)
		}
	}
	// Sessions go once they cannot be refreshed (the refresh lifetime) plus the grace.
	for _, r := range NewRetentionRules(cfg) {
		if r.Name == "sessions_idle" && r.MaxAge != cfg.Auth.RefreshLifetime+24*time.Hour {
			t.Errorf("idle sessions kept %v", r.MaxAge)
		}
		if r.Name == "reading_history" && (r.Newest != 1000 || r.Since < time.Hour) {
			t.Errorf("history rule %+v", r)
		}
	}
}
