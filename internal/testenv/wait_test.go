package testenv

import (
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fatalTB records the first Fatalf and ends the goroutine as testing.T does.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Helper() {}

func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// failure runs fn against a fatalTB in its own goroutine and returns the Fatalf message ("" if fn
// returned normally).
func failure(fn func(tb testing.TB)) string {
	f := &fatalTB{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(f)
	}()
	<-done
	return f.msg
}

func TestWaitUntil_ReturnsOnceTheConditionHolds(t *testing.T) {
	t.Parallel()
	var polls atomic.Int64
	WaitUntil(t, "the third poll", func() bool { return polls.Add(1) == 3 })
	if got := polls.Load(); got != 3 {
		t.Errorf("cond polled %d times, want 3", got)
	}
}

func TestWaitUntil_FailsWithWhatAfterTheBound(t *testing.T) {
	t.Parallel()
	start := time.Now()
	msg := failure(func(tb testing.TB) {
		WaitUntil(tb, "pigs fly", func() bool { return false }, 20*time.Millisecond)
	})
	if want := "gave up after 20ms waiting until pigs fly"; msg != want {
		t.Errorf("failure = %q, want %q", msg, want)
	}
	if waited := time.Since(start); waited < 20*time.Millisecond {
		t.Errorf("gave up after %v, before the 20ms bound", waited)
	}
}

func TestWaitUntil_DefaultBound(t *testing.T) {
	t.Parallel()
	if got := boundOf(nil); got != DefaultWait {
		t.Errorf("bound without one given = %v, want DefaultWait (%v)", got, DefaultWait)
	}
	defer func() {
		if recover() == nil {
			t.Error("two bounds were accepted")
		}
	}()
	boundOf([]time.Duration{time.Second, time.Minute})
}

func TestRecv_ReturnsTheValue(t *testing.T) {
	t.Parallel()
	ch := make(chan int, 1)
	ch <- 42
	if got := Recv(t, ch, "the answer"); got != 42 {
		t.Errorf("Recv = %d, want 42", got)
	}
}

func TestRecv_FailsWithWhatAfterTheBound(t *testing.T) {
	t.Parallel()
	msg := failure(func(tb testing.TB) {
		Recv(tb, make(chan int), "a value nobody sends", 10*time.Millisecond)
	})
	if !strings.Contains(msg, "gave up after 10ms waiting for a value nobody sends") {
		t.Errorf("failure = %q", msg)
	}
}
