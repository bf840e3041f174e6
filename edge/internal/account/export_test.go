package account

import "time"

// SetClock makes s read the time from now (tests of what waits for time to pass).
func (s *Service) SetClock(now func() time.Time) { s.now = now }
