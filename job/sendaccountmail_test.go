package job_test

import (
	"context"
	"errors"
	"testing"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/job"
	"github.com/inkwell-dev/inkwell/service"
)

type sentMail struct{ purpose, address, code string }

type mailRecorder struct{ sent []sentMail }

func (r *mailRecorder) SendAccountMail(_ context.Context, purpose, address, code string) error {
	r.sent = append(r.sent, sentMail{purpose, address, code})
	return nil
}

// TestSendAccountMail_IdentityLinkedNotice: the notice of a linked provider carries no code; the
// mail names the provider in its place. A notice without its address or provider is permanent.
func TestSendAccountMail_IdentityLinkedNotice(t *testing.T) {
	rec := &mailRecorder{}
	handle := job.SendAccountMailHandler(rec, service.CodeKeys{})
	ok := domain.Job{Kind: service.JobKindSendAccountMail, Payload: []byte(`{"purpose":"identity_linked","address":"a@example.com","provider":"Corp SSO"}`)}
	if err := handle(context.Background(), ok); err != nil {
		t.Fatal(err)
	}
	if len(rec.sent) != 1 || rec.sent[0] != (sentMail{"identity_linked", "a@example.com", "Corp SSO"}) {
		t.Fatalf("sent %+v", rec.sent)
	}
	for _, payload := range []string{`{"purpose":"identity_linked","address":"a@example.com"}`, `{"purpose":"identity_linked","provider":"Corp"}`} {
		err := handle(context.Background(), domain.Job{Kind: service.JobKindSendAccountMail, Payload: []byte(payload)})
		if !errors.Is(err, domain.ErrPermanent) {
			t.Errorf("%s: %v, want a permanent failure", payload, err)
		}
	}
}
