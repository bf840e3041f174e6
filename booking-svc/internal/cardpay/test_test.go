package cardpay_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/booking-svc/internal/card"
	"github.com/vros/vros/booking-svc/internal/cardpay"
)

var now = time.Date(2026, 6, 15, 12, 0, 0, 0, time.UTC)

func clock() time.Time { return now }

func visa(number string) card.Card {
	return card.Card{Number: number, NameOnCard: "ANN SMITH", ExpMonth: 12, ExpYear: 2030, CVC: "123"}
}

func req(number, amount string) cardpay.ChargeRequest {
	return cardpay.ChargeRequest{
		Amount: decimal.RequireFromString(amount), Currency: "EUR", Card: visa(number), Description: "booking 1",
	}
}

func TestTestCards(t *testing.T) {
	const approved = ""
	const threeDS = "3ds"
	for _, c := range []struct{ name, number, want string }{
		{"visa approves", "4242424242424242", approved},
		{"mastercard approves", "5555555555554444", approved},
		{"amex approves", "378282246310005", approved},
		{"declined", "4000000000000002", "card declined"},
		{"insufficient funds", "4000000000009995", "insufficient funds"},
		{"expired card", "4000000000000069", "expired card"},
		{"incorrect cvc", "4000000000000127", "incorrect cvc"},
		{"3-D Secure required", "4000000000003220", threeDS},
		{"3-D Secure always", "4000002760003184", threeDS},
		{"other Luhn-valid number approves", "6011111111111117", approved},
		{"12-digit Luhn-valid number approves", "123456789015", approved},
		{"Luhn-invalid number", "4242424242424241", "invalid card number"},
		{"empty number", "", "invalid card number"},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := cardpay.NewTest(clock)
			ch, err := g.Charge(context.Background(), req(c.number, "100.50"))
			reason, declined := cardpay.Declined(err)
			switch {
			case c.want == approved && err != nil:
				t.Fatalf("refused: %v", err)
			case c.want == approved:
				l4 := c.number[len(c.number)-4:]
				if ch.ID == "" || !ch.Amount.Equal(decimal.RequireFromString("100.5")) || ch.Currency != "EUR" ||
					ch.Last4 != l4 || ch.Brand != card.Brand(c.number) || !ch.At.Equal(now) {
					t.Fatalf("charge %+v", ch)
				}
				if n := len(g.Charges()); n != 1 {
					t.Fatalf("%d charges recorded", n)
				}
			case c.want == threeDS:
				if !errors.Is(err, cardpay.ErrRequires3DS) || declined {
					t.Fatalf("err %v, want ErrRequires3DS", err)
				}
			default:
				if !declined || reason != c.want {
					t.Fatalf("err %v (declined %v, reason %q), want reason %q", err, declined, reason, c.want)
				}
				if err.Error() != "card declined: "+c.want {
					t.Fatalf("message %q", err.Error())
				}
			}
			if c.want != approved && (len(g.Charges()) != 0 || ch.ID != "") {
				t.Fatalf("refused card charged: %+v", ch)
			}
		})
	}
}

func TestExpiryChecked(t *testing.T) {
	g := cardpay.NewTest(clock)
	c := visa(cardpay.CardVisa)
	c.ExpMonth, c.ExpYear = 5, 2026
	_, err := g.Charge(context.Background(), cardpay.ChargeRequest{Amount: decimal.NewFromInt(10), Currency: "EUR", Card: c})
	if r, ok := cardpay.Declined(err); !ok || r != "expired card" {
		t.Fatalf("err %v", err)
	}
	c.ExpMonth = 6
	if _, err := g.Charge(context.Background(), cardpay.ChargeRequest{Amount: decimal.NewFromInt(10), Currency: "EUR", Card: c}); err != nil {
		t.Fatalf("card valid through June refused: %v", err)
	}
}

