package events_test

import (
	"maps"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/events"
)

func TestDecodeReadEvent(t *testing.T) {
	t.Parallel()
	at := time.Date(2025, 3, 4, 5, 6, 7, 123456000, time.UTC)
	good := domain.ReadEvent{ID: "0123456789abcdef0123456789abcdef", ArticleID: 42, UserID: 7, At: at}

	t.Run("accepts what the publisher writes", func(t *testing.T) {
		t.Parallel()
		for _, ev := range []domain.ReadEvent{good, {ID: "x", ArticleID: 1, UserID: 0, At: at}} {
			got, ok := events.DecodeReadEvent(values(ev))
			if !ok || got != ev {
				t.Errorf("DecodeReadEvent(%v) = %+v, %v; want %+v, true", values(ev), got, ok, ev)
			}
		}
	})

	// with returns the good entry with field k set to v (or removed when v is nil).
	with := func(k string, v any) map[string]any {
		m := maps.Clone(values(good))
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	malformed := map[string]map[string]any{
		"no fields":            {},
		"nil map":              nil,
		"no id":                with("id", nil),
		"empty id":             with("id", ""),
		"no article":           with("article", nil),
		"article not a number": with("article", "forty-two"),
		"article zero":         with("article", "0"),
		"article negative":     with("article", "-3"),
		"article overflows":    with("article", "99999999999999999999"),
		"article not a string": with("article", 42),
		"no user":              with("user", nil),
		"user empty":           with("user", ""),
		"user negative":        with("user", "-1"),
		"user not a number":    with("user", "bob"),
		"no at":                with("at", nil),
		"at not a number":      with("at", "yesterday"),
		"at a float":           with("at", "1.5"),
	}
	for name, vals := range malformed {
		t.Run("rejects "+name, func(t *testing.T) {
			t.Parallel()
			if got, ok := events.DecodeReadEvent(vals); ok {
				t.Errorf("DecodeReadEvent(%v) = %+v, true; want rejected", vals, got)
			}
		})
	}
}
