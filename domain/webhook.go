package domain

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// TopicArticleUpdated is the outbox topic of an edit of a published article (#33: webhooks hear of
// it; notifications do not).
const TopicArticleUpdated = "article.updated"

// The events a webhook may subscribe to (#33). A user's endpoints hear of their own content; the
// site's (admins') of every public event.
const (
	WebhookArticlePublished = TopicArticlePublished
	WebhookArticleUpdated   = TopicArticleUpdated
	WebhookArticleWithdrawn = TopicArticleWithdrawn
	WebhookCommentCreated   = "comment.created"
	WebhookFollowerAdded    = "follower.added"
	// WebhookPing is the event POST .../test sends; no endpoint subscribes to it.
	WebhookPing = "webhook.ping"
)

// WebhookEvents is every event an endpoint may subscribe to.
var WebhookEvents = []string{WebhookArticlePublished, WebhookArticleUpdated, WebhookArticleWithdrawn, WebhookCommentCreated, WebhookFollowerAdded}

// Webhook limits and timings.
const (
	// MaxWebhooksPerOwner caps one user's endpoints (and the site's).
	MaxWebhooksPerOwner = 10
	// WebhookDisableAfter: an endpoint failing (no success) for this long is disabled.
	WebhookDisableAfter = 72 * time.Hour
	// WebhookTimeout bounds one delivery attempt.
	WebhookTimeout = 10 * time.Second
	// WebhookMaxAnswer is how much of an answer a delivery reads; WebhookKeptAnswer how much it keeps.
	WebhookMaxAnswer  = 64 << 10
	WebhookKeptAnswer = 1 << 10
	// WebhookMaxURL bounds an endpoint's URL.
	WebhookMaxURL = 2048
	// WebhookSecretPrefix starts every signing secret (Standard Webhooks).
	WebhookSecretPrefix = "whsec_"
)

// WebhookRetry paces a delivery's attempts: the first retry within 5 s, doubling up to 6 h, 16
// attempts in all (about 17 h of retries with the queue's equal jitter, at most 23 h), then dead.
var WebhookRetry = RetryPolicy{MaxAttempts: 16, Base: 5 * time.Second, Max: 6 * time.Hour}

// Webhook is one registered endpoint. OwnerID 0 is the site's (admins').
type Webhook struct {
	ID           int64
	OwnerID      int64
	URL          string
	Events       []string
	Active       bool
	FailingSince *time.Time
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// WebhookDeliveryStatus is where a delivery is: pending (to be attempted, or retried), delivered
// (a 2xx answer) or dead (out of attempts, or its endpoint was disabled).
type WebhookDeliveryStatus string

// The delivery statuses.
const (
	WebhookPending   WebhookDeliveryStatus = "pending"
	WebhookDelivered WebhookDeliveryStatus = "delivered"
	WebhookDead      WebhookDeliveryStatus = "dead"
)

// WebhookDelivery is one event on its way to one endpoint, with its last attempt's outcome.
type WebhookDelivery struct {
	ID          int64
	WebhookID   int64
	Seq         int64
	EventID     string
	EventType   string
	Body        string
	Status      WebhookDeliveryStatus
	Attempts    int
	StatusCode  int // 0: no answer
	LatencyMs   int
	Response    string // the first WebhookKeptAnswer bytes of the answer
	Error       string
	CreatedAt   time.Time
	AttemptedAt *time.Time
	// History is each attempt, newest first (at most WebhookRetry.MaxAttempts); filled by the
	// deliveries page, empty elsewhere.
	History []WebhookDeliveryAttempt
}

// WebhookDeliveryAttempt is one attempt of a delivery as it was recorded.
type WebhookDeliveryAttempt struct {
	Attempt    int // 1 for the first
	StatusCode int // 0: no answer
	LatencyMs  int
	Response   string // the first WebhookKeptAnswer bytes of the answer
	Error      string
	At         time.Time
}

// WebhookAnswer is what one attempt got.
type WebhookAnswer struct {
	StatusCode int // 0: no answer (refused, timed out)
	Latency    time.Duration
	Body       []byte // at most WebhookMaxAnswer bytes
	Err        error
}

// OK reports whether the endpoint took the delivery (a 2xx answer).
func (a WebhookAnswer) OK() bool { return a.Err == nil && a.StatusCode >= 200 && a.StatusCode < 300 }

// NewWebhookSecret returns a new signing secret: "whsec_" and the base64 of 24 random bytes.
func NewWebhookSecret() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return WebhookSecretPrefix + base64.StdEncoding.EncodeToString(b)
}

// WebhookSecretBytes is the key a secret signs with: the base64-decoded part after "whsec_".
func WebhookSecretBytes(secret string) ([]byte, bool) {
	rest, ok := strings.CutPrefix(secret, WebhookSecretPrefix)
	if !ok {
		return nil, false
	}
	b, err := base64.StdEncoding.DecodeString(rest)
	return b, err == nil && len(b) > 0
}

// SignWebhook is the Standard Webhooks signature of a message: "v1," and the base64 of
// HMAC-SHA256(key, id + "." + timestamp + "." + body).
func SignWebhook(key []byte, id string, at time.Time, body []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id + "." + strconv.FormatInt(at.Unix(), 10) + "."))
	m.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// WebhookAddrAllowed reports whether a delivery may connect to addr when private networks are not
