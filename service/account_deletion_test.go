package service_test

import (
	"context"
	"testing"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
	"github.com/inkwell-dev/inkwell/service/mocks"
)

func TestAccountDeletion_Delete(t *testing.T) {
	t.Parallel()
	victim := domain.User{ID: 7, Username: "victim"}
	tx := &fakeTx{id: 26}
	tests := []struct {
		name       string
		username   string
		buildStubs func(store *mocks.MockAccountStore, sessions *mocks.MockSessionEnder)
		check      func(t *testing.T, gone domain.ErasedAccount, err error)
	}{
		{
			name: "every session and API key ends in the deletion's unit of work", username: " victim ",
			buildStubs: func(store *mocks.MockAccountStore, sessions *mocks.MockSessionEnder) {
				gomock.InOrder(
					store.EXPECT().HoldIn(gomock.Any(), tx, "victim").Return(victim, nil),
					sessions.EXPECT().RevokeAllIn(gomock.Any(), tx, int64(7), "", true).Return(nil),
					store.EXPECT().EraseIn(gomock.Any(), tx, victim).Return(domain.ErasedAccount{UserID: 7, Username: "victim", Articles: 2}, nil),
				)
			},
			check: func(t *testing.T, gone domain.ErasedAccount, err error) {
				if err != nil || gone.UserID != 7 || gone.Articles != 2 {
					t.Fatalf("Delete = %+v, %v", gone, err)
				}
			},
		},
		{
			name: "failing to end the sessions deletes nothing", username: "victim",
			buildStubs: func(store *mocks.MockAccountStore, sessions *mocks.MockSessionEnder) {
				store.EXPECT().HoldIn(gomock.Any(), tx, "victim").Return(victim, nil)
				sessions.EXPECT().RevokeAllIn(gomock.Any(), gomock.Any(), int64(7), "", true).Return(errStorage)
				store.EXPECT().EraseIn(gomock.Any(), gomock.Any(), gomock.Any()).Times(0) // the unit of work rolls back
			},
			check: func(t *testing.T, _ domain.ErasedAccount, err error) { requireErrorIs(t, err, errStorage) },
		},
		{
			name: "an unknown user is not found", username: "nobody",
			buildStubs: func(store *mocks.MockAccountStore, sessions *mocks.MockSessionEnder) {
				store.EXPECT().HoldIn(gomock.Any(), gomock.Any(), "nobody").Return(domain.User{}, domain.ErrNotFound)
				store.EXPECT().EraseIn(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
				sessions.EXPECT().RevokeAllIn(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			},
			check: func(t *testing.T, _ domain.ErasedAccount, err error) { requireErrorIs(t, err, domain.ErrNotFound) },
		},
		{
			name: "a blank username never reaches storage", username: "  ",
			buildStubs: func(store *mocks.MockAccountStore, sessions *mocks.MockSessionEnder) {
				store.EXPECT().HoldIn(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
				store.EXPECT().EraseIn(gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
				sessions.EXPECT().RevokeAllIn(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Times(0)
			},
			check: func(t *testing.T, _ domain.ErasedAccount, err error) {
				requireValidation(t, err, map[string][]string{"username": {"can't be blank"}})
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctrl := gomock.NewController(t)
			store, sessions := mocks.NewMockAccountStore(ctrl), mocks.NewMockSessionEnder(ctrl)
			tc.buildStubs(store, sessions)
			gone, err := service.NewAccountDeletion(txUnitOfWork{tx}, store, sessions).Delete(context.Background(), tc.username)
			tc.check(t, gone, err)
		})
	}
}
