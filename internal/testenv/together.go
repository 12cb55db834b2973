package testenv

import "sync"

// Together runs fn(0) … fn(n-1) on n goroutines that all start before any of them is let go, and
// returns when every one has returned: the widest overlap a test of a race can ask for.
func Together(n int, fn func(i int)) {
	var ready, done sync.WaitGroup
	start := make(chan struct{})
	ready.Add(n)
	for i := range n {
		done.Go(func() {
			ready.Done()
			<-start
			fn(i)
		})
	}
	ready.Wait()
	close(start)
	done.Wait()
}
