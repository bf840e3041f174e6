package store

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/vros/vros/booking-svc/internal/arrival"
	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/libs/pricing"
	"github.com/vros/vros/testkit/together"
)

// The contract of booking.Repository, on the store the package's TestMain runs.

// fullBooking is a booking with every kind of field set.
func fullBooking(s *Store, account string, id int64) booking.Booking {
	now := s.Now()
	return booking.Booking{AccountID: account, BookingID: id, PropertyID: 17, PropertyName: "Villa Aurora", UserID: 77, BrandID: 2,
		LeadSourceID: 3, OwnerBook: 1,
		Guest: booking.Guest{FirstName: "Ada", LastName: "Lovelace", Email: "ada@example.com", Birthday: "1815-12-10", Phone1: "+44 20 1",
			Country: "GB", PhoneCountryCode: "44", City: "London", Postcode: "SW1"},
		Checkin: "2027-03-08", Checkout: "2027-03-10", CheckinTime: "15:00", CheckoutTime: "11:00",
		Nights: []string{"2027-03-08", "2027-03-09"}, Adults: 2, Children: 1,
		Quote: booking.Quote{Currency: "EUR", TotalRent: "200.00", TaxTotal: "20.00", ServiceTotal: "0.00", DiscountTotal: "0.00",
			GrandTotal: "220.00", DamageDeposit: "100.00", MinNightly: "100.00", MaxNightly: "100.00",
			Nightly: map[string]string{"2027-03-08": "100.00", "2027-03-09": "100.00"}, MinimumStay: 2,
			Taxes: []booking.Amount{{Name: "VAT", Amount: "20.00"}}, Services: []booking.ServiceAmount{}, Discounts: []booking.Discount{},
			Schedule: []booking.Installment{{Label: "deposit", Due: "2027-01-01", Amount: "110.00"}}},
		ServiceLines: []pricing.ServiceLine{}, CSADamage: 1, PromotionCode: "SUMMER",
		Payments: map[int64]booking.Payment{1: {PaymentID: 1, Amount: "110.00", Currency: "EUR", Description: "deposit", Time: now,
			Method: booking.MethodManual, CreatedAt: now}},
		PaymentAuto: true, Sandbox: true,
		Card:      &booking.SealedCard{Sealed: "sealed", Masked: "•••• 4242", Brand: "visa", Expiry: "12/29"},
		Arrival:   &arrival.Arrival{ArriveBy: "plane", ExpectedTime: "14:00", Guests: []arrival.Guest{{Name: "Ada", Surname: "Lovelace"}}},
		CreatedAt: now, UpdatedAt: now}
}

