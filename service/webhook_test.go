package service_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
	"github.com/inkwell-dev/inkwell/service/mocks"
)

type webhookDeps struct {
	store  *mocks.MockWebhookStore
	sender *mocks.MockWebhookSender
	users  *mocks.MockWebhookAccounts
}

var webhookNow = time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)

func newWebhookService(t *testing.T) (*service.WebhookService, webhookDeps) {
	t.Helper()
	ctrl := gomock.NewController(t)
	d := webhookDeps{store: mocks.NewMockWebhookStore(ctrl), sender: mocks.NewMockWebhookSender(ctrl), users: mocks.NewMockWebhookAccounts(ctrl)}
	svc, err := service.NewWebhookService(d.store, d.sender, d.users, service.WebhookSettings{Key: bytes.Repeat([]byte{7}, 32)},
		func() time.Time { return webhookNow })
	if err != nil {
		t.Fatal(err)
	}
	return svc, d
}

// The secret is stored sealed, never in plain text, and a delivery is signed with it, stamped
// with the service's clock, as the Standard Webhooks specification says.
func TestWebhookService_SealedSecretSignsDeliveries(t *testing.T) {
	svc, d := newWebhookService(t)
	ctx := context.Background()
	var sealed []byte
	hook := domain.Webhook{ID: 5, OwnerID: 9, URL: "https://hooks.example.com/in", Events: []string{domain.WebhookArticlePublished}, Active: true}
	d.store.EXPECT().Create(gomock.Any(), gomock.Any(), gomock.Any()).DoAndReturn(func(_ context.Context, w domain.Webhook, enc []byte) (domain.Webhook, error) {
		sealed = enc
		return hook, nil
	})
	url := hook.URL
	_, secret, err := svc.Create(ctx, domain.Credential{UserID: 9}, false, service.WebhookInput{URL: &url, Events: hook.Events})
	if err != nil {
		t.Fatal(err)
	}
	key, ok := domain.WebhookSecretBytes(secret)
	if !ok || bytes.Contains(sealed, []byte(secret)) || bytes.Contains(sealed, key) {
		t.Fatalf("secret %q sealed as %x", secret, sealed)
	}

	delivery := domain.WebhookDelivery{ID: 41, WebhookID: 5, Body: `{"type":"article.published"}`, Status: domain.WebhookPending}
	d.store.EXPECT().ForAttempt(gomock.Any(), int64(41)).Return(delivery, hook, sealed, nil)
	d.sender.EXPECT().Send(gomock.Any(), hook.URL, gomock.Any(), []byte(delivery.Body)).DoAndReturn(
		func(_ context.Context, _ string, h map[string]string, body []byte) domain.WebhookAnswer {
			if h["webhook-id"] != "msg_41" || h["webhook-timestamp"] != "1796385600" ||
				h["webhook-signature"] != domain.SignWebhook(key, "msg_41", webhookNow, body) {
				t.Errorf("headers %v", h)
			}
			return domain.WebhookAnswer{StatusCode: 204}
		})
	d.store.EXPECT().Record(gomock.Any(), domain.WebhookAttempt{DeliveryID: 41, WebhookID: 5, Answer: domain.WebhookAnswer{StatusCode: 204}, At: webhookNow}).
		Return(domain.WebhookAttemptResult{Status: domain.WebhookDelivered}, nil)
	if err := svc.Deliver(ctx, 41, false); err != nil {
		t.Fatal(err)
	}
}

