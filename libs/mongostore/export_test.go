package mongostore

// SetInserterHook has i call h(documents, bytes) before each batch it writes, on the
// goroutine that writes it: a test holds a batch in flight by blocking in h.
func SetInserterHook(i *Inserter, h func(docs, bytes int)) { i.hook = h }

// InserterQueued is how many documents wait for i's next batch.
func InserterQueued(i *Inserter) int {
	i.mu.Lock()
	defer i.mu.Unlock()
	return len(i.queue)
}

// SequenceSpare reports whether s holds a block reserved ahead.
func SequenceSpare(s *Sequence) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.spare != 0
}
