package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
)

// encodeLikeRenderJSON is what renderJSON writes for v.
func encodeLikeRenderJSON(t *testing.T, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	return encodeAnswer(&buf, v)
}

type viewOpts struct {
	id      int64
	version int32
	tags    []string
	hidden  bool
	cover   string
	at      *time.Time
	author  string
}

func newView(o viewOpts) domain.ArticleView {
	created := time.Date(2026, 3, 4, 5, 6, 7, 891_000_000, time.UTC)
	return domain.ArticleView{
		Article: domain.Article{
			ID: o.id, Slug: fmt.Sprintf("slug-%d", o.id), Title: "A \"title\" <b>&</b>", Description: "line\nbreak\u2028",
			Body: "# Body\n\n<script>x</script> \x01", BodyHTML: "<h1>Body</h1>", Tags: o.tags,
			Status: domain.StatusPublished, Version: o.version, CreatedAt: created, UpdatedAt: created.Add(time.Hour),
			Moderation: domain.ContentModeration{Hidden: o.hidden, Reason: "spam \"ad\""}, CoverImage: o.cover, PublishAt: o.at,
		},
		Author:    domain.Profile{Username: o.author, Bio: "bio\t\\", Image: "https://img.example/a.png?x=<1>", Following: o.id%2 == 0},
		Counters:  domain.Counters{Reads: 10 * o.id, Likes: o.id, Collects: -1},
		Favorited: o.id%3 == 0, Collected: o.id%2 == 1,
	}
}

// What articleDocs writes is byte for byte what encoding the view writes, first encoded, reused,
// and after each field that goes into a kept segment changed.
func TestArticleDocs_WriteWhatEncodingWrites(t *testing.T) {
	t.Parallel()
	at := time.Date(2027, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600))
	views := []domain.ArticleView{
		newView(viewOpts{id: 1, author: "ann"}),
		newView(viewOpts{id: 2, tags: []string{"zeta", "alpha"}, author: "bob\x7f\xff"}),
		newView(viewOpts{id: 3, tags: []string{"a", "b"}, hidden: true, cover: "/media/u/1.png", at: &at, author: "çé"}),
	}
	edits := []func(*domain.ArticleView){
		func(v *domain.ArticleView) { v.Title += "!" },
		func(v *domain.ArticleView) { v.Description = "" },
		func(v *domain.ArticleView) { v.Body += " more"; v.BodyHTML += "<p>more</p>" },
		func(v *domain.ArticleView) { v.Tags = append([]string{"new"}, v.Tags...) },
		func(v *domain.ArticleView) { v.UpdatedAt = v.UpdatedAt.Add(time.Millisecond) },
		func(v *domain.ArticleView) { v.Status, v.Version = domain.StatusWithdrawn, v.Version+1 },
		func(v *domain.ArticleView) { v.Moderation = domain.ContentModeration{Hidden: !v.Moderation.Hidden} },
		func(v *domain.ArticleView) { v.CoverImage = "https://c.example/x.jpg" },
		func(v *domain.ArticleView) { v.PublishAt = &at },
		func(v *domain.ArticleView) {
			v.Counters.Likes++
			v.Favorited = !v.Favorited
			v.Author.Following = !v.Author.Following
		},
	}
	docs := newArticleDocs(articleDocsBytes)
	check := func(t *testing.T, v domain.ArticleView) {
		t.Helper()
		if got, want := docs.appendOne(nil, v), encodeLikeRenderJSON(t, articleEnvelope{Article: articleOf(v, true)}); !bytes.Equal(got, want) {
			t.Fatalf("single article:\n got %s\nwant %s", got, want)
		}
		cursor := &domain.Cursor{CreatedAt: v.CreatedAt, ID: v.ID}
		for _, l := range []service.ArticleList{
			{Articles: []domain.ArticleView{v, views[0]}, Total: 7, NextCursor: cursor},
			{Articles: []domain.ArticleView{}, Total: 0},
		} {
			if got, want := docs.appendList(nil, l), encodeLikeRenderJSON(t, listResponse(l)); !bytes.Equal(got, want) {
				t.Fatalf("list:\n got %s\nwant %s", got, want)
			}
		}
	}
	for _, v := range views {
		check(t, v)
		check(t, v) // from the memo
		for i, edit := range edits {
			edit(&v)
			t.Run(fmt.Sprintf("article %d edit %d", v.ID, i), func(t *testing.T) { check(t, v) })
		}
	}
}

