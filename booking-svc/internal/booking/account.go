package booking

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"strings"
	"time"

	"github.com/vros/vros/booking-svc/internal/arrival"
	"github.com/vros/vros/booking-svc/internal/card"
	"github.com/vros/vros/booking-svc/internal/guest"
	"github.com/vros/vros/booking-svc/internal/ledger"
)

// What booking-svc does for an account as a whole (docs/booking.md, "Export and erasure"):
// its usage figures, the export of its records, and the erasure of one guest's personal data.
// The erasure of the whole account is not the domain's: it deletes documents of every store
// (package erasure).

// Usage is what an account did over a period, counted from the stored records: bookings
// created and cancelled in it, the nights of those created, blocks created.
type Usage struct {
	BookingsCreated   int64
	BookingsCancelled int64
	Nights            int64
	BlocksCreated     int64
}

// Usage counts account's bookings and blocks over [from, to).
func (s *Service) Usage(ctx context.Context, account string, from, to time.Time) (Usage, error) {
	return s.records.Usage(ctx, account, from, to)
}

// Export is every record of an account.
type Export struct {
	Bookings []Booking // every status: failed attempts are kept for a while too
	Blocks   []Block   // deleted ones too
	Users    []guest.User
}

// Export reads every record of account.
func (s *Service) Export(ctx context.Context, account string) (Export, error) {
	var e Export
	var err error
	if e.Bookings, err = s.records.AccountBookings(ctx, account); err != nil {
		return e, err
	}
	if e.Blocks, err = s.records.AccountBlocks(ctx, account); err != nil {
		return e, err
	}
	e.Users, err = s.records.AccountUsers(ctx, account)
	return e, err
}

// What replaces an erased guest's personal data.
const (
	ErasedName  = "Erased"
	ErasedEmail = "erased@invalid"
)

// GuestErasure is what a guest's erasure changed: bookings (reserved or cancelled; the
// attempts that never became bookings are anonymised too, not counted) and users.
type GuestErasure struct {
	Bookings int
	Users    int
}

// Forgotten tells the copies kept outside the records what a guest's erasure changes: the
// bookings whose guest the person is (Own), those that list them in their arrival form only
// (Party), their email and the texts that name them (Names, for Scrub).
type Forgotten struct {
	Own, Party map[int64]bool
	Email      string
	Names      []string
}

// EraseGuest anonymises the person with email (any case) in every record of account:
// the guest of their bookings and of the bookings of the user with that email (name,
// contact data, notes, arrival details, the card holder's data sealed with a kept card,
// their name and email in payment descriptions), their entry in other bookings' arrival
// forms, and their user. Money, dates, nights, statuses and ids stay, and so do the nights
// the bookings hold.
//
// forget is called first, so that copies kept outside the records (the stored answers of
// idempotent requests) are anonymised before them: the bookings and then the user change
// last, so that a run stopped half-way finds them again when it is retried.
func (s *Service) EraseGuest(ctx context.Context, account, email string, forget func(ctx context.Context, f Forgotten) error) (GuestErasure, error) {
	var out GuestErasure
	if strings.EqualFold(strings.TrimSpace(email), ErasedEmail) {
		return out, nil // the placeholder of those erased before: nobody's address
	}
	user, err := s.users.UserByEmail(ctx, account, email)
	hasUser := err == nil
	if err != nil && !errors.Is(err, ErrNotFound) {
		return out, err
	}
	all, err := s.records.AccountBookings(ctx, account)
	if err != nil {
		return out, err
	}
	f := Forgotten{Own: map[int64]bool{}, Party: map[int64]bool{}, Email: email, Names: []string{email}}
	if hasUser {
		f.Names = append(f.Names, user.Email, user.Name)
	}
	var touched []Booking
	for _, b := range all {
		c := b
		c.Payments = maps.Clone(b.Payments) // a dry run: b stays as read
		own, changed := s.anonymise(&c, email, hasUser, int64(user.UserID), false)
		if !changed {
			continue
		}
		touched = append(touched, b)
		if own {
			f.Own[b.BookingID] = true
			f.Names = append(f.Names, personNames(b.Guest)...)
		} else {
			f.Party[b.BookingID] = true
		}
	}
	if len(touched) > 0 {
		if err := forget(ctx, f); err != nil {
			return out, err
		}
	}
	for _, b := range touched {
		anonymise := func() error {
			return s.records.Anonymise(ctx, account, b.BookingID, func(cur *Booking) error {
				s.anonymise(cur, email, hasUser, int64(user.UserID), true)
				return nil
			})
		}
		var err error
		if b.Status == StatusReserved || b.Status == StatusCancelled {
			err = s.holding(ctx, account, b.BookingID, anonymise)
		} else {
			// An attempt's creator holds its op until it decides it, and never rewrites
			// the guest: the attempt is rewritten in place.
			err = anonymise()
		}
		if errors.Is(err, ErrNotFound) {
			continue // purged meanwhile (a failed attempt past its retention)
		}
		if err != nil {
			return out, err
		}
		if b.Status == StatusReserved || b.Status == StatusCancelled {
			out.Bookings++
		}
	}
	if hasUser {
		if err := s.records.EraseUser(ctx, account, int64(user.UserID), email, guest.User{Name: ErasedName, Email: ErasedEmail}); err != nil {
			return out, err
		}
		out.Users = 1
	}
	return out, nil
}