// pending stores fullBooking as a pending attempt.
func pending(t *testing.T, s *Store, account string) booking.Booking {
	t.Helper()
	id, err := s.NextBookingID(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b := fullBooking(s, account, id)
	if err := s.InsertPending(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	b.Status = booking.StatusPending
	return b
}

// differ names the fields of two bookings that differ.
func differ(got, want booking.Booking) []string {
	var out []string
	g, w := reflect.ValueOf(got), reflect.ValueOf(want)
	for i := range g.NumField() {
		if !reflect.DeepEqual(g.Field(i).Interface(), w.Field(i).Interface()) {
			out = append(out, fmt.Sprintf("%s: %+v, want %+v", g.Type().Field(i).Name, g.Field(i).Interface(), w.Field(i).Interface()))
		}
	}
	return out
}

// purgeAfter removes the failed attempts a test marked, so that other tests count only theirs.
func purgeAfter(t *testing.T, s *Store) {
	t.Cleanup(func() {
		if _, err := s.PurgeFailed(context.Background(), s.Now().Add(24*time.Hour)); err != nil {
			t.Error(err)
		}
	})
}

func read(t *testing.T, s booking.Repository, account string, id int64) booking.Booking {
	t.Helper()
	b, err := s.Booking(context.Background(), account, id)
	if err != nil {
		t.Fatalf("booking %d of %s: %v", id, account, err)
	}
	return b
}

// TestBookingInAnyStatus: a booking reads back as written, whatever its status.
func TestBookingInAnyStatus(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	purgeAfter(t, s)
	acc := fresh("ra")
	cancelledAt := s.Now()
	for _, tc := range []struct {
		status string
		to     func(id int64) error
	}{
		{booking.StatusPending, func(int64) error { return nil }},
		{booking.StatusReserved, func(id int64) error {
			_, err := s.Update(ctx, acc, id, booking.Reserved, setStatus(booking.StatusReserved))
			return err
		}},
		{booking.StatusCancelled, func(id int64) error {
			_, err := s.Update(ctx, acc, id, booking.Cancelled, func(b *booking.Booking) error {
				b.Status, b.CancelledAt = booking.StatusCancelled, &cancelledAt
				return nil
			})
			return err
		}},
		{booking.StatusFailed, func(id int64) error { return s.MarkFailed(ctx, acc, id) }},
	} {
		t.Run(tc.status, func(t *testing.T) {
			want := pending(t, s, acc)
			got := read(t, s, acc, want.BookingID)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("pending booking read back: %v", differ(got, want))
			}
			if err := tc.to(want.BookingID); err != nil {
				t.Fatal(err)
			}
			got = read(t, s, acc, want.BookingID)
			if got.Status != tc.status {
				t.Fatalf("status %q, want %q", got.Status, tc.status)
			}
			// What the change did not touch is as written.
			got.Status, got.Version, got.UpdatedAt, got.CancelledAt = want.Status, want.Version, want.UpdatedAt, want.CancelledAt
			if tc.status == booking.StatusFailed {
				got.Card = want.Card // removed at once; TestFailedAttempts
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s booking read back: %v", tc.status, differ(got, want))
			}
		})
	}
}

// TestUpdateWritesOnlyItsChange: Update writes what apply changed and nothing else (a field
// and a payment written meanwhile by another change survive), bumps the version by one and
// returns what it stored. A field is a top-level field of the document (the guest, the
// quote, the arrival are written whole), or one payment.
func TestUpdateWritesOnlyItsChange(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	acc := fresh("ru")
	later := s.Now().Add(time.Hour)
	for _, tc := range []struct {
		name  string
		apply func(b *booking.Booking)
		check func(b booking.Booking) bool
	}{
		{"set a field", func(b *booking.Booking) { b.Guest.Phone1 = "+1 555" }, func(b booking.Booking) bool { return b.Guest.Phone1 == "+1 555" }},
		{"clear a field", func(b *booking.Booking) { b.PromotionCode = "" }, func(b booking.Booking) bool { return b.PromotionCode == "" }},
		{"replace a slice", func(b *booking.Booking) { b.Nights = []string{"2027-03-08"}; b.Checkout = "2027-03-09" },
			func(b booking.Booking) bool {
				return reflect.DeepEqual(b.Nights, []string{"2027-03-08"}) && b.Checkout == "2027-03-09"
			}},
		{"add a payment", func(b *booking.Booking) {
			b.Payments[2] = booking.Payment{PaymentID: 2, Amount: "5.00", Currency: "EUR", Method: booking.MethodManual, Time: later, CreatedAt: later}
		}, func(b booking.Booking) bool {
			return b.Payments[2].Amount == "5.00" && b.Payments[1].Amount == "110.00"
		}},
		{"change a payment", func(b *booking.Booking) { p := b.Payments[1]; p.Amount = "99.00"; b.Payments[1] = p },
			func(b booking.Booking) bool { return b.Payments[1].Amount == "99.00" }},
		{"remove a payment", func(b *booking.Booking) { delete(b.Payments, 1) }, func(b booking.Booking) bool { _, ok := b.Payments[1]; return !ok }},
		{"remove the card", func(b *booking.Booking) { b.Card = nil }, func(b booking.Booking) bool { return b.Card == nil }},
		{"complete the arrival", func(b *booking.Booking) { b.Arrival.IsCompleted = true }, func(b booking.Booking) bool { return b.Arrival.IsCompleted }},
		{"nothing", func(*booking.Booking) {}, func(booking.Booking) bool { return true }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := pending(t, s, acc)
			got, err := s.Update(ctx, acc, before.BookingID, booking.Updated, func(b *booking.Booking) error {
				if d := differ(*b, before); d != nil {
					t.Errorf("apply saw another booking: %v", d)
				}
				// Another change (of another replica: the store's lock does not hold it back)
				// lands between this change's read and its write.
				other := PaymentRec{PaymentID: 77, Amount: "1.00", Currency: "EUR", Method: booking.MethodManual, Time: later, CreatedAt: later}
				if _, err := db.Collection(collBookings).UpdateOne(ctx, bson.D{{Key: "_id", Value: docID(acc, b.BookingID)}},
					bson.D{{Key: "$set", Value: bson.D{{Key: "autopay_error", Value: "meanwhile"}, {Key: "payments.77", Value: other}}}}); err != nil {
					return err
				}
				tc.apply(b)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			stored := read(t, s, acc, before.BookingID)
			if !reflect.DeepEqual(got, stored) {
				t.Fatalf("Update returned another booking than it stored: %v", differ(got, stored))
			}
			if !tc.check(stored) {
				t.Fatalf("the change did not land: %+v", stored)
			}
			if stored.AutopayError != "meanwhile" || stored.Payments[77].Amount != "1.00" {
				t.Fatalf("the other change was lost: autopay error %q, payments %+v", stored.AutopayError, stored.Payments)
			}
			if stored.Version != before.Version+1 || stored.UpdatedAt.Before(before.UpdatedAt) {
				t.Fatalf("version %d (was %d), updated %v (was %v)", stored.Version, before.Version, stored.UpdatedAt, before.UpdatedAt)
			}
		})
	}
}

// TestUpdateRefused: an error of apply is Update's, and the booking stays as it was even
// though apply changed it before failing.
func TestUpdateRefused(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	acc := fresh("rr")
	before := book(t, s, acc, 1, "2027-03-01", "2027-03-02", "Hopper")
	refused := errors.New("refused")
	_, err := s.Update(ctx, acc, before.BookingID, booking.Cancelled, func(b *booking.Booking) error {
		b.Status, b.Guest.LastName, b.Nights = booking.StatusCancelled, "Changed", nil
		delete(b.Payments, 1)
		return refused
	})
	if !errors.Is(err, refused) {
		t.Fatalf("Update: %v, want the apply's error", err)
	}
	if after := read(t, s, acc, before.BookingID); !reflect.DeepEqual(after, before) {
		t.Fatalf("a refused change changed the booking: %v", differ(after, before))
	}
	if got, n, err := s.List(ctx, acc, booking.ListFilter{Keyword: "changed"}); err != nil || n != 0 {
		t.Fatalf("a refused change is listed: %v %d %v", ids(got), n, err)
	}
}

// TestConcurrentUpdatesAllLand: ten changes of one booking at once, each of another field or
// payment: every one lands, and each got its own version, contiguous from the booking's.
func TestConcurrentUpdatesAllLand(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	acc := fresh("rc")
	b := pending(t, s, acc)
	fields := []func(*booking.Booking){
		func(b *booking.Booking) { b.Guest.Phone1 = "changed" },
		func(b *booking.Booking) { b.Guest.Phone2 = "changed" },
		func(b *booking.Booking) { b.Guest.City = "changed" },
		func(b *booking.Booking) { b.Guest.Other = "changed" },
		func(b *booking.Booking) { b.AutopayError = "changed" },
	}
	const n = 10
	versions := make([]int64, n)
	together.Run(n, func(i int) {
		out, err := s.Update(ctx, acc, b.BookingID, booking.Updated, func(b *booking.Booking) error {
			if i < len(fields) {
				fields[i](b)
				return nil
			}
			id := int64(100 + i)
			b.Payments[id] = booking.Payment{PaymentID: id, Amount: fmt.Sprintf("%d.00", i), Currency: "EUR", Method: booking.MethodManual}
			return nil
		})
		if err != nil {
			t.Error(err)
		}
		versions[i] = out.Version
	})
	got := read(t, s, acc, b.BookingID)
	g := got.Guest
	if g.Phone1 != "changed" || g.Phone2 != "changed" || g.City != "changed" || g.Other != "changed" || got.AutopayError != "changed" {
		t.Errorf("a field change was lost: %+v, autopay error %q", g, got.AutopayError)
	}
	for i := len(fields); i < n; i++ {
		if p, ok := got.Payments[int64(100+i)]; !ok || p.Amount != fmt.Sprintf("%d.00", i) {
			t.Errorf("payment %d was lost: %+v", 100+i, got.Payments)
		}
	}
	if len(got.Payments) != 1+n-len(fields) {
		t.Errorf("%d payments, want %d", len(got.Payments), 1+n-len(fields))
	}
	sort.Slice(versions, func(i, j int) bool { return versions[i] < versions[j] })
	for i, v := range versions {
		if v != b.Version+int64(i)+1 {
			t.Fatalf("versions %v after %d: not contiguous", versions, b.Version)
		}
	}
	if got.Version != b.Version+n {
		t.Fatalf("version %d, want %d", got.Version, b.Version+n)
	}
}

// TestPurgeFailed: only failed attempts marked before the time are purged; what is noted but
// still pending, and bookings, stay.
func TestPurgeFailed(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	purgeAfter(t, s)
	acc := fresh("rp")
	// Purge what earlier tests left first.
	if _, err := s.PurgeFailed(ctx, s.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	early, late, open := pending(t, s, acc), pending(t, s, acc), pending(t, s, acc)
	reserved := book(t, s, acc, 1, "2027-05-01", "2027-05-02", "Kept")
	clock := s.now
	defer func() { s.now = clock }()
	mark := func(id int64, at time.Time) {
		t.Helper()
		s.now = func() time.Time { return at }
		if err := s.MarkFailed(ctx, acc, id); err != nil {
			t.Fatal(err)
		}
	}
	t0 := clock()
	mark(early.BookingID, t0.Add(-2*time.Hour))
	mark(late.BookingID, t0)
	s.now = clock
	// Noted but not marked yet (its marker stopped in between).
	if _, err := db.Collection(collFailed).InsertOne(ctx, bson.D{{Key: "_id", Value: docID(acc, open.BookingID)}, {Key: "account_id", Value: acc},
		{Key: "booking_id", Value: open.BookingID}, {Key: "at", Value: t0.Add(-2 * time.Hour)}}); err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		before time.Time
		purged int
		gone   []int64
	}{
		{t0.Add(-3 * time.Hour), 0, nil},
		{t0.Add(-time.Hour), 1, []int64{early.BookingID}},
		{t0.Add(-time.Hour), 0, []int64{early.BookingID}},
		{t0.Add(time.Hour), 1, []int64{early.BookingID, late.BookingID}},
	} {
		n, err := s.PurgeFailed(ctx, step.before)
		if err != nil || n != step.purged {
			t.Fatalf("PurgeFailed(%v): %d, %v; want %d", step.before, n, err, step.purged)
		}
		gone := map[int64]bool{}
		for _, id := range step.gone {
			gone[id] = true
		}
		for _, id := range []int64{early.BookingID, late.BookingID, open.BookingID, reserved.BookingID} {
			_, err := s.Booking(ctx, acc, id)
			if gone[id] != errors.Is(err, booking.ErrNotFound) || (!gone[id] && err != nil) {
				t.Fatalf("after PurgeFailed(%v), booking %d: %v (want gone: %v)", step.before, id, err, gone[id])
			}
		}
	}
	if b := read(t, s, acc, open.BookingID); b.Status != booking.StatusPending {
		t.Fatalf("a pending attempt became %s", b.Status)
	}
}

// listed stores a reserved booking with the fields a list filters on.
func listed(t *testing.T, s *Store, account string, pid, user, brand int64, checkin, checkout, first, last, email string) int64 {
	t.Helper()
	ctx := context.Background()
	id, err := s.NextBookingID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b := booking.Booking{AccountID: account, BookingID: id, PropertyID: pid, UserID: user, BrandID: brand, Checkin: checkin, Checkout: checkout,
		Nights: []string{checkin}, Guest: booking.Guest{FirstName: first, LastName: last, Email: email}, CreatedAt: s.Now()}
	if err := s.InsertPending(ctx, b); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(ctx, account, id, booking.Reserved, setStatus(booking.StatusReserved)); err != nil {
		t.Fatal(err)
	}
	return id
}

// TestListFilters: List answers an account's reserved and cancelled bookings that match
// every filter given, newest first, paged, with how many match; never another account's,
// never an attempt.
func TestListFilters(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	purgeAfter(t, s)
	acc, other, empty := fresh("rl"), fresh("rl-other"), fresh("rl-empty")
	a1 := listed(t, s, acc, 1, 10, 1, "2027-07-01", "2027-07-04", "Ada", "Lovelace", "ada@example.com")
	a2 := listed(t, s, acc, 2, 11, 2, "2027-07-03", "2027-07-06", "Grace", "Hopper", "grace@navy.mil")
	a3 := listed(t, s, acc, 1, 10, 0, "2027-07-10", "2027-07-12", "Katherine", "Johnson", "kj@nasa.gov")
	a4 := listed(t, s, acc, 1, 12, 1, "2027-07-06", "2027-07-08", "Hedy", "Lamarr (née Kiesler)", "hedy@example.com")
	if _, err := s.Update(ctx, acc, a3, booking.Cancelled, setStatus(booking.StatusCancelled)); err != nil {
		t.Fatal(err)
	}
	// Attempts, never listed.
	failed := pending(t, s, acc)
	if err := s.MarkFailed(ctx, acc, failed.BookingID); err != nil {
		t.Fatal(err)
	}
	pending(t, s, acc)
	b1 := listed(t, s, other, 1, 10, 1, "2027-07-01", "2027-07-04", "Ada", "Lovelace", "ada@example.com")

	for _, tc := range []struct {
		name    string
		account string
		f       booking.ListFilter
		want    []int64
		total   int64
	}{
		{"all", acc, booking.ListFilter{}, []int64{a4, a3, a2, a1}, 4},
		{"first page", acc, booking.ListFilter{Limit: 2}, []int64{a4, a3}, 4},
		{"second page", acc, booking.ListFilter{Skip: 2, Limit: 2}, []int64{a2, a1}, 4},
		{"past the end", acc, booking.ListFilter{Skip: 4, Limit: 2}, []int64{}, 4},
		{"far past the end", acc, booking.ListFilter{Skip: 40}, []int64{}, 4},
		{"user", acc, booking.ListFilter{UserID: 10}, []int64{a3, a1}, 2},
		{"booking", acc, booking.ListFilter{BookingID: a2}, []int64{a2}, 1},
		{"property", acc, booking.ListFilter{PropertyID: 2}, []int64{a2}, 1},
		{"brand", acc, booking.ListFilter{BrandID: 1}, []int64{a4, a1}, 2},
		{"overlapping [from, to)", acc, booking.ListFilter{From: "2027-07-04", To: "2027-07-06"}, []int64{a2}, 1},
		{"from", acc, booking.ListFilter{From: "2027-07-04"}, []int64{a4, a3, a2}, 3},
		{"to", acc, booking.ListFilter{To: "2027-07-03"}, []int64{a1}, 1},
		{"keyword in a last name, any case", acc, booking.ListFilter{Keyword: "LOVE"}, []int64{a1}, 1},
		{"keyword in a first name", acc, booking.ListFilter{Keyword: "katherine"}, []int64{a3}, 1},
		{"keyword in an email", acc, booking.ListFilter{Keyword: "navy"}, []int64{a2}, 1},
		{"keyword is literal", acc, booking.ListFilter{Keyword: "(née"}, []int64{a4}, 1},
		{"keyword is not a pattern", acc, booking.ListFilter{Keyword: "c.@"}, []int64{}, 0},
		{"every filter", acc, booking.ListFilter{UserID: 10, PropertyID: 1, BrandID: 1, From: "2027-07-01", To: "2027-07-02", Keyword: "ada"}, []int64{a1}, 1},
		{"filters that exclude each other", acc, booking.ListFilter{UserID: 11, PropertyID: 1}, []int64{}, 0},
		{"another account's booking", acc, booking.ListFilter{BookingID: b1}, []int64{}, 0},
		{"the other account", other, booking.ListFilter{}, []int64{b1}, 1},
		{"the other account's filter", other, booking.ListFilter{UserID: 10, Keyword: "ada"}, []int64{b1}, 1},
		{"an account without bookings", empty, booking.ListFilter{}, []int64{}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, total, err := s.List(ctx, tc.account, tc.f)
			if err != nil {
				t.Fatal(err)
			}
			if total != tc.total || !reflect.DeepEqual(ids(got), tc.want) {
				t.Fatalf("List(%s, %+v): %v of %d, want %v of %d", tc.account, tc.f, ids(got), total, tc.want, tc.total)
			}
			for _, b := range got {
				if b.AccountID != tc.account {
					t.Fatalf("List(%s) answered a booking of %s", tc.account, b.AccountID)
				}
			}
		})
	}
}

// TestIDsUnique: booking and payment ids handed out at once (20 goroutines × 50) are all
// different, and a store started afterwards hands out new ones.
func TestIDsUnique(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		next func(*Store) (int64, error)
	}{
		{"booking", func(s *Store) (int64, error) { return s.NextBookingID(ctx) }},
		{"payment", func(s *Store) (int64, error) { return s.NextPaymentID(ctx) }},
		{"block", func(s *Store) (int64, error) { return s.NextBlockID(ctx) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			seen := uniqueIDs(t, func() (int64, error) { return tc.next(s) })
			var highest int64
			for id := range seen {
				highest = max(highest, id)
			}
			// A restart (a new store on the same database) never hands out an id again.
			id, err := tc.next(newStore(t))
			if err != nil || id <= highest {
				t.Fatalf("after a restart: %d, %v; the first store reached %d", id, err, highest)
			}
		})
	}
}

