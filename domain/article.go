package domain

import (
	"crypto/rand"
	"encoding/hex"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// ArticleStatus is where an article is in its life: draft → published ⇄ withdrawn, and draft or
// withdrawn → scheduled → published at its PublishAt (#32).
type ArticleStatus string

// Article statuses.
const (
	StatusDraft     ArticleStatus = "draft"
	StatusPublished ArticleStatus = "published"
	StatusWithdrawn ArticleStatus = "withdrawn"
	StatusScheduled ArticleStatus = "scheduled"
)

// StatusHidden is the status stored for an article a moderator hid (or whose author is
// suspended). It never leaves the repository: an Article carries its author's status and
// Moderation.Hidden instead.
const StatusHidden ArticleStatus = "hidden"

// ParseArticleStatus accepts the four status names an author sees.
func ParseArticleStatus(s string) (ArticleStatus, bool) {
	switch st := ArticleStatus(s); st {
	case StatusDraft, StatusPublished, StatusWithdrawn, StatusScheduled:
		return st, true
	}
	return "", false
}

// Article is a piece of writing. Summaries (lists) leave Body empty.
type Article struct {
	ID          int64
	Slug        string
	AuthorID    int64
	Title       string
	Description string
	Body        string
	// BodyHTML is Body rendered and sanitized, safe to show anywhere; rendered once per version of
	// the article (with its cache entry), never per read. Empty in lists and summaries.
	BodyHTML    string
	Tags        []string
	Status      ArticleStatus
	Version     int32
	CreatedAt   time.Time
	UpdatedAt   time.Time
	PublishedAt *time.Time
	// PublishAt is when a scheduled article publishes itself (nil unless Status is scheduled).
	PublishAt *time.Time
	// Moderation says whether a moderator hid the article (Status is then still its author's
	// status: publishing or withdrawing a hidden article changes only that).
	Moderation ContentModeration
	// CoverImage is an https URL or the path of one of the author's uploads ("" for none).
	CoverImage string
	// Uploads are the author's uploads the article refers to (its cover and body), written with
	// the article's content; nil leaves the stored references as they are.
	Uploads []int64
}

// Public reports whether everyone may read the article: published and not hidden.
func (a Article) Public() bool { return a.Status == StatusPublished && !a.Moderation.Hidden }

// VisibleTo reports whether viewerID (0 for anonymous) may read the article: everyone may read a
// public article, only its author a draft, a withdrawn or a hidden one.
func (a Article) VisibleTo(viewerID int64) bool {
	return a.Public() || (viewerID != 0 && a.AuthorID == viewerID)
}

// Counters are an item's interaction counts.
type Counters struct {
	Reads    int64
	Likes    int64
	Collects int64
}

// ArticleView is an article as one viewer sees it: with its author's profile, its counters and the
// viewer's own flags.
type ArticleView struct {
	Article
	Author    Profile
	Counters  Counters
	Favorited bool
	Collected bool
}

// Biz names a kind of item that can be liked, collected and read. It keys the interaction tables
// and the counter hashes.
type Biz string

// BizArticle is the only kind of item so far.
const BizArticle Biz = "article"

// Limits on article fields.
const (
	MaxTitleLen       = 200
	MaxDescriptionLen = 1000
	MaxBodyLen        = 200_000
	MaxTags           = 10
	MaxTagLen         = 40
	MaxSlugBaseLen    = 80
)

// ValidateArticle adds messages to v for unacceptable article fields. Only non-nil fields are
// checked, so updates can validate just what they change.
func ValidateArticle(v *ValidationError, title, description, body *string, tags []string) {
	if title != nil {
		switch t := strings.TrimSpace(*title); {
		case t == "":
			v.Add("title", "can't be blank")
		case utf8.RuneCountInString(t) > MaxTitleLen:
			v.Add("title", "is too long (maximum is 200 characters)")
		case Slugify(t) == "":
			v.Add("title", "must contain at least one letter or digit")
		}
	}
	if description != nil {
		switch d := strings.TrimSpace(*description); {
		case d == "":
			v.Add("description", "can't be blank")
		case utf8.RuneCountInString(d) > MaxDescriptionLen:
			v.Add("description", "is too long (maximum is 1000 characters)")
		}
	}
	if body != nil {
		switch b := *body; {
		case strings.TrimSpace(b) == "":
			v.Add("body", "can't be blank")
		case utf8.RuneCountInString(b) > MaxBodyLen:
			v.Add("body", "is too long (maximum is 200000 characters)")
		}
	}
	if len(tags) > MaxTags {
		v.Add("tagList", "has too many tags (maximum is 10)")
	}
	for _, t := range tags {
		if t = strings.TrimSpace(t); t == "" {
			v.Add("tagList", "can't contain blank tags")
			break
		} else if utf8.RuneCountInString(t) > MaxTagLen {
			v.Add("tagList", "has a tag that is too long (maximum is 40 characters)")
			break
		}
	}
}

// NormalizeTags trims tags, drops blank ones and duplicates, and sorts them (byte order, so case
// is significant and "Go" precedes "go"): an article's tagList reads in alphabetical order, as
// RealWorld clients expect, whatever order it was written in.
func NormalizeTags(tags []string) []string {
	out := make([]string, 0, len(tags))
	for _, t := range tags {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// reservedSlugs are path segments under /api/articles/ that name endpoints, not articles; an
// article whose title slugifies to one of them gets a suffix.
var reservedSlugs = map[string]bool{"feed": true, "hot": true}

// IsReservedSlug reports whether slug would be shadowed by an endpoint.
func IsReservedSlug(slug string) bool { return reservedSlugs[slug] }

// Slugify turns a title into a URL-safe slug: lower-case letters and digits separated by single
// hyphens, at most MaxSlugBaseLen bytes. Letters outside ASCII are kept (browsers percent-encode
// them), and so are combining marks that follow a letter or digit (Devanagari vowel signs, a
// decomposed accent), so such words are not torn apart; everything else becomes a separator.
func Slugify(title string) string {
	var b strings.Builder
	pendingDash := false
	for _, r := range strings.ToLower(title) {
		inWord := b.Len() > 0 && !pendingDash
		if unicode.IsLetter(r) || unicode.IsDigit(r) || (inWord && unicode.Is(unicode.M, r)) {
			if pendingDash && b.Len() > 0 {
				b.WriteByte('-')
			}
			pendingDash = false
			if b.Len()+utf8.RuneLen(r) > MaxSlugBaseLen {
				break
			}
			b.WriteRune(r)
		} else {
			pendingDash = true
		}
	}
	return strings.TrimRight(b.String(), "-")
}

// Comment is a comment on an article. Seq numbers an article's comments 1, 2, 3, ...
type Comment struct {
	ID        int64
	ArticleID int64
	Seq       int64
	AuthorID  int64
	Body      string
	CreatedAt time.Time
	UpdatedAt time.Time
	// Moderation says whether a moderator hid the comment: only its author still sees it.
	Moderation ContentModeration
	// ParentID is the comment this one answers (0 at the top level), RootID its top-level
	// ancestor (itself at the top level), Depth 1 at the top level, at most MaxCommentDepth.
	ParentID     int64
	RootID       int64
	Depth        int16
	RepliesCount int64
	// Deleted marks a placeholder: a deleted comment that has replies, with no body and no author
	// (AuthorID 0).
	Deleted bool
	// Edited says whether its author edited the body.
	Edited bool
}

// CommentView is a comment with its author's profile as the viewer sees it.
type CommentView struct {
	Comment
	Author Profile
}

// MaxCommentLen bounds a comment's body.
const MaxCommentLen = 10_000

// ValidateComment adds messages to v for an unacceptable comment body.
func ValidateComment(v *ValidationError, body string) {
	switch {
	case strings.TrimSpace(body) == "":
		v.Add("body", "can't be blank")
	case utf8.RuneCountInString(body) > MaxCommentLen:
		v.Add("body", "is too long (maximum is 10000 characters)")
	}
}

// ReadEvent records that someone read a published article. UserID is 0 for an anonymous reader.
type ReadEvent struct {
	ID        string
	ArticleID int64
	UserID    int64
	At        time.Time
	// Count is how many reads the event stands for: an aggregated batch of anonymous reads
	// carries its total here. Zero means one (a single read).
	Count int64
}

// Reads is how many reads the event counts.
func (ev ReadEvent) Reads() int64 {
	if ev.Count < 1 {
		return 1
	}
	return ev.Count
}

// HistoryEntry is one article in a reader's history.
type HistoryEntry struct {
	ArticleID int64
	ReadAt    time.Time
}

// NewEventID returns a random 128-bit event id in hex: unique enough that two events never share
// one, so consumers can deduplicate redelivered events by id.
func NewEventID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