// holdRetry is how often a guest's erasure asks again for a booking another change holds.
const holdRetry = 20 * time.Millisecond

// holding runs f while holding booking id's ledger op (claiming and releasing no night), as
// every change of a booking does: a change planned before f (an update, which writes the
// guest it planned with) finishes first — f waits for its op, up to the change deadline —
// and one begun later plans again from what f wrote. A process stopped inside leaves the op
// to the janitor, which has no night to release and removes it.
func (s *Service) holding(ctx context.Context, account string, id int64, f func() error) error {
	ctx, cancel := context.WithTimeout(ctx, s.Deadline)
	defer cancel()
	owner := bookingOwner(id)
	for {
		err := s.ledger.Begin(ctx, ledger.Op{Owner: owner, Account: account})
		if err == nil {
			break
		}
		if !errors.Is(err, ledger.ErrBusy) {
			return err
		}
		select {
		case <-ctx.Done():
			return ErrBusy
		case <-time.After(holdRetry):
		}
	}
	err := f()
	// Not ended (the store failed): the janitor ends it after the lease.
	_ = s.ledger.End(context.WithoutCancel(ctx), account, owner)
	return err
}

// anonymise erases the person with email from b (the booking's guest when the email or the
// user is theirs, else only their entry in its arrival form) and reports whether the guest
// is theirs and whether anything was changed. Sealed card data is rewritten only when seal
// is set (a dry run only asks).
func (s *Service) anonymise(b *Booking, email string, hasUser bool, userID int64, seal bool) (own, changed bool) {
	g := b.Guest
	own = strings.EqualFold(g.Email, email) && email != "" || hasUser && b.UserID == userID && b.UserID != 0
	if own {
		changed = g != Guest{FirstName: ErasedName, Email: ErasedEmail}
		b.Guest = Guest{FirstName: ErasedName, Email: ErasedEmail}
		if len(b.Payments) > 0 {
			scrub := Scrubber(append(personNames(g), email))
			for id, p := range b.Payments {
				if d := scrub(p.Description); d != p.Description {
					p.Description = d
					b.Payments[id] = p
					changed = true
				}
			}
		}
		if b.Arrival != nil {
			a := ErasedArrival(*b.Arrival)
			if !arrivalEqual(*b.Arrival, a) {
				b.Arrival = &a
				changed = true
			}
		}
		if b.Card != nil && seal {
			c, err := s.eraseCardHolder(b.AccountID, b.BookingID, *b.Card)
			if err != nil {
				// A card that cannot be opened can charge nothing either: it goes, holder and all.
				b.Card = nil
			} else {
				b.Card = &c
			}
		}
		// A kept card's holder cannot be read without opening it: it is sealed again.
		return true, changed || b.Card != nil
	}
	if b.Arrival == nil {
		return false, false
	}
	a := *b.Arrival
	a.Guests = append([]arrival.Guest(nil), a.Guests...)
	for i, ag := range a.Guests {
		if strings.EqualFold(ag.Email, email) {
			a.Guests[i] = erasedArrivalGuest(ag)
			changed = true
		}
	}
	if changed {
		b.Arrival = &a
	}
	return false, changed
}

