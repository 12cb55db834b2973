package domain_test

import (
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/domain"
)

func TestArticle_KeepsRevisions(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		a    domain.Article
		want bool
	}{
		{domain.Article{Status: domain.StatusPublished}, true},
		{domain.Article{Status: domain.StatusScheduled}, true},
		// Hidden by a moderator, published by its author: its edits are still kept.
		{domain.Article{Status: domain.StatusPublished, Moderation: domain.ContentModeration{Hidden: true}}, true},
		{domain.Article{Status: domain.StatusDraft}, false},
		{domain.Article{Status: domain.StatusWithdrawn}, false},
	} {
		if got := c.a.KeepsRevisions(); got != c.want {
			t.Errorf("%s (hidden %v): KeepsRevisions = %v, want %v", c.a.Status, c.a.Moderation.Hidden, got, c.want)
		}
	}
}

func TestRevisionOf_KeepsTheContentAndItsVersion(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	a := domain.Article{ID: 4, Version: 7, Title: "t", Description: "d", Body: "b", Tags: []string{"x"}, UpdatedAt: at, CoverImage: "https://x/y.png"}
	r := domain.RevisionOf(a)
	if r.ArticleID != 4 || r.Version != 7 || r.Title != "t" || r.Description != "d" || r.Body != "b" || len(r.Tags) != 1 || !r.CreatedAt.Equal(at) {
		t.Fatalf("RevisionOf = %+v", r)
	}
}
