package service

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/inkwell-dev/inkwell/domain"
)

//go:generate go tool mockgen -source=webhook.go -destination=mocks/webhook_mock.go -package=mocks

// WebhookStore keeps endpoints and their deliveries (repository/webhooks.Store).
type WebhookStore interface {
	// Create adds an endpoint, or refuses (a ValidationError) one past the owner's cap.
	Create(ctx context.Context, w domain.Webhook, secretEnc []byte) (domain.Webhook, error)
	Get(ctx context.Context, id int64) (domain.Webhook, []byte, error)
	List(ctx context.Context, ownerID int64) ([]domain.Webhook, error)
	Update(ctx context.Context, w domain.Webhook) (domain.Webhook, error)
	Delete(ctx context.Context, id int64) error
	// Add adds one delivery to one endpoint, at the end of its line.
	Add(ctx context.Context, webhookID int64, eventID, eventType, body string) error
	Delivery(ctx context.Context, id int64) (domain.WebhookDelivery, error)
	// ForAttempt returns a delivery with its endpoint (ID, URL, Active) and the endpoint's
	// encrypted secret.
	ForAttempt(ctx context.Context, id int64) (domain.WebhookDelivery, domain.Webhook, []byte, error)
	Deliveries(ctx context.Context, webhookID, beforeSeq int64, limit int) ([]domain.WebhookDelivery, error)
	// Record records an attempt (and disables an endpoint failing too long); a delivery that is
	// done makes way for the endpoint's next.
	Record(ctx context.Context, a domain.WebhookAttempt) (domain.WebhookAttemptResult, error)
	// Skip ends a pending delivery unattempted (its endpoint is off) and makes way for the next.
	Skip(ctx context.Context, webhookID, deliveryID int64, why string) error
}

// WebhookSender posts one signed delivery (webhookdial.Sender: the SSRF rules, no redirects, the
// timeout, the bounded answer).
type WebhookSender interface {
	Send(ctx context.Context, url string, headers map[string]string, body []byte) domain.WebhookAnswer
}

// WebhookAccounts loads the caller's account for the admins' check (the user repository).
type WebhookAccounts interface {
	ActorReader
}

// WebhookSettings are the webhooks' settings: the 32-byte key secrets are encrypted with
// (INKWELL_WEBHOOK_KEY) and whether endpoints may be private (INKWELL_WEBHOOK_ALLOW_PRIVATE).
type WebhookSettings struct {
	Key          []byte
	AllowPrivate bool
	// Now replaces the clock NewWebhookService is given (tests: ioc.Tuning.WebhookClock, to make
	// an endpoint fail for days in seconds); nil keeps it. Not a setting.
	Now func() time.Time
}

// WebhookInput is a create's or an edit's fields; nil: unchanged (an edit).
type WebhookInput struct {
	URL    *string
	Events []string
	Active *bool
}

// WebhookDeliveryList is one page of an endpoint's deliveries, newest first; NextBefore (0: none)
// continues it.
type WebhookDeliveryList struct {
	Items      []domain.WebhookDelivery
	NextBefore int64
}

// WebhookService runs endpoints (users' own, admins' site-wide) and delivers events to them.
type WebhookService struct {
	store  WebhookStore
	sender WebhookSender
	users  WebhookAccounts
	cfg    WebhookSettings
	aead   cipher.AEAD
	now    func() time.Time
}

