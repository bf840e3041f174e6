package booking

import "context"

// available refuses a stay of account with a night held in the ledger — by a booking, a
// block, an imported feed's block or a change still in progress — as create's claim would
// refuse it: UnavailableError naming the first such night. getinfo (Quote) calls it, so that
// a quote never prices nights that cannot be booked (docs/booking.md, "The getinfo answer").
// It reads the ledger without holding anything: a create may still take the nights between
// a quote and the booking, which create then refuses.
func (s *Service) available(ctx context.Context, account string, st Stay) error {
	dates := nights(st.Checkin, st.Checkout)
	if len(dates) == 0 {
		return nil
	}
	held, err := s.ledger.Owners(ctx, account, st.PropertyID, dates[0], dates[len(dates)-1])
	if err != nil {
		return err
	}
	for _, d := range dates {
		if held[d] != "" {
			return &UnavailableError{Date: d}
		}
	}
	return nil
}