// Readers of one article while its writer edits it: every answer is the encoding of the version
// that reader was handed, never a mix or an older one (run with -race).
func TestArticleDocs_ConcurrentVersionsNeverMix(t *testing.T) {
	t.Parallel()
	docs := newArticleDocs(articleDocsBytes)
	versions := make([]domain.ArticleView, 8)
	want := make([][]byte, len(versions))
	for i := range versions {
		versions[i] = newView(viewOpts{id: 42, version: int32(i), author: "ann"})
		versions[i].Title = fmt.Sprintf("Title %d", i)
		want[i] = encodeLikeRenderJSON(t, articleEnvelope{Article: articleOf(versions[i], true)})
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for n := range 400 {
				i := (g + n) % len(versions)
				if got := docs.appendOne(nil, versions[i]); !bytes.Equal(got, want[i]) {
					t.Errorf("version %d:\n got %s\nwant %s", i, got, want[i])
					return
				}
			}
		})
	}
	wg.Wait()
}

// The memo keeps within its budget: past it entries go, and an article too big for it is encoded
// each time and not kept.
func TestArticleDocs_KeepsWithinItsBudget(t *testing.T) {
	t.Parallel()
	docs := newArticleDocs(64 << 10)
	for id := range int64(2000) {
		docs.appendOne(nil, newView(viewOpts{id: id, author: "ann"}))
	}
	huge := newView(viewOpts{id: 5000, author: "ann"})
	huge.Body = string(bytes.Repeat([]byte("x"), 8<<10))
	if got, want := docs.appendOne(nil, huge), encodeLikeRenderJSON(t, articleEnvelope{Article: articleOf(huge, true)}); !bytes.Equal(got, want) {
		t.Fatal("a huge article is not written as encoded")
	}
	for i := range docs.shards {
		s := &docs.shards[i]
		if s.bytes > docs.shardBytes {
			t.Errorf("shard %d holds %d bytes, budget %d", i, s.bytes, docs.shardBytes)
		}
		for k := range s.docs {
			if k.id == huge.ID {
				t.Errorf("the huge article was kept")
			}
		}
	}
}

// The flags written into an anonymous reader's answer make exactly the answer encoding the
// viewer's own view writes, for every combination.
func TestSpliceFlags_AsEncodingTheViewersView(t *testing.T) {
	t.Parallel()
	docs := newArticleDocs(articleDocsBytes)
	anonymous := newView(viewOpts{id: 7, tags: []string{"a"}, author: "false \"following\":false"})
	anonymous.Favorited, anonymous.Collected, anonymous.Author.Following = false, false, false
	var at flagOffsets
	body := docs.appendOneAt(nil, anonymous, &at)
	for n := range 8 {
		f := service.ViewerFlags{Favorited: n&1 != 0, Following: n&2 != 0, Collected: n&4 != 0}
		mine := anonymous
		mine.Favorited, mine.Collected, mine.Author.Following = f.Favorited, f.Collected, f.Following
		if got, want := spliceFlags(nil, body, at, f), encodeLikeRenderJSON(t, articleEnvelope{Article: articleOf(mine, true)}); !bytes.Equal(got, want) {
			t.Fatalf("%+v:\n got %s\nwant %s", f, got, want)
		}
	}
}

func TestAppendJSONString_AsEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "plain", `q"uote\back`, "\x00\x01\x08\x0c\n\r\t\x1f", "<&>", "é€😀", "\u2028\u2029", "bad\xff\xfeutf8", "\xe2\x82", "del\x7f"} {
		if got, want := appendJSONString(nil, s), encodeLikeRenderJSON(t, s); !bytes.Equal(got, want) {
			t.Errorf("%q: got %s, want %s", s, got, want)
		}
	}
}

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "a\"b", "\u2028x\xff", "\x00\t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := appendJSONString(nil, s), encodeLikeRenderJSON(t, s); !bytes.Equal(got, want) {
			t.Fatalf("%q: got %s, want %s", s, got, want)
		}
	})
}

// benchList is a first page as GET /api/articles answers it: twenty summaries.
func benchList() service.ArticleList {
	l := service.ArticleList{Total: 5000, NextCursor: &domain.Cursor{CreatedAt: time.Now(), ID: 99}}
	for id := range int64(20) {
		v := newView(viewOpts{id: id + 1, tags: []string{"go", "postgres", "redis"}, author: "ann"})
		v.Description = "A description of about the length a writer gives one, a sentence or two of it."
		l.Articles = append(l.Articles, v)
	}
	return l
}

// The list page encoded as a whole each time (as before articleDocs) and from kept encodings.
func BenchmarkArticleListEncoding(b *testing.B) {
	l := benchList()
	b.Run("encoding/json", func(b *testing.B) {
		b.ReportAllocs()
		var buf bytes.Buffer
		for b.Loop() {
			buf.Reset()
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(listResponse(l)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("articleDocs", func(b *testing.B) {
		b.ReportAllocs()
		docs := newArticleDocs(articleDocsBytes)
		var out []byte
		for b.Loop() {
			out = docs.appendList(out[:0], l)
		}
	})
}
