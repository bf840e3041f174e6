package bookingsvc

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vros/vros/libs/tenancy"
)

const key = "messaging-test-key-0123456789"

// bookingSvc is booking-svc's hooks route as its verifier sees it: messaging-svc's grant of
// GET /internal/hooks/booking/:id alone, answering answer (status, body) for a valid call.
func bookingSvc(t *testing.T, answer func(account, path string) (int, string)) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	v := tenancy.MustVerifier(tenancy.Grant{Caller: tenancy.CallerMessaging, Key: key, Routes: []string{"GET /internal/hooks/booking/:id"}})
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		body, _ := io.ReadAll(r.Body)
		_, tenant, err := v.Verify(r.Header.Get, r.Method, r.URL.Path, r.URL.RawQuery, body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		status, out := answer(tenant.AccountID, r.URL.Path)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, out)
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

// TestBooking: a signed read answers booking-svc's booking object, decoded; a 404 is
// ErrNotFound; any other answer, or none, is an error that is not ErrNotFound (the message is
// tried again later).
func TestBooking(t *testing.T) {
	fixture, err := os.ReadFile("testdata/booking.json")
	if err != nil {
		t.Fatal(err)
	}
	srv, _ := bookingSvc(t, func(account, path string) (int, string) {
		switch {
		case account == "acc-1" && path == "/internal/hooks/booking/42":
			return http.StatusOK, string(fixture)
		case path == "/internal/hooks/booking/500":
			return http.StatusInternalServerError, `{"error":"boom"}`
		case path == "/internal/hooks/booking/7":
			return http.StatusOK, `{"booking":{"bookingId":8}}`
		}
		return http.StatusNotFound, `{"error":{"status":"not_found"}}`
	})
	c := New(srv.URL+"/", tenancy.NewSigner(tenancy.CallerMessaging, key), 5*time.Second)
	ctx := context.Background()

	b, err := c.Booking(ctx, "acc-1", 42)
	if err != nil {
		t.Fatal(err)
	}
	if b.BookingID != 42 || b.Status != "reserved" || b.FirstName != "Anna" || b.Email != "anna@example.com" ||
		b.PropertyID != 41 || b.BrandID != 3 || !strings.HasPrefix(b.Checkin, "2027-04-10") || b.Currency != "EUR" ||
		b.GrandTotal.String() != "1452.50" || b.AmountPaid.String() != "400.00" || len(b.Payments) != 1 ||
		b.Payments[0].PaymentID != "901" || len(b.PaymentSchedule) != 2 || b.Policy == nil || len(b.Policy.Tiers) != 2 ||
		b.Deposit == nil || b.Deposit.Status != "held" || b.RatePlanName == nil || *b.RatePlanName != "Standard" {
		t.Fatalf("booking %+v", b)
	}

	if _, err := c.Booking(ctx, "acc-2", 42); !errors.Is(err, ErrNotFound) {
		t.Errorf("another account's booking: %v, want ErrNotFound", err)
	}
	if _, err := c.Booking(ctx, "acc-1", 500); err == nil || errors.Is(err, ErrNotFound) {
		t.Errorf("HTTP 500: %v, want a temporary error", err)
	}
	if _, err := c.Booking(ctx, "acc-1", 7); err == nil || errors.Is(err, ErrNotFound) {
		t.Errorf("another booking answered: %v, want an error", err)
	}
	// Signed with another key: booking-svc refuses it (401), an error but not ErrNotFound.
	bad := New(srv.URL, tenancy.NewSigner(tenancy.CallerMessaging, "another-key-0123456789"), 5*time.Second)
	if _, err := bad.Booking(ctx, "acc-1", 42); err == nil || errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "401") {
		t.Errorf("wrong key: %v, want HTTP 401", err)
	}
	// Nobody listening.
	srv.Close()
	if _, err := c.Booking(ctx, "acc-1", 42); err == nil || errors.Is(err, ErrNotFound) {
		t.Errorf("booking-svc down: %v, want a temporary error", err)
	}
}

// TestSignatureClock: the signature is made on Now, so a client whose clock is far from
// booking-svc's is refused; the real clock (nil Now) is accepted.
func TestSignatureClock(t *testing.T) {
	srv, calls := bookingSvc(t, func(string, string) (int, string) { return http.StatusNotFound, `{}` })
	c := New(srv.URL, tenancy.NewSigner(tenancy.CallerMessaging, key), 5*time.Second)
	if _, err := c.Booking(context.Background(), "acc", 1); !errors.Is(err, ErrNotFound) {
		t.Fatalf("real clock: %v", err)
	}
	c.Now = func() time.Time { return time.Now().Add(-time.Hour) }
	if _, err := c.Booking(context.Background(), "acc", 1); err == nil || errors.Is(err, ErrNotFound) {
		t.Fatalf("an hour-old signature: %v, want refused", err)
	}
	if calls.Load() != 2 {
		t.Fatalf("%d calls", calls.Load())
	}
}
