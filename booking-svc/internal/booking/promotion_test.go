package booking_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/pricing"
	"github.com/vros/vros/testkit/together"
)

// settings publishes account settings to the view, as property-svc does.
func (f fixture) settings(t *testing.T, s contract.Settings) {
	t.Helper()
	s = s.WithDefaults()
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	v, err := events.Encode("/test", contract.SettingsUpdated, s.AccountID, time.Now(), json.RawMessage(data))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.vw.Apply(context.Background(), kafka.Message{Value: v}); err != nil {
		t.Fatal(err)
	}
}

// promoSettings are the promotions and rates of the tests' accounts.
func promoSettings(account string, limit int) contract.Settings {
	return contract.Settings{AccountID: account, Version: 1, Currency: "USD", Timezone: "America/New_York",
		DefaultLeadSource: 3, ExchangeRates: map[string]string{"EUR": "0.92", "JPY": "151.37"},
		Promotions: []contract.Promotion{
			{Code: "SPRING10", Name: "Spring ten", Type: "percent", Amount: "10", StartDate: "2020-01-01"},
			{Code: "FLAT50", Type: "flat", Amount: "50"},
			{Code: "LATER", Type: "percent", Amount: "5", StartDate: "2099-01-01"},
			{Code: "OVER", Type: "percent", Amount: "5", StartDate: "2020-01-01", EndDate: "2020-12-31"},
			{Code: "WEEK", Type: "percent", Amount: "15", MinNights: 7},
			{Code: "OTHER", Type: "percent", Amount: "5", Properties: []int64{99}},
			{Code: "LIMITED", Type: "percent", Amount: "20", UsageLimit: limit},
			{Code: "HUGE", Type: "flat", Amount: "10", UsageLimit: 10001},
			{Code: "BIG", Type: "flat", Amount: "10", UsageLimit: 10000},
		}}
}

var ada = booking.Party{Guest: booking.Guest{FirstName: "Ada", LastName: "Lovelace", Email: "ada@example.com"}}