// NewWebhookService returns the service; the key must be 32 bytes.
func NewWebhookService(store WebhookStore, sender WebhookSender, users WebhookAccounts, cfg WebhookSettings, now func() time.Time) (*WebhookService, error) {
	block, err := aes.NewCipher(cfg.Key)
	if err != nil || len(cfg.Key) != 32 {
		return nil, fmt.Errorf("webhook key: want 32 bytes, have %d", len(cfg.Key))
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	if cfg.Now != nil {
		now = cfg.Now
	}
	return &WebhookService{store: store, sender: sender, users: users, cfg: cfg, aead: aead, now: now}, nil
}

// ownerOf is whose endpoints the caller manages: their own, or with site the site's (0), which
// only admins may. Writes need a credential that may write.
func (s *WebhookService) ownerOf(ctx context.Context, cred domain.Credential, site, write bool) (int64, error) {
	if site {
		if _, err := adminOf(ctx, s.users, cred); err != nil {
			return 0, err
		}
		return 0, nil
	}
	if cred.UserID == 0 {
		return 0, domain.ErrUnauthorized
	}
	if write && !cred.CanWrite() {
		return 0, domain.ErrForbidden
	}
	return cred.UserID, nil
}

// owned loads an endpoint of owner; another owner's is not found.
func (s *WebhookService) owned(ctx context.Context, owner, id int64) (domain.Webhook, []byte, error) {
	w, enc, err := s.store.Get(ctx, id)
	if err != nil {
		return domain.Webhook{}, nil, err
	}
	if w.OwnerID != owner {
		return domain.Webhook{}, nil, fmt.Errorf("webhook %d: %w", id, domain.ErrNotFound)
	}
	return w, enc, nil
}

func (s *WebhookService) check(w domain.Webhook) error {
	if err := domain.CheckWebhookURL(w.URL, s.cfg.AllowPrivate); err != nil {
		return err
	}
	return domain.CheckWebhookEvents(w.Events)
}

// Create registers an endpoint and returns it with its signing secret, shown this once.
func (s *WebhookService) Create(ctx context.Context, cred domain.Credential, site bool, in WebhookInput) (domain.Webhook, string, error) {
	owner, err := s.ownerOf(ctx, cred, site, true)
	if err != nil {
		return domain.Webhook{}, "", err
	}
	w := domain.Webhook{OwnerID: owner, Events: in.Events, Active: true}
	if in.URL != nil {
		w.URL = *in.URL
	}
	if err := s.check(w); err != nil {
		return domain.Webhook{}, "", err
	}
	secret := domain.NewWebhookSecret()
	w, err = s.store.Create(ctx, w, s.seal([]byte(secret)))
	if err != nil {
		return domain.Webhook{}, "", err
	}
	return w, secret, nil
}

// List returns the caller's endpoints (or the site's).
func (s *WebhookService) List(ctx context.Context, cred domain.Credential, site bool) ([]domain.Webhook, error) {
	owner, err := s.ownerOf(ctx, cred, site, false)
	if err != nil {
		return nil, err
	}
	return s.store.List(ctx, owner)
}

// Get returns one of the caller's endpoints.
func (s *WebhookService) Get(ctx context.Context, cred domain.Credential, site bool, id int64) (domain.Webhook, error) {
	owner, err := s.ownerOf(ctx, cred, site, false)
	if err != nil {
		return domain.Webhook{}, err
	}
	w, _, err := s.owned(ctx, owner, id)
	return w, err
}

// Update changes an endpoint's url, events or active flag; turning it on again forgets its failures.
func (s *WebhookService) Update(ctx context.Context, cred domain.Credential, site bool, id int64, in WebhookInput) (domain.Webhook, error) {
	owner, err := s.ownerOf(ctx, cred, site, true)
	if err != nil {
		return domain.Webhook{}, err
	}
	w, _, err := s.owned(ctx, owner, id)
	if err != nil {
		return domain.Webhook{}, err
	}
	if in.URL != nil {
		w.URL = *in.URL
	}
	if in.Events != nil {
		w.Events = in.Events
	}
	if in.Active != nil {
		w.Active = *in.Active
	}
	if err := s.check(w); err != nil {
		return domain.Webhook{}, err
	}
	return s.store.Update(ctx, w)
}

// Delete removes an endpoint and its deliveries.
func (s *WebhookService) Delete(ctx context.Context, cred domain.Credential, site bool, id int64) error {
	owner, err := s.ownerOf(ctx, cred, site, true)
	if err != nil {
		return err
	}
	if _, _, err := s.owned(ctx, owner, id); err != nil {
		return err
	}
	return s.store.Delete(ctx, id)
}

// Deliveries returns a page of an endpoint's deliveries, newest first, numbered below before (0: from the newest).
func (s *WebhookService) Deliveries(ctx context.Context, cred domain.Credential, site bool, id, before int64, limit int) (WebhookDeliveryList, error) {
	owner, err := s.ownerOf(ctx, cred, site, false)
	if err != nil {
		return WebhookDeliveryList{}, err
	}
	if _, _, err := s.owned(ctx, owner, id); err != nil {
		return WebhookDeliveryList{}, err
	}
	items, err := s.store.Deliveries(ctx, id, before, limit+1)
	if err != nil {
		return WebhookDeliveryList{}, err
	}
	items, more := domain.CutPage(items, limit)
	out := WebhookDeliveryList{Items: items}
	if more {
		out.NextBefore = items[len(items)-1].Seq
	}
	return out, nil
}

// Redeliver sends a delivery's event again, as a new delivery at the end of the endpoint's line.
func (s *WebhookService) Redeliver(ctx context.Context, cred domain.Credential, site bool, id, deliveryID int64) error {
	owner, err := s.ownerOf(ctx, cred, site, true)
	if err != nil {
		return err
	}
	if _, _, err := s.owned(ctx, owner, id); err != nil {
		return err
	}
	d, err := s.store.Delivery(ctx, deliveryID)
	if err != nil {
		return err
	}
	if d.WebhookID != id {
		return fmt.Errorf("delivery %d of webhook %d: %w", deliveryID, id, domain.ErrNotFound)
	}
	return s.store.Add(ctx, id, "redeliver-"+strconv.FormatInt(deliveryID, 10)+"-"+strconv.FormatInt(s.now().UnixNano(), 10), d.EventType, d.Body)
}

// Test sends the endpoint a ping (event webhook.ping).
func (s *WebhookService) Test(ctx context.Context, cred domain.Credential, site bool, id int64) error {
	owner, err := s.ownerOf(ctx, cred, site, true)
	if err != nil {
		return err
	}
	if _, _, err := s.owned(ctx, owner, id); err != nil {
		return err
	}
	body, err := s.body(domain.WebhookPing, s.now(), map[string]any{"webhookId": id})
	if err != nil {
		return err
	}
	return s.store.Add(ctx, id, "ping-"+strconv.FormatInt(s.now().UnixNano(), 10), domain.WebhookPing, body)
}

// body is a delivery's JSON: {"type", "timestamp", "data"}.
func (s *WebhookService) body(eventType string, at time.Time, data any) (string, error) {
	b, err := json.Marshal(struct {
		Type      string `json:"type"`
		Timestamp string `json:"timestamp"`
		Data      any    `json:"data"`
	}{eventType, at.UTC().Format(time.RFC3339Nano), data})
	return string(b), err
}

// ErrWebhookRetry is a delivery attempt that failed and will be retried.
var ErrWebhookRetry = errors.New("webhook delivery failed; retrying later")

// Deliver makes one attempt at a delivery, signed (Standard Webhooks), and records it. last says
// the attempt is the delivery's last. It returns ErrWebhookRetry (wrapped) when the delivery
// stays pending, for the queue to retry it after a backoff; nil when it is done, or gone.
func (s *WebhookService) Deliver(ctx context.Context, deliveryID int64, last bool) error {
	d, w, enc, err := s.store.ForAttempt(ctx, deliveryID)
	if errors.Is(err, domain.ErrNotFound) {
		return nil // its endpoint was deleted
	}
	if err != nil {
		return err
	}
	if d.Status != domain.WebhookPending {
		return nil
	}
	if !w.Active {
		return s.store.Skip(ctx, w.ID, d.ID, "the endpoint is disabled")
	}
	secret, err := s.open(enc)
	if err != nil {
		return fmt.Errorf("%w: webhook %d's secret: %w", domain.ErrPermanent, w.ID, err)
	}
	key, ok := domain.WebhookSecretBytes(string(secret))
	if !ok {
		return fmt.Errorf("%w: webhook %d's secret is unreadable", domain.ErrPermanent, w.ID)
	}
	var ans domain.WebhookAnswer
	if err := domain.CheckWebhookURL(w.URL, s.cfg.AllowPrivate); err != nil {
		ans.Err = err // e.g. private endpoints were allowed when it was made, and are no longer
	} else {
		at := s.now()
		msgID := "msg_" + strconv.FormatInt(d.ID, 10)
		ans = s.sender.Send(ctx, w.URL, map[string]string{
			"webhook-id":        msgID,
			"webhook-timestamp": strconv.FormatInt(at.Unix(), 10),
			"webhook-signature": domain.SignWebhook(key, msgID, at, []byte(d.Body)),
		}, []byte(d.Body))
	}
	res, err := s.store.Record(context.WithoutCancel(ctx), domain.WebhookAttempt{DeliveryID: d.ID, WebhookID: w.ID, Answer: ans, Last: last, At: s.now()})
	if err != nil {
		return err
	}
	if res.Status == domain.WebhookPending {
		if ans.Err != nil {
			return fmt.Errorf("%w: delivery %d: %w", ErrWebhookRetry, d.ID, ans.Err)
		}
		return fmt.Errorf("%w: delivery %d: answered %d", ErrWebhookRetry, d.ID, ans.StatusCode)
	}
	return nil
}

// seal encrypts a secret (AES-256-GCM, a random nonce before the ciphertext).
func (s *WebhookService) seal(plain []byte) []byte {
	nonce := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+len(plain)+s.aead.Overhead())
	_, _ = rand.Read(nonce)
	return s.aead.Seal(nonce, nonce, plain, nil)
}

func (s *WebhookService) open(enc []byte) ([]byte, error) {
	n := s.aead.NonceSize()
	if len(enc) < n {
		return nil, errors.New("ciphertext too short")
	}
	return s.aead.Open(nil, enc[:n], enc[n:], nil)
}