// uniqueIDs calls next 20 × 50 times at once and fails on a duplicate.
func uniqueIDs(t *testing.T, next func() (int64, error)) map[int64]bool {
	t.Helper()
	const goroutines, each = 20, 50
	got := make([][]int64, goroutines)
	together.Run(goroutines, func(g int) {
		for range each {
			id, err := next()
			if err != nil {
				t.Error(err)
				return
			}
			got[g] = append(got[g], id)
		}
	})
	seen := map[int64]bool{}
	for _, ids := range got {
		for _, id := range ids {
			if seen[id] || id <= 0 {
				t.Fatalf("id %d handed out twice (or not positive)", id)
			}
			seen[id] = true
		}
	}
	if len(seen) != goroutines*each {
		t.Fatalf("%d ids, want %d", len(seen), goroutines*each)
	}
	return seen
}

// TestPaymentIndex: a payment id leads to its booking in its account only, until unindexed.
func TestPaymentIndex(t *testing.T) {
	ctx := context.Background()
	var s booking.Repository = newStore(t)
	acc, other := fresh("ri"), fresh("ri-other")
	pid, err := s.NextPaymentID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PaymentBooking(ctx, acc, pid); !errors.Is(err, booking.ErrNotFound) {
		t.Fatalf("PaymentBooking before IndexPayment: %v, want ErrNotFound", err)
	}
	if err := s.IndexPayment(ctx, acc, pid, 41); err != nil {
		t.Fatal(err)
	}
	// The same payment id in another account is another payment.
	if err := s.IndexPayment(ctx, other, pid, 42); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		account string
		want    int64
	}{{acc, 41}, {other, 42}} {
		if got, err := s.PaymentBooking(ctx, c.account, pid); err != nil || got != c.want {
			t.Fatalf("PaymentBooking(%s, %d): %d, %v; want %d", c.account, pid, got, err, c.want)
		}
	}
	if err := s.IndexPayment(ctx, acc, pid, 43); err == nil {
		t.Fatal("a payment id indexed twice")
	}
	if got, err := s.PaymentBooking(ctx, acc, pid); err != nil || got != 41 {
		t.Fatalf("PaymentBooking after a second index: %d, %v; want 41", got, err)
	}
	if err := s.UnindexPayment(ctx, other, pid); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PaymentBooking(ctx, other, pid); !errors.Is(err, booking.ErrNotFound) {
		t.Fatalf("PaymentBooking after UnindexPayment: %v, want ErrNotFound", err)
	}
	if got, err := s.PaymentBooking(ctx, acc, pid); err != nil || got != 41 {
		t.Fatalf("another account's UnindexPayment removed this one's: %d, %v", got, err)
	}
	// Unindexing again (a retried removal) is not an error.
	if err := s.UnindexPayment(ctx, other, pid); err != nil {
		t.Fatalf("UnindexPayment again: %v", err)
	}
}

