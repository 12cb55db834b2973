package events_test

import (
	"context"
	"testing"

	"github.com/inkwell-dev/inkwell/events"
)

// A reader's repeats of one article within a flush interval are counted, not sent as events: the
// stream holds one event per (reader, article) and interval, and every read still counts once.
// After a flush the next read of the pair is an event again.
func TestReadAggregator_SignedInRepeatsInOneIntervalOnlyCount(t *testing.T) {
	t.Parallel()
	e := setup(t)
	pub := e.newPublisher(publisherOpts{})
	stop := run(t, pub)
	agg, _ := e.newAggregator(events.AggregatorConfig{}, nil, pub)
	ctx := context.Background()
	for _, ev := range newEvents(6, eventOpts{UserID: 42, Articles: 2}) { // 3 reads of each of 2 articles
		agg.Record(ev)
	}
	for _, ev := range newEvents(2, eventOpts{UserID: 43, Articles: 1}) { // another reader: its own event
		agg.Record(ev)
	}
	if err := agg.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	agg.Record(newEvents(1, eventOpts{UserID: 42, Articles: 1})[0]) // a new interval
	if err := agg.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	stop() // flushes the publisher
	msgs, err := e.rdb.XRange(ctx, e.stream, "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	signed := map[[2]int64]int{}
	reads, _, _ := e.streamReads(t)
	for _, m := range msgs {
		evs, ok := events.DecodeReadEntry(m.Values, nil)
		if !ok {
			t.Fatalf("entry %v does not decode", m.Values)
		}
		for _, ev := range evs {
			if ev.UserID != 0 {
				signed[[2]int64{ev.UserID, ev.ArticleID}]++
			}
		}
	}
	want := map[[2]int64]int{{42, 1}: 2, {42, 2}: 1, {43, 1}: 1}
	if len(signed) != len(want) || signed[[2]int64{42, 1}] != 2 || signed[[2]int64{42, 2}] != 1 || signed[[2]int64{43, 1}] != 1 {
		t.Fatalf("signed-in events per (reader, article) = %v, want %v", signed, want)
	}
	if reads[1] != 6 || reads[2] != 3 { // 3+2+1 reads of article 1, 3 of article 2
		t.Fatalf("reads per article = %v, want 1:6 2:3", reads)
	}
}
