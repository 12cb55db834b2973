package testenv

import (
	"testing"
	"time"
)

// A connection through the proxy holds a slot while it is open: with one slot, a second client
// gets through only once the first has closed.
func TestBudgetProxy(t *testing.T) {
	t.Parallel()
	db := NewDB(t)
	one := &connBudget{dir: t.TempDir(), slots: 1}
	url := budgetProxy(t, db.URL, func() (*connBudget, error) { return one, nil })

	first, err := Connect(t.Context(), url) // its own slot of the shared budget too, as every test connection
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := first.QueryRow(t.Context(), "SELECT 1").Scan(&n); err != nil || n != 1 {
		t.Fatalf("a query through the proxy: %d, %v", n, err)
	}
	second := make(chan error, 1)
	go func() {
		c, err := Connect(t.Context(), url)
		if err == nil {
			err = c.Close(t.Context())
		}
		second <- err
	}()
	select {
	case err := <-second:
		t.Fatalf("a second connection got through a budget of one (err %v)", err)
	case <-time.After(200 * time.Millisecond): // proves nothing by itself; the close below must let it through
	}
	if err := first.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := <-second; err != nil {
		t.Fatalf("after the first closed: %v", err)
	}
}
