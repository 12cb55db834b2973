package domain

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// MessageVersion is the schema version a message between instances carries: outbox payloads and
// stream entries, cache invalidations and their acknowledgements. Old and new binaries share one
// database and one Redis while a fleet is upgraded one instance at a time (docs/OPERATIONS.md,
// "Upgrading a fleet"), so every message may be written by one release and read by the next, or
// the other way round. The rule, for every kind of message:
//
//   - A writer at version N writes only what a reader at N-1 reads: fields are added, never
//     removed, renamed or given another meaning. The version field itself is such an addition:
//     v0.1.0, from before versions, ignores fields it does not know.
//   - A reader at version N reads N and N-1; a message without a version is version 0, the format
//     from before versions. It reads a newer version as its own (that writer kept what N reads),
//     and refuses one older than N-1 as unreadable: only releases next to each other share a fleet.
type MessageVersion int

// ParseMessageVersion reads the version field of a message whose fields are strings (a stream
// entry): "" (no field) is version 0. False when the field is not a version.
func ParseMessageVersion(field string) (MessageVersion, bool) {
	if field == "" {
		return 0, true
	}
	n, err := strconv.ParseUint(field, 10, 31)
	if err != nil {
		return 0, false
	}
	return MessageVersion(n), true
}

// String is the version as a stream entry's field carries it.
func (v MessageVersion) String() string { return strconv.Itoa(int(v)) }

// Reads reports whether a reader at version reader reads a message of version v: v is reader-1
// or later.
func (reader MessageVersion) Reads(v MessageVersion) bool { return v >= reader-1 }

// ErrUnreadableMessage is a message its reader cannot read: not the expected encoding, or a
// schema version too old for it.
var ErrUnreadableMessage = errors.New("unreadable message")

// ArticleEventVersion is the schema version of an ArticleEvent payload (the article topics of the
// outbox). Version 1 added "v"; version 0 is the same fields without it.
const ArticleEventVersion MessageVersion = 1

// articleEventPayload is an ArticleEvent as the outbox stores and the stream carries it.
type articleEventPayload struct {
	V MessageVersion `json:"v"`
	ArticleEvent
}

// EncodeArticleEvent is the outbox payload of ev, at ArticleEventVersion.
func EncodeArticleEvent(ev ArticleEvent) ([]byte, error) {
	return json.Marshal(articleEventPayload{V: ArticleEventVersion, ArticleEvent: ev})
}

// DecodeArticleEvent reads an outbox payload written by EncodeArticleEvent of this release or
// the one before it (ErrUnreadableMessage otherwise).
func DecodeArticleEvent(raw []byte) (ArticleEvent, error) {
	var p articleEventPayload
	if err := json.Unmarshal(raw, &p); err != nil {
		return ArticleEvent{}, fmt.Errorf("%w: article event: %w", ErrUnreadableMessage, err)
	}
	if !ArticleEventVersion.Reads(p.V) {
		return ArticleEvent{}, fmt.Errorf("%w: article event of version %d, this release reads %d and %d", ErrUnreadableMessage, p.V, ArticleEventVersion-1, ArticleEventVersion)
	}
	return p.ArticleEvent, nil
}