// allowed: not loopback, private (10/8, 172.16/12, 192.168/16), link-local (169.254/16, the cloud
// metadata address; fe80::/10), unique-local (fc00::/7), CGNAT (100.64/10), multicast or unspecified.
func WebhookAddrAllowed(addr netip.Addr) bool {
	addr = addr.Unmap()
	if !addr.IsValid() || addr.IsLoopback() || addr.IsPrivate() || addr.IsLinkLocalUnicast() || addr.IsLinkLocalMulticast() ||
		addr.IsInterfaceLocalMulticast() || addr.IsMulticast() || addr.IsUnspecified() {
		return false
	}
	for _, p := range refusedPrefixes {
		if p.Contains(addr) {
			return false
		}
	}
	return true
}

// refusedPrefixes are the ranges netip has no predicate for.
var refusedPrefixes = []netip.Prefix{
	netip.MustParsePrefix("100.64.0.0/10"),  // CGNAT
	netip.MustParsePrefix("0.0.0.0/8"),      // "this network"
	netip.MustParsePrefix("192.0.0.0/24"),   // IETF protocol assignments
	netip.MustParsePrefix("198.18.0.0/15"),  // benchmarking
	netip.MustParsePrefix("240.0.0.0/4"),    // reserved, and the broadcast address
	netip.MustParsePrefix("64:ff9b:1::/48"), // local-use NAT64
	netip.MustParsePrefix("2001:db8::/32"),  // documentation
	netip.MustParsePrefix("fec0::/10"),      // deprecated site-local
	netip.MustParsePrefix("::ffff:0:0/96"),  // mapped (Unmap handles them; kept for clarity)
	netip.MustParsePrefix("100::/64"),       // discard-only
	netip.MustParsePrefix("2001:10::/28"),   // ORCHID
	netip.MustParsePrefix("169.254.0.0/16"), // link-local, cloud metadata
	netip.MustParsePrefix("fe80::/10"),      // link-local
	netip.MustParsePrefix("fc00::/7"),       // unique-local
	netip.MustParsePrefix("255.255.255.255/32"),
}

// CheckWebhookURL validates an endpoint's URL: absolute https (http too when private networks are
// allowed), a host, no user info, no fragment, and when the host is a literal IP (or localhost),
// one a delivery may connect to. A host name is checked again, on the connected address, by the
// delivery's dialer.
func CheckWebhookURL(raw string, allowPrivate bool) error {
	switch {
	case raw == "":
		return NewValidationError("url", "can't be blank")
	case len(raw) > WebhookMaxURL:
		return NewValidationError("url", "is too long (at most "+strconv.Itoa(WebhookMaxURL)+" characters)")
	case !utf8.ValidString(raw) || strings.ContainsAny(raw, "\x00 \t\r\n"):
		return NewValidationError("url", "is not a URL")
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return NewValidationError("url", "is not an absolute URL")
	}
	if u.User != nil {
		return NewValidationError("url", "must not carry user info")
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return NewValidationError("url", "must not have a fragment")
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && allowPrivate:
	default:
		return NewValidationError("url", "must be an https URL")
	}
	if allowPrivate {
		return nil
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return NewValidationError("url", "must not point to a private, loopback or link-local address")
	}
	if ip := net.ParseIP(host); ip != nil {
		addr, _ := netip.AddrFromSlice(ip)
		if !WebhookAddrAllowed(addr) {
			return NewValidationError("url", "must not point to a private, loopback or link-local address")
		}
	}
	return nil
}

// CheckWebhookEvents validates a subscription: one event at least, each known, none twice.
func CheckWebhookEvents(events []string) error {
	if len(events) == 0 {
		return NewValidationError("events", "can't be empty")
	}
	seen := map[string]bool{}
	for _, e := range events {
		if !slices.Contains(WebhookEvents, e) {
			return NewValidationError("events", "has an unknown event: one of "+strings.Join(WebhookEvents, ", ")+" is expected")
		}
		if seen[e] {
			return NewValidationError("events", "lists an event twice")
		}
		seen[e] = true
	}
	return nil
}

// The queue and job kind of deliveries: one job per delivery, enqueued when the delivery is the
// lowest pending of its endpoint.
const (
	WebhookQueue   = "webhooks"
	WebhookJobKind = "webhook_deliver"
)

// WebhookAttempt is one attempt's outcome as the delivery records it.
type WebhookAttempt struct {
	DeliveryID, WebhookID int64
	Answer                WebhookAnswer
	// Last: the delivery has no attempt left (a failure makes it dead).
	Last bool
	// At is when it was made, by the service's clock (it starts and ends an endpoint's failing time).
	At time.Time
}

// WebhookAttemptResult is what recording an attempt decided.
type WebhookAttemptResult struct {
	Status   WebhookDeliveryStatus
	Disabled bool // the endpoint had failed for WebhookDisableAfter and was disabled
}

// WebhookFailedTooLong reports whether an endpoint failing since since is disabled at now.
func WebhookFailedTooLong(since, now time.Time) bool { return now.Sub(since) >= WebhookDisableAfter }

// WebhookAnswerKept is the part of an answer a delivery keeps: its first WebhookKeptAnswer bytes,
// cut at a rune boundary, valid UTF-8 and without NUL.
func WebhookAnswerKept(b []byte) string {
	if len(b) > WebhookKeptAnswer {
		b = b[:WebhookKeptAnswer]
		for len(b) > 0 && !utf8.Valid(b) && len(b) > WebhookKeptAnswer-4 {
			b = b[:len(b)-1]
		}
	}
	return strings.ReplaceAll(strings.ToValidUTF8(string(b), "\uFFFD"), "\x00", "")
}