func TestPromotionRules(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	const account, pid = "promo-rules", 1
	f.priceable(t, account, pid)
	f.settings(t, promoSettings(account, 1))
	in := pricing.DateOf(time.Now().UTC()).AddDays(30)
	stay := func(nights int, currency string) booking.Stay {
		return booking.Stay{PropertyID: pid, Checkin: in, Checkout: in.AddDays(nights), Adults: 2, Services: &[]pricing.ServiceLine{},
			Currency: currency}
	}
	cases := []struct {
		name, code, currency string
		nights               int
		err                  string // "field: message"; "" succeeds
		discount, grand      string
		rate                 string
	}{
		{"no code", "", "", 3, "", "0.00", "300.00", "1"},
		{"percent", "SPRING10", "", 3, "", "30.00", "270.00", "1"},
		{"any case", "spring10", "", 3, "", "30.00", "270.00", "1"},
		{"flat", "FLAT50", "", 3, "", "50.00", "250.00", "1"},
		{"unknown", "NOPE", "", 3, "promotionCode: NOPE is not a promotion code of this account", "", "", ""},
		{"not valid yet", "LATER", "", 3, "promotionCode: LATER is not valid yet: it applies to check-ins from 2099-01-01", "", "", ""},
		{"expired", "OVER", "", 3, "promotionCode: OVER has expired: it applied to check-ins up to 2020-12-31", "", "", ""},
		{"too short", "WEEK", "", 6, "promotionCode: WEEK applies to stays of at least 7 nights", "", "", ""},
		{"long enough", "WEEK", "", 7, "", "105.00", "595.00", "1"},
		{"another property's", "OTHER", "", 3, "promotionCode: OTHER does not apply to this property", "", "", ""},
		{"a limit above what is counted", "HUGE", "", 3, "promotionCode: HUGE cannot be used: its usage limit of 10001 is above the 10000 bookings this service counts; the owner can lower it (or set none)", "", "", ""},
		{"the largest limit counted", "BIG", "", 3, "", "10.00", "290.00", "1"},
		{"in euros", "SPRING10", "EUR", 3, "", "27.60", "248.40", "0.92"},
		{"in yen", "FLAT50", "JPY", 3, "", "7569", "37842", "151.37"},
		{"the account's own currency", "", "USD", 3, "", "0.00", "300.00", "1"},
		{"no rate", "", "GBP", 3, "currency: no exchange rate is configured for GBP", "", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, pr, err := f.svc.Quote(ctx, account, stay(c.nights, c.currency), c.code, 0)
			if c.err != "" {
				var fe *booking.FieldError
				if !errors.As(err, &fe) || fe.Error() != c.err {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			q := pr.Quote()
			if q.DiscountTotal != c.discount || q.GrandTotal != c.grand || q.ExchangeRate != c.rate {
				t.Fatalf("discount %s grand %s rate %s, want %s %s %s", q.DiscountTotal, q.GrandTotal, q.ExchangeRate, c.discount, c.grand, c.rate)
			}
			if c.code != "" {
				last := q.Discounts[len(q.Discounts)-1]
				if last.PromotionCode != strings.ToUpper(c.code) {
					t.Fatalf("discount line %+v", last)
				}
			}
		})
	}
	_, pr, err := f.svc.Quote(ctx, account, booking.Stay{PropertyID: pid, Checkin: in, Checkout: in.AddDays(1), Adults: 2,
		Services: &[]pricing.ServiceLine{}}, "FLAT50", 0)
	if err != nil || pr.Quote().DiscountTotal != "50.00" || pr.Quote().GrandTotal != "50.00" {
		t.Fatalf("flat 50 off a rent of 100 → %+v %v", pr.Quote(), err)
	}
	if got := booking.DiscountTexts(pr.Result); len(got) != 1 || got[0] != "Promotion FLAT50: 50.00 USD off" {
		t.Fatalf("texts %q", got)
	}

	// The largest counted limit: the create's op lists its 10 000 uses.
	start := time.Now()
	big, err := f.svc.Create(ctx, account, booking.NewBooking{Stay: booking.Stay{PropertyID: pid, Checkin: in.AddDays(40),
		Checkout: in.AddDays(42), Adults: 2, Services: &[]pricing.ServiceLine{}}, Party: withCode(ada, "big")})
	if err != nil || big.Promotion == nil || big.Promotion.Slot < 1 || big.Promotion.Slot > 10000 {
		t.Fatalf("create with a limit of 10000: %v %+v", err, big.Promotion)
	}
	t.Logf("a create with a limit of 10000 took %v", time.Since(start))

	// A booking keeps the promotion, its currency and its rate; no leadsourceId: the default.
	b, err := f.svc.Create(ctx, account, booking.NewBooking{Stay: stay(3, "EUR"), Party: withCode(ada, "spring10")})
	if err != nil {
		t.Fatal(err)
	}
	if b.PromotionCode != "SPRING10" || b.Promotion == nil || b.Quote.Currency != "EUR" || b.Quote.ExchangeRate != "0.92" ||
		b.Quote.GrandTotal != "248.40" || b.LeadSourceID != 3 {
		t.Fatalf("booking %+v %+v", b, b.Promotion)
	}
	// A later rate and promotion change does not re-price it until it is updated.
	later := promoSettings(account, 1)
	later.Version, later.ExchangeRates["EUR"] = 2, "0.5"
	later.Promotions[0].Amount = "50"
	f.settings(t, later)
	again, err := f.st.Booking(ctx, account, b.BookingID)
	if err != nil || again.Quote.GrandTotal != "248.40" {
		t.Fatalf("stored booking changed: %v %v", again.Quote.GrandTotal, err)
	}
	up, err := f.svc.Update(ctx, account, b.BookingID, booking.Patch{Adults: ptr(3)})
	if err != nil {
		t.Fatal(err)
	}
	// Updated: the current rate; the promotion keeps the terms it was booked with (10%).
	if up.Quote.ExchangeRate != "0.5" || up.Quote.DiscountTotal != "15.00" || up.Quote.GrandTotal != "135.00" {
		t.Fatalf("updated: rate %s discount %s grand %s", up.Quote.ExchangeRate, up.Quote.DiscountTotal, up.Quote.GrandTotal)
	}
}

func withCode(p booking.Party, code string) booking.Party { p.PromotionCode = code; return p }

// TestPromotionUsageLimit: 20 concurrent creates of a code with a usage limit of 3 → exactly
// 3 bookings with the discount, 17 clear errors, and the ledger holds exactly 3 uses. A
// cancellation gives a use back, an update that removes the code moves it.
func TestPromotionUsageLimit(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	const account, pid, limit, clients = "promo-limit", 1, 3, 20
	f.priceable(t, account, pid)
	f.settings(t, promoSettings(account, limit))
	first := pricing.DateOf(time.Now().UTC()).AddDays(20)
	stay := func(i int) booking.Stay {
		return booking.Stay{PropertyID: pid, Checkin: first.AddDays(2 * i), Checkout: first.AddDays(2*i + 1), Adults: 2,
			Services: &[]pricing.ServiceLine{}}
	}
	var mu sync.Mutex
	var won []booking.Booking
	var usedUp int
	together.Run(clients, func(i int) {
		b, err := f.svc.Create(ctx, account, booking.NewBooking{Stay: stay(i), Party: withCode(ada, "LIMITED")})
		mu.Lock()
		defer mu.Unlock()
		var fe *booking.FieldError
		switch {
		case err == nil:
			won = append(won, b)
		case errors.As(err, &fe) && fe.Error() == "promotionCode: LIMITED has been used up: its limit of 3 bookings is reached":
			usedUp++
		default:
			t.Errorf("create %d: %v", i, err)
		}
	})
	if len(won) != limit || usedUp != clients-limit {
		t.Fatalf("%d bookings, %d used up; want %d and %d", len(won), usedUp, limit, clients-limit)
	}
	for _, b := range won {
		if b.Quote.DiscountTotal != "20.00" || b.Promotion == nil || b.Promotion.Slot == 0 {
			t.Fatalf("booking %d: discount %s promotion %+v", b.BookingID, b.Quote.DiscountTotal, b.Promotion)
		}
	}
	f.wantUses(t, account, limit, won...)
	// No night of a refused create is held.
	for i := range clients {
		for d, o := range f.owners(t, account, pid, []string{stay(i).Checkin.String()}) {
			if o != "" && !heldBy(o, won) {
				t.Fatalf("night %s held by %s, not a booking", d, o)
			}
		}
	}
	// A quote sees the code used up too.
	if _, _, err := f.svc.Quote(ctx, account, stay(30), "LIMITED", 0); err == nil || !strings.Contains(err.Error(), "used up") {
		t.Fatalf("quote of a used-up code: %v", err)
	}

	// A cancellation gives its use back: one more create gets it.
	if _, err := f.svc.Cancel(ctx, account, won[0].BookingID); err != nil {
		t.Fatal(err)
	}
	next, err := f.svc.Create(ctx, account, booking.NewBooking{Stay: stay(31), Party: withCode(ada, "LIMITED")})
	if err != nil {
		t.Fatalf("create after a cancellation: %v", err)
	}
	f.wantUses(t, account, limit, won[1], won[2], next)

	// An update that removes the code gives its use back; one that adds it takes one.
	if _, err := f.svc.Update(ctx, account, won[1].BookingID, booking.Patch{PromotionCode: ptr("")}); err != nil {
		t.Fatal(err)
	}
	plain, err := f.svc.Create(ctx, account, booking.NewBooking{Stay: stay(32), Party: ada})
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.svc.Update(ctx, account, plain.BookingID, booking.Patch{PromotionCode: ptr("limited")})
	if err != nil || got.Promotion == nil || got.Quote.DiscountTotal != "20.00" {
		t.Fatalf("update adding the code: %+v %v", got.Promotion, err)
	}
	f.wantUses(t, account, limit, won[2], next, got)
	// All used again: an update adding it is refused and changes nothing.
	if _, err := f.svc.Update(ctx, account, won[1].BookingID, booking.Patch{PromotionCode: ptr("LIMITED")}); err == nil ||
		!strings.Contains(err.Error(), "used up") {
		t.Fatalf("update onto a used-up code: %v", err)
	}
	if b, _ := f.st.Booking(ctx, account, won[1].BookingID); b.Promotion != nil {
		t.Fatalf("refused update stored the promotion %+v", b.Promotion)
	}
	// Changing to another code moves the use away.
	if _, err := f.svc.Update(ctx, account, next.BookingID, booking.Patch{PromotionCode: ptr("SPRING10")}); err != nil {
		t.Fatal(err)
	}
	f.wantUses(t, account, limit, won[2], got)
}

// TestPromotionUsageLimitConcurrentUpdates: updates that add a limited code to bookings
// without one, racing creates that ask for it, never hold more uses than the limit: exactly
// limit of them win, the rest are told the code is used up, and the losing updates keep
// their bookings as they were.
func TestPromotionUsageLimitConcurrentUpdates(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	const account, pid, limit, updates, creates = "promo-limit-upd", 1, 2, 8, 4
	f.priceable(t, account, pid)
	f.settings(t, promoSettings(account, limit))
	first := pricing.DateOf(time.Now().UTC()).AddDays(20)
	stay := func(i int) booking.Stay {
		return booking.Stay{PropertyID: pid, Checkin: first.AddDays(2 * i), Checkout: first.AddDays(2*i + 1), Adults: 2,
			Services: &[]pricing.ServiceLine{}}
	}
	plain := make([]booking.Booking, updates)
	for i := range plain {
		b, err := f.svc.Create(ctx, account, booking.NewBooking{Stay: stay(i), Party: ada})
		if err != nil {
			t.Fatal(err)
		}
		plain[i] = b
	}
	var mu sync.Mutex
	var won []booking.Booking
	var usedUp int
	together.Run(updates+creates, func(i int) {
		var b booking.Booking
		var err error
		if i < updates {
			b, err = f.svc.Update(ctx, account, plain[i].BookingID, booking.Patch{PromotionCode: ptr("LIMITED")})
		} else {
			b, err = f.svc.Create(ctx, account, booking.NewBooking{Stay: stay(i), Party: withCode(ada, "LIMITED")})
		}
		mu.Lock()
		defer mu.Unlock()
		var fe *booking.FieldError
		switch {
		case err == nil:
			won = append(won, b)
		case errors.As(err, &fe) && strings.Contains(fe.Error(), "has been used up"):
			usedUp++
		default:
			t.Errorf("client %d: %v", i, err)
		}
	})
	if len(won) != limit || usedUp != updates+creates-limit {
		t.Fatalf("%d won, %d used up; want %d and %d", len(won), usedUp, limit, updates+creates-limit)
	}
	for _, b := range won {
		if b.Promotion == nil || b.Promotion.Slot == 0 || b.Quote.DiscountTotal != "20.00" {
			t.Fatalf("booking %d: discount %s promotion %+v", b.BookingID, b.Quote.DiscountTotal, b.Promotion)
		}
	}
	f.wantUses(t, account, limit, won...)
	for _, p := range plain {
		if heldBy(bookingOwner(p.BookingID), won) {
			continue
		}
		if b, _ := f.st.Booking(ctx, account, p.BookingID); b.Promotion != nil || b.PromotionCode != "" {
			t.Fatalf("refused update of booking %d stored %q %+v", p.BookingID, b.PromotionCode, b.Promotion)
		}
	}
}

func heldBy(owner string, bs []booking.Booking) bool {
	for _, b := range bs {
		if owner == bookingOwner(b.BookingID) {
			return true
		}
	}
	return false
}

// wantUses checks that the uses of LIMITED are held by exactly the bookings given.
func (f fixture) wantUses(t *testing.T, account string, limit int, holders ...booking.Booking) {
	t.Helper()
	dates := make([]string, limit)
	for i := range dates {
		dates[i] = "promotion:LIMITED:" + string(rune('1'+i))
	}
	held := map[string]bool{}
	for d, o := range f.owners(t, account, 0, dates) {
		if o == "" {
			continue
		}
		if held[o] {
			t.Fatalf("%s holds two uses", o)
		}
		held[o] = true
		_ = d
	}
	if len(held) != len(holders) {
		t.Fatalf("uses held by %v, want %d bookings", held, len(holders))
	}
	for _, b := range holders {
		if !held[bookingOwner(b.BookingID)] {
			t.Fatalf("booking %d holds no use (uses: %v)", b.BookingID, held)
		}
	}
}

// TestJanitorGivesBackAPromotionUse: a create that dies after taking a use, and a cancel
// that dies before giving it back, leave it to the janitor, which frees it.
func TestJanitorGivesBackAPromotionUse(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	// An account and a booking id of this run alone: booking ids are global, and a fixed id
	// (1) is the one the sequence hands out first when this test runs alone.
	account := fmt.Sprintf("promo-crash-%d", time.Now().UnixNano())
	const pid = 1
	f.priceable(t, account, pid)
	dying, err := f.svc.NewBookingID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f.settings(t, promoSettings(account, 1))
	in := pricing.DateOf(time.Now().UTC()).AddDays(40)
	stay := func(i int) booking.Stay {
		return booking.Stay{PropertyID: pid, Checkin: in.AddDays(3 * i), Checkout: in.AddDays(3*i + 2), Adults: 2, Services: &[]pricing.ServiceLine{}}
	}
	dead := make(chan struct{})
	t.Cleanup(func() { close(dead) })
	die := func(at string) {
		reached := make(chan struct{})
		f.svc.Crash = func(step, _ string) {
			if step == at {
				close(reached)
				<-dead
				runtime.Goexit() // the process is gone: nothing after this step runs
			}
		}
		t.Cleanup(func() { f.svc.Crash = nil })
		go func() {
			if at == "cancel:cancelled" {
				_, _ = f.svc.Cancel(context.Background(), account, dying)
				return
			}
			_, _ = f.svc.Create(context.Background(), account, booking.NewBooking{ID: dying, Stay: stay(0), Party: withCode(ada, "LIMITED")})
		}()
		select {
		case <-reached:
		case <-time.After(20 * time.Second):
			t.Fatalf("never reached %s", at)
		}
		f.svc.Crash = nil
	}
	die("create:promotion")
	if o := f.owners(t, account, 0, []string{"promotion:LIMITED:1"})["promotion:LIMITED:1"]; o != bookingOwner(dying) {
		t.Fatalf("the dead create holds %q", o)
	}
	if _, _, err := f.svc.Quote(ctx, account, stay(1), "LIMITED", 0); err == nil {
		t.Fatal("the use of the dead create is free before the janitor")
	}
	f.repair(t)
	f.wantUses(t, account, 1)
	b, err := f.svc.Create(ctx, account, booking.NewBooking{Stay: stay(1), Party: withCode(ada, "LIMITED")})
	if err != nil {
		t.Fatalf("create after the janitor: %v", err)
	}
	f.wantUses(t, account, 1, b)
	if st, _ := f.st.Booking(ctx, account, dying); st.Status != booking.StatusFailed {
		t.Fatalf("the dead create's booking is %s", st.Status)
	}

	// A cancel that dies after the booking is cancelled, before the use is given back.
	f.svc.Crash = nil
	cancelled := make(chan struct{})
	f.svc.Crash = func(step, _ string) {
		if step == "cancel:cancelled" {
			close(cancelled)
			<-dead
			runtime.Goexit()
		}
	}
	go func() { _, _ = f.svc.Cancel(context.Background(), account, b.BookingID) }()
	<-cancelled
	f.svc.Crash = nil
	f.wantUses(t, account, 1, b)
	f.repair(t)
	f.wantUses(t, account, 1)
}

// A booking made before promotions were applied kept its promotionCode as text only: a
// change that keeps the code keeps it so, without a discount and without refusing the code.
func TestLegacyPromotionCodeKept(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	const account, pid = "promo-legacy", 1
	f.priceable(t, account, pid)
	f.settings(t, promoSettings(account, 1))
	in := pricing.DateOf(time.Now().UTC()).AddDays(30)
	b, err := f.svc.Create(ctx, account, booking.NewBooking{Stay: booking.Stay{PropertyID: pid, Checkin: in, Checkout: in.AddDays(2),
		Adults: 2, Services: &[]pricing.ServiceLine{}}, Party: ada})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.Update(ctx, account, b.BookingID, booking.Updated, func(b *booking.Booking) error {
		b.PromotionCode = "OLDTEXT" // as stored before promotions existed
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	up, err := f.svc.Update(ctx, account, b.BookingID, booking.Patch{Adults: ptr(3)})
	if err != nil || up.PromotionCode != "OLDTEXT" || up.Promotion != nil || up.Quote.DiscountTotal != "0.00" {
		t.Fatalf("update of a legacy booking: %v %q %+v", err, up.PromotionCode, up.Promotion)
	}
	// Sending a code applies it (or refuses it) as for any booking.
	if _, err := f.svc.Update(ctx, account, b.BookingID, booking.Patch{PromotionCode: ptr("NOPE")}); err == nil {
		t.Fatal("an unknown code sent on update was accepted")
	}
	up, err = f.svc.Update(ctx, account, b.BookingID, booking.Patch{PromotionCode: ptr("SPRING10")})
	if err != nil || up.Promotion == nil || up.Quote.DiscountTotal != "20.00" {
		t.Fatalf("applying a code: %v %+v %s", err, up.Promotion, up.Quote.DiscountTotal)
	}
}
