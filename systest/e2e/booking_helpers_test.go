package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/vros/vros/systest/apitest"
)

// b sends an interface B action as acc; fields are merged into the body.
func (acc account) b(t *testing.T, action string, fields obj) response {
	t.Helper()
	return do(t, http.MethodPost, "/vros/external-booking", nil, acc.BBody(action, fields))
}

// ok asserts interface B success and decodes data into v.
func (r response) ok(t *testing.T, v any) {
	t.Helper()
	a := r.b(t)
	if r.Code != http.StatusOK || a.Status != 0 || a.Message != "Success" {
		t.Fatalf("HTTP %d: %s", r.Code, r.Body)
	}
	if v != nil {
		if err := json.Unmarshal(a.Data, v); err != nil {
			t.Fatalf("data %s: %v", a.Data, err)
		}
	}
}

// wantStatus asserts an interface B error with status, on HTTP 200 unless it is a
// transport failure (48, 56, 72, 500 keep their HTTP codes).
func (r response) wantStatus(t *testing.T, status int) bAnswer {
	t.Helper()
	a := r.b(t)
	if a.Status != status || (r.Code == http.StatusOK) != applicationStatus(status) {
		t.Fatalf("want status %d, got HTTP %d: %s", status, r.Code, r.Body)
	}
	return a
}

// day is a date n days from today, as YYYY-MM-DD.
var day = apitest.Day

// simpleRates: 100 a night every night, no weekend price, any day in and out, bookable a
// year ahead from today.
func simpleRates(code string) obj {
	return obj{"internal_code": code,
		"rate":    obj{"daily_price": 100, "minimum_stay": 1},
		"setting": obj{"standard_occupants": 6, "accept_booking_upto": 12, "advanced_notice_booking_from": "0"}}
}

// bookable creates a property with simpleRates plus extra configuration, and waits until
// booking-svc prices it (its view is fed by events).
func bookable(t *testing.T, acc account, code string, extra ...func(code string) (string, obj)) int {
	t.Helper()
	pid, _ := strconv.Atoi(createProperty(t, acc, code))
	acc.a(t, "property-rate", simpleRates(code)).status(t, http.StatusOK)
	for _, e := range extra {
		res, body := e(code)
		acc.a(t, res, body).status(t, http.StatusOK)
	}
	waitVersion(t, acc, pid)
	return pid
}

// waitVersion polls until booking-svc's view holds the property's current version: reads
// converge within a bound, never after a fixed sleep.
func waitVersion(t *testing.T, acc account, pid int) {
	t.Helper()
	want := field(stored(t, acc.AccountID, strconv.Itoa(pid)), "version")
	id := acc.AccountID + ":" + strconv.Itoa(pid)
	deadline := time.Now().Add(viewsWithin)
	for time.Now().Before(deadline) {
		var doc bson.M
		err := mongoDB.Database("vros_booking").Collection("view_properties").FindOne(context.Background(), bson.D{{Key: "_id", Value: id}}).Decode(&doc)
		if err == nil && doc["version"] == want {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("booking-svc did not see version %v of property %s", want, id)
}

// guest is a valid booking party.
func guest(pid int, checkin, checkout string) obj {
	return obj{"propertyId": pid, "firstName": "Ada", "lastName": "Lovelace", "email": "ada@example.com",
		"numberofadults": 2, "leadsourceId": 1, "checkin": checkin, "checkout": checkout}
}

// bookingData is the part of B2 tests read.
type bookingData struct {
	BookingID        int64                      `json:"bookingId"`
	Status           string                     `json:"status"`
	PropertyID       int64                      `json:"propertyId"`
	Checkin          string                     `json:"checkin"`
	Checkout         string                     `json:"checkout"`
	TotalRent        decimal.Decimal            `json:"totalRent"`
	TaxTotal         decimal.Decimal            `json:"taxTotal"`
	ServiceTotal     decimal.Decimal            `json:"serviceTotal"`
	DiscountTotal    decimal.Decimal            `json:"discountTotal"`
	GrandTotal       decimal.Decimal            `json:"grandTotal"`
	DamageDeposit    decimal.Decimal            `json:"damageDeposit"`
	QtyOfNights      int                        `json:"qtyofnights"`
	NightlyDetail    map[string]decimal.Decimal `json:"nightlyPriceDetail"`
	CancellationDate *string                    `json:"cancellationDate"`
	Tax              []struct {
		Name   string          `json:"name"`
		Amount decimal.Decimal `json:"amount"`
	} `json:"tax"`
	Service []struct {
		Name      string          `json:"name"`
		Amount    decimal.Decimal `json:"amount"`
		TaxAmount decimal.Decimal `json:"taxAmount"`
	} `json:"service"`
	Payments []struct {
		PaymentID string          `json:"paymentId"`
		Amount    decimal.Decimal `json:"amount"`
		Method    string          `json:"method"`
	} `json:"payments"`
	CreditCard *struct {
		Number string `json:"number"`
	} `json:"creditCard"`
}

func (d bookingData) serviceNames() []string {
	var out []string
	for _, s := range d.Service {
		out = append(out, s.Name)
	}
	return out
}

// relation asserts the spec's relation between the totals, to the cent.
func (d bookingData) relation(t *testing.T) {
	t.Helper()
	if want := d.TotalRent.Add(d.TaxTotal).Add(d.ServiceTotal).Sub(d.DiscountTotal); !d.GrandTotal.Equal(want) {
		t.Fatalf("grandTotal %s != totalRent %s + taxTotal %s + serviceTotal %s - discountTotal %s",
			d.GrandTotal, d.TotalRent, d.TaxTotal, d.ServiceTotal, d.DiscountTotal)
	}
	sum := decimal.Zero
	for _, s := range d.Service {
		sum = sum.Add(s.Amount).Add(s.TaxAmount)
	}
	if !sum.Equal(d.ServiceTotal) {
		t.Fatalf("serviceTotal %s != sum of service amounts and their taxes %s", d.ServiceTotal, sum)
	}
}

func create(t *testing.T, acc account, body obj) bookingData {
	t.Helper()
	var d bookingData
	acc.b(t, "create", body).ok(t, &d)
	if d.BookingID == 0 {
		t.Fatal("no bookingId")
	}
	return d
}

// held lists who holds each night of a property in the ledger.
func held(t *testing.T, acc account, pid int, from string, n int) map[string]string {
	t.Helper()
	out := map[string]string{}
	start, _ := time.Parse(time.DateOnly, from)
	for i := 0; i < n; i++ {
		d := start.AddDate(0, 0, i).Format(time.DateOnly)
		var doc bson.M
		err := mongoDB.Database("vros_booking").Collection("nights").FindOne(context.Background(),
			bson.D{{Key: "_id", Value: fmt.Sprintf("%s:%d:%s", acc.AccountID, pid, d)}}).Decode(&doc)
		if err == nil {
			out[d], _ = doc["owner"].(string)
		}
	}
	return out
}
