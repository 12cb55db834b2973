package domain_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/inkwell-dev/inkwell/domain"
)

func TestParseSearchQuery(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		q     string
		words string
		cjk   []string
		cjkq  string
	}{
		{q: "  dragons  and\teggs ", words: "dragons and eggs"},
		{q: "缓存", cjk: []string{"缓存"}, cjkq: "('缓存')"},
		{q: "缓存击穿 redis 字", words: "redis", cjk: []string{"缓存击穿", "字"}, cjkq: "('缓存' <-> '存击' <-> '击穿') & '字':*"},
		{q: `"Redis缓存" -x`, words: `"Redis " -x`, cjk: []string{"缓存"}, cjkq: "('缓存')"},
		{q: "東京タワー", cjk: []string{"東京タワー"}, cjkq: "('東京' <-> '京タ' <-> 'タワ' <-> 'ワー')"},
		{q: "한국어", cjk: []string{"한국어"}, cjkq: "('한국' <-> '국어')"},
		{q: "--x - -(-y) well-known", words: "-x (-y) well-known"},
	} {
		got, err := domain.ParseSearchQuery(tc.q)
		if err != nil {
			t.Fatalf("%q: %v", tc.q, err)
		}
		if got.Words != tc.words || !reflect.DeepEqual(got.CJK, tc.cjk) || got.CJKQuery() != tc.cjkq {
			t.Errorf("%q: %+v %q, want %q %v %q", tc.q, got, got.CJKQuery(), tc.words, tc.cjk, tc.cjkq)
		}
	}
	for _, q := range []string{"", "   ", "\t\n", strings.Repeat("a", 257), strings.Repeat("缓", 257)} {
		var verr *domain.ValidationError
		if _, err := domain.ParseSearchQuery(q); !errors.As(err, &verr) || len(verr.Fields["q"]) != 1 {
			t.Errorf("%q: err %v, want a validation error on q", q, err)
		}
	}
	if _, err := domain.ParseSearchQuery(strings.Repeat("缓", 256)); err != nil {
		t.Errorf("256 characters: %v", err)
	}
}

func TestMarkCJK(t *testing.T) {
	t.Parallel()
	text := strings.Repeat("前", 60) + "缓存击穿和缓存雪崩" + strings.Repeat("后", 200)
	got := domain.MarkCJK(text, []string{"缓存", "缓存击穿"})
	if !strings.HasPrefix(got, "…") || !strings.HasSuffix(got, "…") ||
		!strings.Contains(got, "\x01缓存击穿\x02和\x01缓存\x02雪崩") || len([]rune(got)) > 130 {
		t.Fatalf("MarkCJK = %q", got)
	}
	if got := domain.MarkCJK("没有", []string{"缓存"}); got != "" {
		t.Fatalf("no match: %q", got)
	}
}
