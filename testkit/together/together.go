// Package together starts goroutines at one moment: the tests' way to make concurrent
// requests really concurrent (a race between two writers needs both to be ready before
// either starts).
package together

import "sync"

// Run calls f(0) … f(n-1), each in its own goroutine. No call starts before every goroutine
// exists; Run returns when every call has returned.
func Run(n int, f func(i int)) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			f(i)
		})
	}
	close(start)
	wg.Wait()
}
