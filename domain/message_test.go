package domain_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/inkwell-dev/inkwell/domain"
)

func TestMessageVersion(t *testing.T) {
	t.Parallel()
	for field, want := range map[string]domain.MessageVersion{"": 0, "0": 0, "1": 1, "2": 2, "17": 17} {
		if got, ok := domain.ParseMessageVersion(field); !ok || got != want {
			t.Errorf("ParseMessageVersion(%q) = %d, %v; want %d, true", field, got, ok, want)
		}
	}
	for _, field := range []string{"-1", "+1", " 1", "1.0", "v1", "x", "99999999999"} {
		if got, ok := domain.ParseMessageVersion(field); ok {
			t.Errorf("ParseMessageVersion(%q) = %d, true; want refused", field, got)
		}
	}
	// A reader at 2 reads 1 and 2 (and a newer one as its own), not 0.
	for v, want := range map[domain.MessageVersion]bool{-1: false, 0: false, 1: true, 2: true, 3: true} {
		if got := domain.MessageVersion(2).Reads(v); got != want {
			t.Errorf("a reader at 2 reads %d: %v, want %v", v, got, want)
		}
	}
	if !domain.MessageVersion(1).Reads(0) {
		t.Error("a reader at 1 refuses the messages from before versions (0)")
	}
}

func TestArticleEventPayload(t *testing.T) {
	t.Parallel()
	want := domain.ArticleEvent{ArticleID: 3, AuthorID: 2, Slug: "how-to", Title: "How to"}

	t.Run("written at this release's version", func(t *testing.T) {
		t.Parallel()
		raw, err := domain.EncodeArticleEvent(want)
		if err != nil {
			t.Fatal(err)
		}
		var fields map[string]any
		if err := json.Unmarshal(raw, &fields); err != nil {
			t.Fatal(err)
		}
		if fields["v"] != float64(domain.ArticleEventVersion) || fields["articleId"] != float64(3) || fields["slug"] != "how-to" {
			t.Fatalf("payload %s: want v %d and the event's fields at the top level", raw, domain.ArticleEventVersion)
		}
		if got, err := domain.DecodeArticleEvent(raw); err != nil || got != want {
			t.Fatalf("DecodeArticleEvent(%s) = %+v, %v; want %+v", raw, got, err, want)
		}
	})

	readable := map[string]string{
		// What v0.1.0 (2cc64c0) writes: json.Marshal(domain.ArticleEvent{...}), no version.
		"version 0 (v0.1.0)": `{"articleId":3,"authorId":2,"slug":"how-to","title":"How to"}`,
		"version 1":          `{"v":1,"articleId":3,"authorId":2,"slug":"how-to","title":"How to"}`,
		// A later release may add fields; it keeps the ones this release reads.
		"a later version": `{"v":2,"articleId":3,"authorId":2,"slug":"how-to","title":"How to","tagList":["go"]}`,
	}
	for name, raw := range readable {
		t.Run("reads "+name, func(t *testing.T) {
			t.Parallel()
			if got, err := domain.DecodeArticleEvent([]byte(raw)); err != nil || got != want {
				t.Fatalf("DecodeArticleEvent(%s) = %+v, %v; want %+v", raw, got, err, want)
			}
		})
	}
	unreadable := map[string]string{
		"not JSON":                   `articleId=3`,
		"a version too old":          `{"v":-1,"articleId":3}`,
		"a version that is a string": `{"v":"1","articleId":3}`,
	}
	for name, raw := range unreadable {
		t.Run("refuses "+name, func(t *testing.T) {
			t.Parallel()
			if got, err := domain.DecodeArticleEvent([]byte(raw)); !errors.Is(err, domain.ErrUnreadableMessage) {
				t.Fatalf("DecodeArticleEvent(%s) = %+v, %v; want ErrUnreadableMessage", raw, got, err)
			}
		})
	}
}
