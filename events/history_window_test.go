package events_test

import (
	"cmp"
	"context"
	"slices"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/events"
)

// A reader's immediate repeats of one article within a flush interval are counted, not sent as
// events; reading another article in between changes the history's order, so the read after it
// goes out. Every read still counts once, and after a flush the next read is an event again.
func TestReadAggregator_SignedInRepeatsInOneIntervalOnlyCount(t *testing.T) {
	t.Parallel()
	e := setup(t)
	pub := e.newPublisher(publisherOpts{})
	stop := run(t, pub)
	agg, _ := e.newAggregator(events.AggregatorConfig{}, nil, pub)
	ctx := context.Background()
	read := func(reader, article int64) {
		agg.Record(domain.ReadEvent{ID: domain.NewEventID(), ArticleID: article, UserID: reader, At: time.Now()})
	}
	// Reader 42: A A A B B A (A, B, A go out); reader 43 interleaved: A A (one goes out).
	for _, r := range [][2]int64{{42, 1}, {42, 1}, {43, 1}, {42, 1}, {42, 2}, {43, 1}, {42, 2}, {42, 1}} {
		read(r[0], r[1])
	}
	if err := agg.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	read(42, 1) // a new interval: its latest read is forgotten
	if err := agg.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	stop() // flushes the publisher
	msgs, err := e.rdb.XRange(ctx, e.stream, "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	var signed [][2]int64
	reads, _, _ := e.streamReads(t)
	for _, m := range msgs {
		evs, ok := events.DecodeReadEntry(m.Values, nil)
		if !ok {
			t.Fatalf("entry %v does not decode", m.Values)
		}
		for _, ev := range evs {
			if ev.UserID != 0 {
				signed = append(signed, [2]int64{ev.UserID, ev.ArticleID})
			}
		}
	}
	slices.SortFunc(signed, func(a, b [2]int64) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) })
	want := [][2]int64{{42, 1}, {42, 1}, {42, 1}, {42, 2}, {43, 1}}
	if !slices.Equal(signed, want) {
		t.Fatalf("signed-in events (reader, article) = %v, want %v", signed, want)
	}
	if reads[1] != 7 || reads[2] != 2 { // 5 by 42 and 2 by 43 of article 1, 2 of article 2
		t.Fatalf("reads per article = %v, want 1:7 2:2", reads)
	}
}