// TestBookingOfAnotherAccount: every call on a booking that the account does not have (a
// missing id, or another account's booking) answers ErrNotFound and changes nothing.
func TestBookingOfAnotherAccount(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	purgeAfter(t, s)
	owner, intruder := fresh("rx"), fresh("rx-other")
	b := book(t, s, owner, 1, "2027-08-01", "2027-08-03", "Owner")
	p := pending(t, s, owner)
	pay, _ := s.NextPaymentID(ctx)
	if err := s.IndexPayment(ctx, owner, pay, b.BookingID); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		call func(account string, id int64) error
	}{
		{"Booking", func(a string, id int64) error { _, err := s.Booking(ctx, a, id); return err }},
		{"Update", func(a string, id int64) error {
			_, err := s.Update(ctx, a, id, booking.Cancelled, func(b *booking.Booking) error {
				t.Errorf("apply called with %+v", b)
				b.Status = booking.StatusCancelled
				return nil
			})
			return err
		}},
		{"MarkFailed", func(a string, id int64) error { return s.MarkFailed(ctx, a, id) }},
		{"PaymentBooking", func(a string, _ int64) error { _, err := s.PaymentBooking(ctx, a, pay); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, c := range []struct {
				account string
				id      int64
			}{{intruder, b.BookingID}, {intruder, p.BookingID}, {owner, 987654321}} {
				if tc.name == "PaymentBooking" && c.account == owner {
					continue
				}
				if err := tc.call(c.account, c.id); !errors.Is(err, booking.ErrNotFound) {
					t.Errorf("%s(%s, %d): %v, want ErrNotFound", tc.name, c.account, c.id, err)
				}
			}
		})
	}
	if got, n, err := s.List(ctx, intruder, booking.ListFilter{BookingID: b.BookingID}); err != nil || n != 0 {
		t.Errorf("List of another account's booking: %v of %d, %v", ids(got), n, err)
	}
	if err := s.UnindexPayment(ctx, intruder, pay); err != nil {
		t.Fatal(err)
	}
	if got := read(t, s, owner, b.BookingID); !reflect.DeepEqual(got, b) {
		t.Errorf("the booking changed: %v", differ(got, b))
	}
	if got := read(t, s, owner, p.BookingID); !reflect.DeepEqual(got, p) {
		t.Errorf("the pending attempt changed: %v", differ(got, p))
	}
	if got, err := s.PaymentBooking(ctx, owner, pay); err != nil || got != b.BookingID {
		t.Errorf("the payment index changed: %d, %v", got, err)
	}
}