func TestWebhookService_DeliverOutcomes(t *testing.T) {
	ctx := context.Background()
	hook := domain.Webhook{ID: 5, OwnerID: 9, URL: "https://hooks.example.com/in", Active: true}
	pending := domain.WebhookDelivery{ID: 41, WebhookID: 5, Body: "{}", Status: domain.WebhookPending}
	for _, tc := range []struct {
		name       string
		buildStubs func(svc *service.WebhookService, d webhookDeps, sealed []byte)
		last       bool
		check      func(t *testing.T, err error)
	}{
		{name: "a failure stays pending and is retried",
			buildStubs: func(_ *service.WebhookService, d webhookDeps, sealed []byte) {
				d.store.EXPECT().ForAttempt(gomock.Any(), int64(41)).Return(pending, hook, sealed, nil)
				d.sender.EXPECT().Send(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Return(domain.WebhookAnswer{StatusCode: 500})
				d.store.EXPECT().Record(gomock.Any(), gomock.Any()).Return(domain.WebhookAttemptResult{Status: domain.WebhookPending}, nil)
			},
			check: func(t *testing.T, err error) {
				if !errors.Is(err, service.ErrWebhookRetry) {
					t.Fatalf("err = %v, want a retry", err)
				}
			}},
		{name: "the last failure is dead, not retried", last: true,
			buildStubs: func(_ *service.WebhookService, d webhookDeps, sealed []byte) {
				d.store.EXPECT().ForAttempt(gomock.Any(), int64(41)).Return(pending, hook, sealed, nil)
				d.sender.EXPECT().Send(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Return(domain.WebhookAnswer{Err: errors.New("refused")})
				d.store.EXPECT().Record(gomock.Any(), gomock.Cond(func(a domain.WebhookAttempt) bool { return a.Last })).
					Return(domain.WebhookAttemptResult{Status: domain.WebhookDead}, nil)
			},
			check: func(t *testing.T, err error) {
				if err != nil {
					t.Fatal(err)
				}
			}},
		{name: "a disabled endpoint's delivery is skipped, unsent",
			buildStubs: func(_ *service.WebhookService, d webhookDeps, sealed []byte) {
				off := hook
				off.Active = false
				d.store.EXPECT().ForAttempt(gomock.Any(), int64(41)).Return(pending, off, sealed, nil)
				d.store.EXPECT().Skip(gomock.Any(), int64(5), int64(41), gomock.Any()).Return(nil)
			},
			check: func(t *testing.T, err error) {
				if err != nil {
					t.Fatal(err)
				}
			}},
		{name: "a deleted endpoint's job ends",
			buildStubs: func(_ *service.WebhookService, d webhookDeps, _ []byte) {
				d.store.EXPECT().ForAttempt(gomock.Any(), int64(41)).Return(domain.WebhookDelivery{}, domain.Webhook{}, nil, domain.ErrNotFound)
			},
			check: func(t *testing.T, err error) {
				if err != nil {
					t.Fatal(err)
				}
			}},
		{name: "a private address is a failed attempt, never a connection",
			buildStubs: func(_ *service.WebhookService, d webhookDeps, sealed []byte) {
				private := hook
				private.URL = "https://127.0.0.1/in"
				d.store.EXPECT().ForAttempt(gomock.Any(), int64(41)).Return(pending, private, sealed, nil)
				d.store.EXPECT().Record(gomock.Any(), gomock.Cond(func(a domain.WebhookAttempt) bool { return a.Answer.Err != nil })).
					Return(domain.WebhookAttemptResult{Status: domain.WebhookPending}, nil)
			},
			check: func(t *testing.T, err error) {
				if !errors.Is(err, service.ErrWebhookRetry) {
					t.Fatalf("err = %v", err)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc, d := newWebhookService(t)
			var sealed []byte
			d.store.EXPECT().Create(gomock.Any(), gomock.Any(), gomock.Any()).DoAndReturn(func(_ context.Context, w domain.Webhook, enc []byte) (domain.Webhook, error) {
				sealed = enc
				return hook, nil
			})
			url := hook.URL
			if _, _, err := svc.Create(ctx, domain.Credential{UserID: 9}, false, service.WebhookInput{URL: &url, Events: []string{domain.WebhookArticlePublished}}); err != nil {
				t.Fatal(err)
			}
			tc.buildStubs(svc, d, sealed)
			tc.check(t, svc.Deliver(ctx, 41, tc.last))
		})
	}
}

func TestWebhookService_Access(t *testing.T) {
	ctx := context.Background()
	svc, d := newWebhookService(t)
	d.users.EXPECT().GetByID(gomock.Any(), int64(9)).Return(domain.User{ID: 9, Role: domain.RoleUser}, nil)
	if _, err := svc.List(ctx, domain.Credential{UserID: 9}, true); !errors.Is(err, domain.ErrForbidden) {
		t.Fatalf("a user's site list: %v", err)
	}
	if _, err := svc.List(ctx, domain.Credential{}, false); !errors.Is(err, domain.ErrUnauthorized) {
		t.Fatalf("anonymous: %v", err)
	}
	if err := svc.Delete(ctx, domain.Credential{UserID: 9, APIKeyID: 3}, false, 1); !errors.Is(err, domain.ErrForbidden) {
		t.Fatalf("a read-only API key deletes: %v", err)
	}
	d.store.EXPECT().Get(gomock.Any(), int64(5)).Return(domain.Webhook{ID: 5, OwnerID: 10}, nil, nil)
	if _, err := svc.Get(ctx, domain.Credential{UserID: 9}, false, 5); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("another user's endpoint: %v", err)
	}
}
