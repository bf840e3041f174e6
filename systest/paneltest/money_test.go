package paneltest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/color"
	"io"
	"mime/multipart"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/vros/vros/testkit/eventually"
)

// TestMoneyPagesReachTheServices: the money pages (docs/panel.md, "Money") against the whole
// vros. A booking with a recorded payment, cancelled from the panel with an override, refunds
// that amount: the booking page shows the refund and the refund payment, and listbooking
// answers it. An owner (payout details never shown back), its agreement on the property, an
// expense with its receipt and a payout, made on the pages, are read back through interface
// A; the month's statement is generated, shown and downloaded, and its owner's link opens
// without signing in while a made-up one is 404.
func TestMoneyPagesReachTheServices(t *testing.T) {
	o := newOwner(t)
	s := signIn(t, o.Email, o.Password)
	mustPost := func(path string, want int, kv ...string) string {
		t.Helper()
		code, body := s.post(t, path, s.form(kv...))
		if code != want {
			t.Fatalf("POST %s: HTTP %d, want %d: %.600s", path, code, want, body)
		}
		return body
	}

	// A refund by override.
	id := o.book(t, day(30), day(33))
	bk := fmt.Sprintf("/panel/bookings/%d", id)
	mustPost(bk+"/payments", http.StatusSeeOther, "amount", "100", "description", "Bank transfer")
	page := mustPost(bk+"/cancel", http.StatusBadRequest, "refundAmount", "100.01", "refundReason", "Goodwill")
	if !strings.Contains(page, `id="f-refundAmount-err"`) {
		t.Errorf("an override above what was paid is not refused at its field: %.800s", page)
	}
	mustPost(bk+"/cancel", http.StatusSeeOther, "refundAmount", "40", "refundReason", "Goodwill")
	_, page = s.get(t, bk)
	for _, want := range []string{`<td class="refund-amount"><strong>40.00</strong>`, `set by the owner: Goodwill`, `class="refund"`, `Refund of payment`} {
		if !strings.Contains(page, want) {
			t.Errorf("the booking page lacks %s", want)
		}
	}
	a := b(t, o.Key, o.Pass, "listbooking", map[string]any{"bookingId": id})
	var list struct {
		ListBooking []struct {
			Refund *struct {
				Amount   json.Number `json:"amount"`
				Override bool        `json:"override"`
			} `json:"refund"`
		} `json:"listBooking"`
	}
	if err := json.Unmarshal(a.Data, &list); err != nil || len(list.ListBooking) != 1 || list.ListBooking[0].Refund == nil ||
		list.ListBooking[0].Refund.Amount.String() != "40.00" || !list.ListBooking[0].Refund.Override {
		t.Errorf("listbooking's refund: %s", a.Data)
	}

	// An owner: the payout details go in, only their summary comes out.
	const iban = "IT60X0542811101000000123456"
	mustPost("/panel/owners", http.StatusSeeOther, "do", "create", "owner[name]", "Maria Bianchi", "owner[kind]", "person",
		"owner[payout][method]", "bank_transfer", "owner[payout][account_holder]", "Maria Bianchi", "owner[payout][iban]", iban)
	var owners struct {
		Data struct {
			Owners []struct {
				OwnerID       int64  `json:"owner_id"`
				Name          string `json:"name"`
				PayoutSet     bool   `json:"payout_set"`
				PayoutSummary string `json:"payout_summary"`
			} `json:"owners"`
		} `json:"data"`
	}
	o.a(t, "owner", `{"action":"list"}`, &owners)
	if len(owners.Data.Owners) != 1 || owners.Data.Owners[0].Name != "Maria Bianchi" || !owners.Data.Owners[0].PayoutSet {
		t.Fatalf("owners: %+v", owners.Data.Owners)
	}
	owner := owners.Data.Owners[0]
	if _, page = s.get(t, "/panel/owners"); strings.Contains(page, iban) || !strings.Contains(page, owner.PayoutSummary) {
		t.Errorf("the owners page shows the IBAN, or not its summary %q", owner.PayoutSummary)
	}
	oid := fmt.Sprint(owner.OwnerID)

	// Its agreement on the property.
	mustPost("/panel/properties/"+o.Code+"/owner", http.StatusSeeOther, "do", "save", "agreement[owner_id]", oid,
		"agreement[start_date]", day(-400), "agreement[commission_percent]", "20", "agreement[commission_basis]", "rent",
		"agreement[monthly_fees][0][name]", "Pool", "agreement[monthly_fees][0][amount]", "25")
	var agreements struct {
		Data struct {
			Agreements []struct {
				OwnerID           int64  `json:"owner_id"`
				CommissionPercent string `json:"commission_percent"`
			} `json:"agreements"`
		} `json:"data"`
	}
	o.a(t, "owner-agreement", `{"action":"list","internal_code":"`+o.Code+`"}`, &agreements)
	if len(agreements.Data.Agreements) != 1 || agreements.Data.Agreements[0].OwnerID != owner.OwnerID {
		t.Fatalf("agreements: %+v", agreements.Data.Agreements)
	}
	// One overlapping it: the service's refusal, nothing made.
	page = mustPost("/panel/properties/"+o.Code+"/owner", http.StatusConflict, "do", "save", "agreement[owner_id]", oid,
		"agreement[start_date]", day(-10), "agreement[commission_percent]", "10", "agreement[commission_basis]", "total")
	if !strings.Contains(page, `class="problem"`) {
		t.Errorf("an overlapping agreement's refusal is not shown: %.600s", page)
	}

	// An expense with its receipt, a multipart form.
	receipt := pngOf(color.RGBA{200, 100, 50, 255})
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	for _, kv := range [][2]string{{"_csrf", s.csrf}, {"do", "create"}, {"expense[date]", day(0)}, {"expense[amount]", "80"},
		{"expense[category]", "cleaning"}, {"expense[borne_by]", "owner"}, {"expense[description]", "Deep clean"}} {
		_ = w.WriteField(kv[0], kv[1])
	}
	part, _ := w.CreateFormFile("receipt", "receipt.png")
	_, _ = part.Write(receipt)
	_ = w.Close()
	req, _ := http.NewRequest(http.MethodPost, st.EdgeURL+"/panel/properties/"+o.Code+"/expenses", &body)
	req.Header.Set("Content-Type", w.FormDataContentType())
	req.Header.Set("Origin", st.EdgeURL)
	resp, err := s.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("expense: HTTP %d %.600s", resp.StatusCode, msg)
	}
	var expenses struct {
		Data struct {
			Expenses []struct {
				ExpenseID int64  `json:"expense_id"`
				Amount    string `json:"amount"`
				Receipt   *struct {
					ContentType string `json:"content_type"`
				} `json:"receipt"`
			} `json:"expenses"`
		} `json:"data"`
	}
	o.a(t, "owner-expense", `{"action":"list","internal_code":"`+o.Code+`"}`, &expenses)
	if len(expenses.Data.Expenses) != 1 || expenses.Data.Expenses[0].Receipt == nil || expenses.Data.Expenses[0].Receipt.ContentType != "image/png" {
		t.Fatalf("expenses: %+v", expenses.Data.Expenses)
	}
	resp, err = s.c.Get(fmt.Sprintf("%s/panel/properties/%s/expenses/%d/receipt", st.EdgeURL, o.Code, expenses.Data.Expenses[0].ExpenseID))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !bytes.Equal(got, receipt) || resp.Header.Get("Content-Type") != "image/png" {
		t.Errorf("the receipt: HTTP %d %q, %d bytes", resp.StatusCode, resp.Header.Get("Content-Type"), len(got))
	}

	// A payout.
	mustPost("/panel/owners/"+oid, http.StatusSeeOther, "do", "create", "payout[date]", day(0), "payout[amount]", "50",
		"payout[currency]", "USD", "payout[method]", "bank_transfer", "payout[reference]", "Advance")
	if _, page = s.get(t, "/panel/owners/"+oid); !strings.Contains(page, "Advance") {
		t.Errorf("the owner's page lacks the payout")
	}

	// The month's statement: generated, shown, downloaded, linked.
	code, page := s.post(t, "/panel/statements", s.form("statement[owner_id]", oid, "month", day(0)[:7]))
	if code != http.StatusSeeOther {
		t.Fatalf("generate: HTTP %d %s", code, regexp.MustCompile(`(?s)<main.*</main>`).FindString(page))
	}
	_, page = s.get(t, "/panel/statements")
	stmt := regexp.MustCompile(`href="/panel/statements/([A-Za-z0-9_-]+)"`).FindStringSubmatch(page)
	if stmt == nil {
		t.Fatalf("the statements page lists no statement: %.800s", page)
	}
	_, page = s.get(t, "/panel/statements/"+stmt[1])
	if !strings.Contains(page, "for Maria Bianchi") || !strings.Contains(page, `id="net-due"`) {
		t.Errorf("the statement's page: %.800s", page)
	}
	resp, err = s.c.Get(st.EdgeURL + "/panel/statements/" + stmt[1] + "/statement.pdf")
	if err != nil {
		t.Fatal(err)
	}
	got, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !bytes.HasPrefix(got, []byte("%PDF")) {
		t.Errorf("the PDF: HTTP %d %.100q", resp.StatusCode, got)
	}
	page = mustPost("/panel/statements/"+stmt[1]+"/link", http.StatusOK)
	link := regexp.MustCompile(`/statements/[A-Za-z0-9_-]{16,}`).FindString(page)
	if link == "" {
		t.Fatalf("no owner's link: %.800s", page)
	}
	anon := newClient()
	resp, err = anon.Get(st.EdgeURL + link)
	if err != nil {
		t.Fatal(err)
	}
	got, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(got), "for Maria Bianchi") || strings.Contains(string(got), `name="_csrf"`) {
		t.Errorf("the owner's link: HTTP %d %.600s", resp.StatusCode, got)
	}
	resp, err = anon.Get(st.EdgeURL + link + "/statement.csv")
	if err != nil {
		t.Fatal(err)
	}
	got, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/csv") || len(got) == 0 {
		t.Errorf("the link's CSV: HTTP %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	resp, err = anon.Get(st.EdgeURL + "/statements/" + strings.Repeat("A", 43))
	if err != nil {
		t.Fatal(err)
	}
	got, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || strings.Contains(string(got), "Maria") {
		t.Errorf("a made-up link: HTTP %d %.300s", resp.StatusCode, got)
	}
}

