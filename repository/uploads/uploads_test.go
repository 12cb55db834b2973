package uploads_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/repository/pg"
	"github.com/inkwell-dev/inkwell/repository/uploads"
	"github.com/inkwell-dev/inkwell/service"
)

// These tests run against the real PostgreSQL (TEST_DATABASE_URL), a database per test.

type env struct {
	db    *testenv.DB
	store *uploads.Store
	uow   *pg.UnitOfWork
}

func setup(t *testing.T) env {
	t.Helper()
	db := testenv.NewDB(t)
	return env{db: db, store: uploads.NewStore(db.Pool, dao.New()), uow: pg.NewUnitOfWork(db.Pool)}
}

func (e env) user(t *testing.T, name string) int64 {
	t.Helper()
	var id int64
	err := e.db.Pool.QueryRow(t.Context(),
		`INSERT INTO users (email, username, password_hash) VALUES ($1 || '@example.com', $1, 'x') RETURNING id`, name).Scan(&id)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func image(userID int64, sum string, bytes int64) domain.Upload {
	return domain.Upload{UserID: userID, Key: sum + ".png", ContentType: "image/png", Width: 64, Height: 48, Bytes: bytes, SHA256: sum,
		Variants: map[string]domain.UploadVariant{domain.VariantThumb: {Key: sum + "t.png", Width: 16, Height: 12, Bytes: 10}}}
}

func (e env) insert(t *testing.T, u domain.Upload) domain.Upload {
	t.Helper()
	err := e.uow.InTx(t.Context(), func(tx service.Tx) error {
		if _, err := e.store.LockUserIn(t.Context(), tx, u.UserID); err != nil {
			return err
		}
		var err error
		u, err = e.store.InsertIn(t.Context(), tx, u)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func (e env) delete(ctx context.Context, userID, id int64) error {
	return e.uow.InTx(ctx, func(tx service.Tx) error {
		_, err := e.store.DeleteIn(ctx, tx, userID, id)
		return err
	})
}

// sweep runs the orphan pass with no grace and returns the keys it removed.
func (e env) sweep(t *testing.T) []string {
	t.Helper()
	var removed []string
	n, err := e.store.SweepOrphans(t.Context(), 0, 100, func(_ context.Context, key string) error {
		removed = append(removed, key)
		return nil
	})
	if err != nil || n != len(removed) {
		t.Fatalf("sweep: %d, %v (removed %v)", n, err, removed)
	}
	slices.Sort(removed)
	return removed
}

func TestStore_InsertListDeleteAndTheOrphanPass(t *testing.T) {
	e := setup(t)
	ctx := t.Context()
	alice, bob := e.user(t, "alice"), e.user(t, "bob")
	sum := strings.Repeat("a", 64)

	// The same image twice: two rows, one key.
	first := e.insert(t, image(alice, sum, 1000))
	second := e.insert(t, image(alice, sum, 1000))
	other := e.insert(t, image(alice, strings.Repeat("b", 64), 500))
	if first.ID == 0 || second.ID == first.ID || first.CreatedAt.IsZero() {
		t.Fatalf("inserted %+v, %+v", first, second)
	}
	usage, err := e.store.Usage(ctx, alice)
	if err != nil || usage.Total != 2500 || usage.Day != 2500 || usage.DayFreesAt.IsZero() {
		t.Fatalf("usage %+v, %v", usage, err)
	}

	// Newest first, paged by cursor.
	page, err := e.store.List(ctx, alice, nil, 2)
	if err != nil || len(page) != 2 || page[0].ID != other.ID || page[1].ID != second.ID {
		t.Fatalf("first page %+v, %v", page, err)
	}
	if page[0].Variants[domain.VariantThumb].Key != strings.Repeat("b", 64)+"t.png" {
		t.Fatalf("variants read back as %+v", page[0].Variants)
	}
	rest, err := e.store.List(ctx, alice, &domain.Cursor{CreatedAt: page[1].CreatedAt, ID: page[1].ID}, 2)
	if err != nil || len(rest) != 1 || rest[0].ID != first.ID {
		t.Fatalf("second page %+v, %v", rest, err)
	}

	// Another user's upload is not found, and nothing moves.
	if err := e.delete(ctx, bob, first.ID); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("bob deleting alice's upload: %v", err)
	}

	// One of the two rows of the key goes: the key is orphaned but still used, so nothing is removed.
	if err := e.delete(ctx, alice, first.ID); err != nil {
		t.Fatal(err)
	}
	if usage, _ := e.store.Usage(ctx, alice); usage.Total != 1500 {
		t.Fatalf("total after a delete: %+v", usage)
	}
	if removed := e.sweep(t); len(removed) != 0 {
		t.Fatalf("removed %v while an upload still uses the key", removed)
	}
	// The last row goes: its original and its variant are removed, once.
	if err := e.delete(ctx, alice, second.ID); err != nil {
		t.Fatal(err)
	}
	if removed := e.sweep(t); !slices.Equal(removed, []string{sum + ".png", sum + "t.png"}) {
		t.Fatalf("removed %v", removed)
	}
	if removed := e.sweep(t); len(removed) != 0 {
		t.Fatalf("a second pass removed %v", removed)
	}
	if usage, _ := e.store.Usage(ctx, alice); usage.Total != 500 {
		t.Fatalf("total at the end: %+v", usage)
	}

	// A small image's derived size may be its original, byte for byte: one key twice.
	tiny := image(alice, strings.Repeat("d", 64), 50)
	tiny.Variants[domain.VariantAvatar] = domain.UploadVariant{Key: tiny.Key, Width: 64, Height: 48, Bytes: 50}
	tiny = e.insert(t, tiny)
	if err := e.delete(ctx, alice, tiny.ID); err != nil {
		t.Fatalf("deleting an upload whose variant is its original: %v", err)
	}
}

// An upload of a key the orphan pass holds waits for the pass: the object the pass removes is put
// again by the upload after its own commit (the use case puts after the insert commits).
func TestStore_UploadWaitsForTheOrphanPassHoldingItsKey(t *testing.T) {
	e := setup(t)
	ctx := t.Context()
	alice := e.user(t, "alice")
	sum := strings.Repeat("c", 64)
	u := e.insert(t, image(alice, sum, 100))
	if err := e.delete(ctx, alice, u.ID); err != nil {
		t.Fatal(err)
	}

	removing := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	swept := make(chan error, 1)
	go func() {
		_, err := e.store.SweepOrphans(ctx, 0, 100, func(context.Context, string) error {
			once.Do(func() { close(removing) })
			<-release
			return nil
		})
		swept <- err
	}()
	testenv.Recv(t, removing, "the pass removing an object")

	inserted := make(chan error, 1)
	go func() {
		err := e.uow.InTx(ctx, func(tx service.Tx) error {
			_, err := e.store.InsertIn(ctx, tx, image(alice, sum, 100))
			return err
		})
		inserted <- err
	}()
	// The insert waits on the pass's row lock of the orphan.
	testenv.WaitUntil(t, "the upload waiting for the pass", func() bool {
		var n int
		_ = e.db.Pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&n)
		return n == 1
	})
	select {
	case err := <-inserted:
		t.Fatalf("the upload committed while the pass held its key: %v", err)
	default:
	}
	close(release)
	if err := testenv.Recv(t, swept, "the pass"); err != nil {
		t.Fatal(err)
	}
	if err := testenv.Recv(t, inserted, "the upload"); err != nil {
		t.Fatal(err)
	}
	// The key is in use and no longer an orphan: a later pass leaves it.
	if removed := e.sweep(t); len(removed) != 0 {
		t.Fatalf("removed %v", removed)
	}
}

// The retention statement deletes only uploads nothing refers to whose last reference (or upload)
// is past the age, moves the owners' totals and orphans the keys for the pass.
func TestRetention_UnreferencedUploadsGoWithTheirTotalsAndKeys(t *testing.T) {
	e := setup(t)
	ctx := t.Context()
	alice := e.user(t, "alice")
	old := e.insert(t, image(alice, strings.Repeat("e", 64), 100))
	referenced := e.insert(t, image(alice, strings.Repeat("f", 64), 200))
	fresh := e.insert(t, image(alice, strings.Repeat("g", 64), 400))
	for _, s := range []string{
		`UPDATE uploads SET created_at = now() - interval '8 days' WHERE id IN ($1, $2)`,
		`INSERT INTO upload_references (owner_kind, owner_id, upload_id) SELECT 'avatar', $1::bigint * 0 + 1, $2`,
	} {
		if _, err := e.db.Pool.Exec(ctx, s, old.ID, referenced.ID); err != nil {
			t.Fatal(err)
		}
	}
	n, err := dao.New().UploadPruneUnreferencedBatch(ctx, e.db.Pool, dao.UploadPruneUnreferencedBatchParams{KeepSeconds: 7 * 86400, Lim: 100})
	if err != nil || n != 1 {
		t.Fatalf("pruned %d, %v", n, err)
	}
	if _, err := e.store.Get(ctx, old.ID); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("the unreferenced old upload: %v", err)
	}
	for _, id := range []int64{referenced.ID, fresh.ID} {
		if _, err := e.store.Get(ctx, id); err != nil {
			t.Fatalf("upload %d: %v", id, err)
		}
	}
	if usage, _ := e.store.Usage(ctx, alice); usage.Total != 600 {
		t.Fatalf("total %+v, want 600", usage)
	}
	if removed := e.sweep(t); !slices.Equal(removed, []string{old.Key, strings.Repeat("e", 64) + "t.png"}) {
		t.Fatalf("removed %v", removed)
	}
}