func TestInvalidRequests(t *testing.T) {
	for _, c := range []struct{ name, amount, currency, want string }{
		{"zero amount", "0", "EUR", "invalid charge request: amount must be greater than 0"},
		{"negative amount", "-5", "EUR", "invalid charge request: amount must be greater than 0"},
		{"three decimals in EUR", "10.005", "EUR", "invalid charge request: amount 10.005 has more than 2 decimal places for EUR"},
		{"decimals in JPY", "1000.5", "JPY", "invalid charge request: amount 1000.5 has more than 0 decimal places for JPY"},
		{"whole yen", "1000", "jpy", ""},
		{"unknown currency", "10", "EURO", `invalid charge request: currency "EURO" is not an ISO 4217 code`},
		{"no currency", "10", "", `invalid charge request: currency "" is not an ISO 4217 code`},
		{"XXX", "10", "XXX", `invalid charge request: currency "XXX" is not an ISO 4217 code`},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := cardpay.NewTest(clock)
			r := req(cardpay.CardVisa, c.amount)
			r.Currency = c.currency
			ch, err := g.Charge(context.Background(), r)
			got := ""
			if err != nil {
				got = err.Error()
				if !errors.Is(err, cardpay.ErrInvalidRequest) {
					t.Fatalf("%v does not wrap ErrInvalidRequest", err)
				}
			}
			if got != c.want {
				t.Fatalf("err %q, want %q", got, c.want)
			}
			if c.want == "" && ch.Currency != "JPY" {
				t.Fatalf("currency %q", ch.Currency)
			}
		})
	}
}

func TestIdempotency(t *testing.T) {
	g := cardpay.NewTest(clock)
	r := req(cardpay.CardVisa, "50")
	r.IdempotencyKey = "booking/1/payment/1"
	first, err := g.Charge(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	again, err := g.Charge(context.Background(), r)
	if err != nil || again != first {
		t.Fatalf("retry gave %+v, %v; want %+v", again, err, first)
	}
	if n := len(g.Charges()); n != 1 {
		t.Fatalf("charged %d times", n)
	}
	other := r
	other.Amount = decimal.NewFromInt(60)
	if _, err := g.Charge(context.Background(), other); !errors.Is(err, cardpay.ErrInvalidRequest) {
		t.Fatalf("key reused for another amount: %v", err)
	}
	// A refusal is remembered too: the retry does not reach the card again.
	d := req(cardpay.CardDeclined, "50")
	d.IdempotencyKey = "booking/2/payment/1"
	_, err1 := g.Charge(context.Background(), d)
	_, err2 := g.Charge(context.Background(), d)
	if r1, _ := cardpay.Declined(err1); r1 != "card declined" || err2 == nil || err2.Error() != err1.Error() {
		t.Fatalf("declined retry: %v, %v", err1, err2)
	}
	// Without a key every call is a new charge.
	r.IdempotencyKey = ""
	a, _ := g.Charge(context.Background(), r)
	b, _ := g.Charge(context.Background(), r)
	if a.ID == b.ID || len(g.Charges()) != 3 {
		t.Fatalf("keyless charges %s %s, %d recorded", a.ID, b.ID, len(g.Charges()))
	}
}

func TestConcurrentRetriesChargeOnce(t *testing.T) {
	g := cardpay.NewTest(clock)
	var wg sync.WaitGroup
	ids := make([]string, 64)
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := req(cardpay.CardVisa, "10")
			r.IdempotencyKey = fmt.Sprintf("key-%d", i%4)
			ch, err := g.Charge(context.Background(), r)
			if err != nil {
				t.Error(err)
			}
			ids[i] = ch.ID
		}()
	}
	wg.Wait()
	if n := len(g.Charges()); n != 4 {
		t.Fatalf("%d charges for 4 keys", n)
	}
	for i := range ids {
		if ids[i] != ids[i%4] {
			t.Fatalf("key-%d answered %s and %s", i%4, ids[i%4], ids[i])
		}
	}
}

func TestCanceledContext(t *testing.T) {
	g := cardpay.NewTest(clock)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := g.Charge(ctx, req(cardpay.CardVisa, "10")); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	if len(g.Charges()) != 0 {
		t.Fatal("charged after cancel")
	}
}

// The Test gateway is a gateway as the booking domain calls one.
var _ booking.Gateway = (*cardpay.Test)(nil)