// TestDepositOnTheBookingPage: a booking whose damage deposit is held on the guest's card
// (due at booking; the test gateway of a sandbox account, by booking-svc's money worker):
// the booking page shows the hold; a capture above it is refused at its field; a capture
// of part of it with a reason is recorded (the page shows it and the captured payment) and
// listbooking answers it.
func TestDepositOnTheBookingPage(t *testing.T) {
	o := newOwner(t)
	o.a(t, "property-policy", `{"internal_code":"`+o.Code+`","short_stay":{"payment_type":"None","damage_deposit":{"is_due_at":"Booking","amount":300,"amount_type":"Flat"}}}`, nil)
	type hold struct {
		Status         string      `json:"status"`
		Amount         json.Number `json:"amount"`
		CapturedAmount json.Number `json:"capturedAmount"`
	}
	type booked struct {
		BookingID   int64 `json:"bookingId"`
		DepositHold *hold `json:"depositHold"`
	}
	// The booking, once booking-svc's view prices the deposit (each try on other nights).
	var bk booked
	deadline := time.Now().Add(viewsWithin)
	for n := 40; bk.DepositHold == nil; n += 3 {
		a := b(t, o.Key, o.Pass, "create", map[string]any{"propertyId": o.PID, "firstName": "Grace", "lastName": "Hopper",
			"email": "grace@example.com", "numberofadults": 2, "leadsourceId": 1, "checkin": day(n), "checkout": day(n + 2),
			"creditCard": map[string]any{"CCNumber": "4242424242424242", "NameOnCard": "GRACE HOPPER", "Expiration": "12/2035", "CVC": "123"}})
		if a.Status != 0 && a.Status != 16 && !strings.Contains(a.Message, "no rates") {
			t.Fatalf("create: %d %s", a.Status, a.Message)
		}
		if a.Status == 0 {
			if err := json.Unmarshal(a.Data, &bk); err != nil {
				t.Fatal(err)
			}
		}
		if bk.DepositHold == nil && time.Now().After(deadline) {
			t.Fatalf("no deposit on the bookings made: %s", a.Data)
		}
	}
	get := func() hold {
		t.Helper()
		a := b(t, o.Key, o.Pass, "listbooking", map[string]any{"bookingId": bk.BookingID})
		var l struct {
			ListBooking []booked `json:"listBooking"`
		}
		if err := json.Unmarshal(a.Data, &l); err != nil || len(l.ListBooking) != 1 || l.ListBooking[0].DepositHold == nil {
			t.Fatalf("listbooking: %s", a.Data)
		}
		return *l.ListBooking[0].DepositHold
	}
	// Held by the money worker (every VROS_BOOKING_MONEY_INTERVAL).
	eventually.Holds(t, "the deposit held", 2*time.Minute, func() bool { return get().Status == "held" })

	s := signIn(t, o.Email, o.Password)
	path := fmt.Sprintf("/panel/bookings/%d", bk.BookingID)
	_, page := s.get(t, path)
	for _, want := range []string{`<td class="deposit-status"><strong>held</strong>`, `id="capture-deposit"`, `id="release-deposit"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the booking page lacks %s", want)
		}
	}
	code, page := s.post(t, path+"/deposit/capture", s.form("captureAmount", "300.01", "captureReason", "Broken lamp"))
	if code != http.StatusBadRequest || !strings.Contains(page, `id="f-captureAmount-err"`) {
		t.Fatalf("a capture above the hold: HTTP %d %s", code, regexp.MustCompile(`(?s)<main.*</main>`).FindString(page))
	}
	if code, page = s.post(t, path+"/deposit/capture", s.form("captureAmount", "120.50", "captureReason", "Broken lamp")); code != http.StatusSeeOther {
		t.Fatalf("capture: HTTP %d %s", code, regexp.MustCompile(`(?s)<main.*</main>`).FindString(page))
	}
	if h := get(); h.Status != "captured" || h.CapturedAmount.String() != "120.50" {
		t.Errorf("after the capture: %+v", h)
	}
	_, page = s.get(t, path)
	for _, want := range []string{`<td class="deposit-status"><strong>captured</strong>`, `120.50 · Broken lamp`, `Deposit captured`} {
		if !strings.Contains(page, want) {
			t.Errorf("the booking page after the capture lacks %s", want)
		}
	}
}
