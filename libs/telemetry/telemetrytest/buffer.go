// Package telemetrytest helps tests read what a service logs.
package telemetrytest

import (
	"bytes"
	"sync"
)

// Buffer collects log lines written from any goroutine (a server's, a relay's).
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String is everything written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