// ErasedArrival is the arrival form of an erased guest: no travel details, and every party
// member anonymised (the guest gave them).
func ErasedArrival(in arrival.Arrival) arrival.Arrival {
	a := arrival.Arrival{IsCompleted: in.IsCompleted}
	for _, ag := range in.Guests {
		a.Guests = append(a.Guests, erasedArrivalGuest(ag))
	}
	return a
}

// erasedArrivalGuest is a party member with nothing personal left.
func erasedArrivalGuest(g arrival.Guest) arrival.Guest {
	out := arrival.Guest{Name: ErasedName}
	if g.Email != "" {
		out.Email = ErasedEmail
	}
	return out
}

func arrivalEqual(a, b arrival.Arrival) bool {
	if a.ArriveBy != b.ArriveBy || a.TransportNumber != b.TransportNumber || a.ExpectedTime != b.ExpectedTime || a.URL != b.URL ||
		a.IsCompleted != b.IsCompleted || len(a.Guests) != len(b.Guests) {
		return false
	}
	for i := range a.Guests {
		if a.Guests[i] != b.Guests[i] {
			return false
		}
	}
	return true
}

// eraseCardHolder seals c again without its holder's name and address: the number and the
// expiry stay, for the installments still due.
func (s *Service) eraseCardHolder(account string, bookingID int64, c SealedCard) (SealedCard, error) {
	ctx := cardContext(account, bookingID)
	plain, err := s.box.Open(c.Sealed, ctx)
	if err != nil {
		return c, fmt.Errorf("open card: %w", err)
	}
	var st card.Stored
	if err := json.Unmarshal([]byte(plain), &st); err != nil {
		return c, fmt.Errorf("read card: %w", err)
	}
	st.NameOnCard, st.FirstName, st.LastName, st.Phone = ErasedName, "", "", ""
	st.Address, st.City, st.State, st.PostCode, st.Country = "", "", "", "", ""
	raw, err := json.Marshal(st)
	if err != nil {
		return c, fmt.Errorf("seal card: %w", err)
	}
	c.Sealed = s.box.Seal(string(raw), ctx)
	return c, nil
}

// personNames are the texts that name the guest: the email, the full name, each name.
func personNames(g Guest) []string {
	return []string{g.Email, strings.TrimSpace(g.FirstName + " " + g.LastName), g.FirstName, g.LastName}
}

// Scrub replaces every whole-word occurrence of names in text (any case) with ErasedName.
func Scrub(text string, names []string) string { return Scrubber(names)(text) }

// Scrubber returns Scrub over names with its patterns compiled once, for the many texts of
// one erasure. A name given again is matched once: its first pass left nothing of it.
func Scrubber(names []string) func(text string) string {
	var res []*regexp.Regexp
	seen := map[string]bool{}
	for _, n := range names {
		n = strings.TrimSpace(n)
		if len([]rune(n)) < 2 || strings.EqualFold(n, ErasedName) || strings.EqualFold(n, ErasedEmail) || seen[n] {
			continue
		}
		seen[n] = true
		res = append(res, regexp.MustCompile(`(?i)(^|[^\pL\pN@._-])`+regexp.QuoteMeta(n)+`($|[^\pL\pN@_-])`))
	}
	return func(text string) string {
		for _, re := range res {
			// Twice: two occurrences side by side share the character between them.
			for range 2 {
				text = re.ReplaceAllString(text, "${1}"+ErasedName+"${2}")
			}
		}
		return text
	}
}
