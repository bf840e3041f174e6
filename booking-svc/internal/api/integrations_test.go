package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vros/vros/booking-svc/internal/booking"
)

// listed is the booking object listbooking (interface B) answers for booking id.
func (s *server) listed(t *testing.T, account string, id int64) map[string]any {
	t.Helper()
	code, body := s.do(t, account, http.MethodPost, "/internal/b/listbooking", fmt.Sprintf(`{"bookingId":%d}`, id))
	if code != http.StatusOK {
		t.Fatalf("listbooking: %d %s", code, body)
	}
	var out struct {
		Data struct {
			List []map[string]any `json:"listBooking"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &out); err != nil || len(out.Data.List) != 1 {
		t.Fatalf("listbooking: %v %s", err, body)
	}
	return out.Data.List[0]
}

// TestHookBooking: /internal/hooks/booking/{id} answers interface B's booking object without
// the card, only to the booking's own account (also under concurrent callers of two
// accounts), and names a bad id.
func TestHookBooking(t *testing.T) {
	s := newServer(t)
	acctA, acctB := newAccount("hooka"), newAccount("hookb")
	g := booking.Guest{FirstName: "Hookfirst", LastName: "Hooklast", Email: "hook@example.com"}
	a := s.book(t, acctA, 11, "2027-03-01", 3, g, 0)
	b := s.book(t, acctB, 12, "2027-03-01", 2, g, 0)

	get := func(account string, id int64) (int, map[string]any, string) {
		code, body := s.do(t, account, http.MethodGet, "/internal/hooks/booking/"+strconv.FormatInt(id, 10), "")
		var out map[string]any
		_ = json.Unmarshal(body, &out)
		return code, out, string(body)
	}
	for _, tc := range []struct {
		account string
		b       booking.Booking
	}{{acctA, a}, {acctB, b}} {
		code, out, raw := get(tc.account, tc.b.BookingID)
		if code != http.StatusOK {
			t.Fatalf("hook booking %d: %d %s", tc.b.BookingID, code, raw)
		}
		if len(out) != 1 {
			t.Fatalf("answer has keys other than booking: %s", raw)
		}
		hook, _ := out["booking"].(map[string]any)
		want := s.listed(t, tc.account, tc.b.BookingID)
		if want["creditCard"] == nil {
			t.Fatalf("the fixture has no card shown by listbooking: %v", want)
		}
		delete(want, "creditCard")
		if !reflect.DeepEqual(hook, want) {
			t.Errorf("hook booking differs from listbooking minus the card:\nhook %v\nwant %v", hook, want)
		}
		for _, leak := range []string{"4242", "creditCard", "visa", "12/2030", "sealed", "card"} {
			if strings.Contains(raw, leak) {
				t.Errorf("answer holds %q: %s", leak, raw)
			}
		}
	}

	// Another account's booking, an unknown id and bad ids.
	for _, tc := range []struct {
		account string
		path    string
		code    int
		field   string
	}{
		{acctB, strconv.FormatInt(a.BookingID, 10), http.StatusNotFound, ""},
		{acctA, strconv.FormatInt(b.BookingID, 10), http.StatusNotFound, ""},
		{acctA, "999999999", http.StatusNotFound, ""},
		{acctA, "0", http.StatusBadRequest, "id"},
		{acctA, "x1", http.StatusBadRequest, "id"},
	} {
		code, body := s.do(t, tc.account, http.MethodGet, "/internal/hooks/booking/"+tc.path, "")
		if code != tc.code || (tc.field != "" && !strings.Contains(string(body), `"`+tc.field+`"`)) {
			t.Errorf("%s as %s: %d %s, want %d naming %q", tc.path, tc.account, code, body, tc.code, tc.field)
		}
		if code == http.StatusNotFound && strings.Contains(string(body), "Hookfirst") {
			t.Errorf("404 shows the booking: %s", body)
		}
	}

	// Eight concurrent callers of two accounts, each asking for both bookings.
	var wg sync.WaitGroup
	errs := make(chan string, 8*20)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine, theirs, acct := a, b, acctA
			if i%2 == 1 {
				mine, theirs, acct = b, a, acctB
			}
			for range 10 {
				if code, out, raw := get(acct, mine.BookingID); code != http.StatusOK ||
					out["booking"].(map[string]any)["bookingId"] != float64(mine.BookingID) {
					errs <- fmt.Sprintf("own booking: %d %s", code, raw)
				}
				if code, _, raw := get(acct, theirs.BookingID); code != http.StatusNotFound {
					errs <- fmt.Sprintf("other account's booking: %d %s", code, raw)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestICalProperty: /internal/ical/property finds a property by internal code in the view,
// only the account's own.
func TestICalProperty(t *testing.T) {
	s := newServer(t)
	acctA, acctB := newAccount("icpa"), newAccount("icpb")
	priceable(t, s, acctA, 41)
	for _, tc := range []struct {
		account, query string
		code           int
		want           string
	}{
		{acctA, "?internal_code=P41", http.StatusOK, `{"property_id":41}`},
		{acctB, "?internal_code=P41", http.StatusNotFound, `"P41`},
		{acctA, "?internal_code=P42", http.StatusNotFound, `"P42`},
		{acctA, "", http.StatusBadRequest, `"internal_code"`},
	} {
		code, body := s.do(t, tc.account, http.MethodGet, "/internal/ical/property"+tc.query, "")
		if code != tc.code || !strings.Contains(string(body), tc.want) {
			t.Errorf("%s as %s: %d %s, want %d with %s", tc.query, tc.account, code, body, tc.code, tc.want)
		}
	}
}

// TestICalSyncRoute: /internal/ical/sync answers the feed's blocks and conflicts; every rule
// of its body names its field and changes nothing; an unknown property is 404; an imported
// block cannot be deleted through property-blockdate.
func TestICalSyncRoute(t *testing.T) {
	s := newServer(t)
	acct := newAccount("icsync")
	priceable(t, s, acct, 51)
	b := s.book(t, acct, 51, "2027-05-12", 1, booking.Guest{FirstName: "Sync", LastName: "Guest"}, 0)
	code, body := s.do(t, acct, http.MethodPost, "/internal/ical/sync", `{"property_id":51,"feed_id":5,"name":"Airbnb",
		"events":[{"uid":"e1@airbnb","start":"2027-05-10","end":"2027-05-14"},{"uid":"e2@airbnb","start":"2027-06-01","end":"2027-06-02"}]}`)
	if code != http.StatusOK {
		t.Fatalf("sync: %d %s", code, body)
	}
	var res struct {
		Blocks []struct {
			UID       string `json:"uid"`
			BlockID   int64  `json:"block_id"`
			StartDate string `json:"start_date"`
			EndDate   string `json:"end_date"`
		} `json:"blocks"`
		NightsBlocked int `json:"nights_blocked"`
		Conflicts     []struct {
			UID        string  `json:"uid"`
			StartDate  string  `json:"start_date"`
			EndDate    string  `json:"end_date"`
			BookingIDs []int64 `json:"booking_ids"`
		} `json:"conflicts"`
	}
	if err := json.Unmarshal(body, &res); err != nil {
		t.Fatal(err)
	}
	wantBody := fmt.Sprintf(`{"blocks":[{"uid":"e1@airbnb","block_id":%d,"start_date":"2027-05-10","end_date":"2027-05-11"},`+
		`{"uid":"e1@airbnb","block_id":%d,"start_date":"2027-05-13","end_date":"2027-05-13"},`+
		`{"uid":"e2@airbnb","block_id":%d,"start_date":"2027-06-01","end_date":"2027-06-01"}],"blocks_omitted":0,"nights_blocked":4,`+
		`"conflicts":[{"uid":"e1@airbnb","start_date":"2027-05-12","end_date":"2027-05-12","booking_ids":[%d]}],"conflicts_omitted":0,"complete":true}`,
		res.Blocks[0].BlockID, res.Blocks[1].BlockID, res.Blocks[2].BlockID, b.BookingID)
	if string(body) != wantBody {
		t.Errorf("answer\n%s\nwant\n%s", body, wantBody)
	}
	t.Logf("answer: %s", body)

	// The imported block's memo names the feed; property-blockdate refuses to delete it.
	blk, err := s.st.Block(context.Background(), acct, res.Blocks[0].BlockID)
	if err != nil || blk.Memo != "Imported from Airbnb" || blk.FeedID != 5 || blk.UID != "e1@airbnb" {
		t.Errorf("stored block %+v (%v)", blk, err)
	}
	code, body = s.do(t, acct, http.MethodPost, "/internal/a/property-blockdate", fmt.Sprintf(`{"action":"delete","block":{"block_id":%d}}`, blk.BlockID))
	wantMsg := fmt.Sprintf("block %d was imported from an iCal feed; change or remove the feed instead", blk.BlockID)
	if code != http.StatusConflict || !strings.Contains(string(body), `"conflict"`) || !strings.Contains(string(body), wantMsg) {
		t.Errorf("delete of an imported block: %d %s", code, body)
	}

	long := strings.Repeat("x", 256)
	many := make([]string, 5001)
	for i := range many {
		many[i] = `{"uid":"u","start":"2027-01-01","end":"2027-01-02"}`
	}
	long11 := make([]string, 5000) // 55 000 nights in all
	for i := range long11 {
		long11[i] = fmt.Sprintf(`{"uid":"u%d","start":"2027-01-01","end":"2027-01-12"}`, i)
	}
	for _, tc := range []struct {
		name, body, field, msg string
		code                   int
	}{
		{"not json", `{`, "body", "must be valid JSON", 400},
		{"no property", `{"feed_id":5,"events":[]}`, "property_id", "is required", 400},
		{"zero feed", `{"property_id":51,"feed_id":0,"events":[]}`, "feed_id", "", 400},
		{"no events", `{"property_id":51,"feed_id":5}`, "events", "is required", 400},
		{"long name", `{"property_id":51,"feed_id":5,"name":"` + strings.Repeat("n", 101) + `","events":[]}`, "name", "", 400},
		{"end before start", `{"property_id":51,"feed_id":5,"events":[{"uid":"a","start":"2027-01-05","end":"2027-01-05"}]}`, "events[0].end", "must be after start", 400},
		{"too long", `{"property_id":51,"feed_id":5,"events":[{"uid":"a","start":"2027-01-01","end":"2029-01-02"}]}`, "events[0].end", "must be at most 731 nights after start", 400},
		{"unreal date", `{"property_id":51,"feed_id":5,"events":[{"uid":"a","start":"2027-02-30","end":"2027-03-02"}]}`, "events[0].start", "", 400},
		{"empty uid", `{"property_id":51,"feed_id":5,"events":[{"uid":"","start":"2027-01-01","end":"2027-01-02"}]}`, "events[0].uid", "", 400},
		{"long uid", `{"property_id":51,"feed_id":5,"events":[{"uid":"` + long + `","start":"2027-01-01","end":"2027-01-02"}]}`, "events[0].uid", "", 400},
		{"5001 events", `{"property_id":51,"feed_id":5,"events":[` + strings.Join(many, ",") + `]}`, "events", "must have at most 5000 items", 400},
		{"55000 nights", `{"property_id":51,"feed_id":5,"events":[` + strings.Join(long11, ",") + `]}`, "events", "must hold at most 50000 nights in all", 400},
		{"unknown property", `{"property_id":52,"feed_id":5,"events":[]}`, "", "property 52 does not exist", 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := s.do(t, acct, http.MethodPost, "/internal/ical/sync", tc.body)
			if code != tc.code || !strings.Contains(string(body), `"`+tc.field+`"`) && tc.field != "" || !strings.Contains(string(body), tc.msg) {
				t.Errorf("%d %s, want %d naming %q with %q", code, body, tc.code, tc.field, tc.msg)
			}
		})
	}
	// Nothing changed by the refused bodies: the feed's blocks are the same.
	blocks, err := s.st.FeedBlocks(context.Background(), acct, 51, 5)
	if err != nil || len(blocks) != 3 {
		t.Errorf("feed blocks after refused bodies: %d (%v)", len(blocks), err)
	}
	// An empty list removes every block of the feed.
	if code, body := s.do(t, acct, http.MethodPost, "/internal/ical/sync", `{"property_id":51,"feed_id":5,"events":[]}`); code != 200 ||
		string(body) != `{"blocks":[],"blocks_omitted":0,"nights_blocked":0,"conflicts":[],"conflicts_omitted":0,"complete":true}` {
		t.Errorf("empty events: %d %s", code, body)
	}
}

// published is the data of the newest event on booking id's key, as the relay published it.
func (s *server) published(t *testing.T, account string, id int64, version int64) contractBooking {
	t.Helper()
	key := account + ":booking:" + strconv.FormatInt(id, 10)
	var out contractBooking
	waitFor(t, "booking version "+strconv.FormatInt(version, 10)+" published", func() bool {
		m, ok := s.pub.latest()[key]
		if !ok {
			return false
		}
		var ce struct {
			Data contractBooking `json:"data"`
		}
		if err := json.Unmarshal(m.Value, &ce); err != nil {
			t.Fatal(err)
		}
		out = ce.Data
		return out.Version == version
	})
	return out
}

type contractBooking struct {
	Version  int64 `json:"version"`
	Payments []struct {
		PaymentID int64  `json:"payment_id"`
		Amount    string `json:"amount"`
	} `json:"payments"`
	ArrivalFormCompleted bool `json:"arrival_form_completed"`
}

// TestPaymentsAndArrivalArePublished: adding and removing a payment and completing the arrival
// form each publish a new version of the booking whose payments and arrival_form_completed
// say so (integration-svc tells payment.added/removed and arrival_form.completed from them).
func TestPaymentsAndArrivalArePublished(t *testing.T) {
	s := newServer(t)
	acct := newAccount("pubpay")
	priceable(t, s, acct, 61)
	b := s.book(t, acct, 61, "2027-07-01", 2, booking.Guest{FirstName: "Pay", LastName: "Guest"}, 0)
	if got := s.published(t, acct, b.BookingID, b.Version); len(got.Payments) != 1 || got.ArrivalFormCompleted {
		t.Fatalf("reserved: %+v", got)
	}
	post := func(action, body string) []byte {
		code, out := s.do(t, acct, http.MethodPost, "/internal/b/"+action, body)
		if code != http.StatusOK || !strings.Contains(string(out), `"status":0`) {
			t.Fatalf("%s: %d %s", action, code, out)
		}
		return out
	}
	out := post("addbookingpayment", fmt.Sprintf(`{"action":"addbookingpayment","bookingId":%d,"amount":"50.00","time":"2026-11-01"}`, b.BookingID))
	var added struct {
		Data struct {
			PaymentID json.Number `json:"paymentId"`
		} `json:"data"`
	}
	_ = json.Unmarshal(out, &added)
	got := s.published(t, acct, b.BookingID, b.Version+1)
	if len(got.Payments) != 2 || got.Payments[1].Amount != "50.00" || strconv.FormatInt(got.Payments[1].PaymentID, 10) != added.Data.PaymentID.String() {
		t.Errorf("after addbookingpayment: %+v (added %s)", got, out)
	}
	post("removebookingpayment", fmt.Sprintf(`{"action":"removebookingpayment","paymentId":"%s"}`, added.Data.PaymentID))
	if got := s.published(t, acct, b.BookingID, b.Version+2); len(got.Payments) != 1 {
		t.Errorf("after removebookingpayment: %+v", got)
	}
	post("updatearrivalform", fmt.Sprintf(`{"action":"updatearrivalform","bookingId":%d,"arriveBy":"car","isCompleted":true}`, b.BookingID))
	if got := s.published(t, acct, b.BookingID, b.Version+3); !got.ArrivalFormCompleted || len(got.Payments) != 1 {
		t.Errorf("after updatearrivalform: %+v", got)
	}
}

// TestHookBookingStatuses: a cancelled booking is answered (a booking.cancelled webhook shows
// it); an attempt that never became a booking (pending, failed) is not.
func TestHookBookingStatuses(t *testing.T) {
	s := newServer(t)
	ctx := context.Background()
	acct := newAccount("hookst")
	b := s.book(t, acct, 71, "2027-08-01", 2, booking.Guest{FirstName: "St"}, 0)
	if _, err := s.st.Update(ctx, acct, b.BookingID, booking.Cancelled, func(x *booking.Booking) error {
		x.Status = booking.StatusCancelled
		now := time.Now()
		x.CancelledAt = &now
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	code, body := s.do(t, acct, http.MethodGet, "/internal/hooks/booking/"+strconv.FormatInt(b.BookingID, 10), "")
	if code != http.StatusOK || !strings.Contains(string(body), `"status":"cancelled"`) {
		t.Errorf("cancelled booking: %d %s", code, body)
	}
	pending, _ := s.st.NextBookingID(ctx)
	if err := s.st.InsertPending(ctx, booking.Booking{AccountID: acct, BookingID: pending, PropertyID: 71, Status: booking.StatusPending,
		Nights: []string{"2027-09-01"}, CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if code, body := s.do(t, acct, http.MethodGet, "/internal/hooks/booking/"+strconv.FormatInt(pending, 10), ""); code != http.StatusNotFound {
		t.Errorf("pending attempt: %d %s", code, body)
	}
	if err := s.st.MarkFailed(ctx, acct, pending); err != nil {
		t.Fatal(err)
	}
	if code, body := s.do(t, acct, http.MethodGet, "/internal/hooks/booking/"+strconv.FormatInt(pending, 10), ""); code != http.StatusNotFound {
		t.Errorf("failed attempt: %d %s", code, body)
	}
}

// syncAnswer is the answer of /internal/ical/sync.
type syncAnswer struct {
	Blocks []struct {
		UID       string `json:"uid"`
		BlockID   int64  `json:"block_id"`
		StartDate string `json:"start_date"`
		EndDate   string `json:"end_date"`
	} `json:"blocks"`
	NightsBlocked    int               `json:"nights_blocked"`
	Conflicts        []json.RawMessage `json:"conflicts"`
	ConflictsOmitted *int              `json:"conflicts_omitted"`
	Complete         *bool             `json:"complete"`
}

// TestICalSyncIncompleteIs200: a sync that reaches its deadline before the feed's blocks are
// all made answers 200 with "complete": false and the blocks made so far; the same request
// sent again goes on, until an answer says "complete": true. The service's clock stands still
// but for the blocks written, each of which moves it on by a 200th of the deadline: a request
// has time for about 160 of the 600 blocks on any machine (the deadline itself, a minute of
// real time, only guards against a hang).
func TestICalSyncIncompleteIs200(t *testing.T) {
	s := newServer(t)
	s.feeds.Deadline = time.Minute
	acct := newAccount("icinc")
	var mu sync.Mutex
	now := time.Now()
	s.feeds.SetClock(func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return now
	})
	s.feeds.Crash = func(step, account string) {
		if account == acct && step == "icalsync:create:written" {
			mu.Lock()
			now = now.Add(s.feeds.Deadline / 200)
			mu.Unlock()
		}
	}
	priceable(t, s, acct, 53)
	var evs []string
	for i := range 600 {
		d := time.Date(2028, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, 2*i)
		evs = append(evs, fmt.Sprintf(`{"uid":"u%d","start":"%s","end":"%s"}`, i, d.Format(time.DateOnly), d.AddDate(0, 0, 1).Format(time.DateOnly)))
	}
	body := `{"property_id":53,"feed_id":6,"name":"Big","events":[` + strings.Join(evs, ",") + `]}`
	incomplete, last := 0, 0
	for try := 0; ; try++ {
		if try > 30 {
			t.Fatal("the sync never completed")
		}
		code, out := s.do(t, acct, http.MethodPost, "/internal/ical/sync", body)
		var res syncAnswer
		if code != http.StatusOK || json.Unmarshal(out, &res) != nil || res.Complete == nil || res.Blocks == nil || res.Conflicts == nil {
			t.Fatalf("try %d: %d %.300s", try, code, out)
		}
		if res.NightsBlocked != len(res.Blocks) {
			t.Errorf("try %d: %d blocks, %d nights", try, len(res.Blocks), res.NightsBlocked)
		}
		if !*res.Complete {
			if len(res.Blocks) <= last {
				t.Errorf("try %d stopped with %d blocks, the one before with %d: it did not go on", try, len(res.Blocks), last)
			}
			last = len(res.Blocks)
			incomplete++
			continue
		}
		if len(res.Blocks) != 600 {
			t.Errorf("complete with %d blocks", len(res.Blocks))
		}
		break
	}
	if incomplete < 3 {
		t.Errorf("the sync took %d incomplete answers and a complete one, want at least 3 incomplete (about 160 blocks of 600 each)", incomplete)
	}
}

// TestICalFinalSyncAndTombstone: a final sync removes the feed's blocks (their nights free)
// and tombstones the feed id for the account; any later sync of it answers 410 and changes
// nothing, a final one again answers 200; bodies breaking the rules name their field; another
// feed, and the same feed id in another account, are untouched; an owner may delete an
// imported block once its feed is tombstoned.
func TestICalFinalSyncAndTombstone(t *testing.T) {
	s := newServer(t)
	ctx := context.Background()
	acct, other := newAccount("icfinal"), newAccount("icfinal2")
	priceable(t, s, acct, 54)
	priceable(t, s, other, 54)
	sync := func(account, body string) (int, string) {
		code, out := s.do(t, account, http.MethodPost, "/internal/ical/sync", body)
		return code, string(out)
	}
	const events = `"events":[{"uid":"a","start":"2027-05-10","end":"2027-05-14"}]`
	const events8 = `"events":[{"uid":"b","start":"2027-06-10","end":"2027-06-14"}]`
	feedBody := func(feed int) string {
		if feed == 8 {
			return `{"property_id":54,"feed_id":8,` + events8 + `}`
		}
		return fmt.Sprintf(`{"property_id":54,"feed_id":%d,%s}`, feed, events)
	}
	for _, a := range []string{acct, other} {
		for _, feed := range []int{7, 8} {
			if code, out := sync(a, feedBody(feed)); code != 200 {
				t.Fatalf("sync: %d %s", code, out)
			}
		}
	}
	blocks := func(account string, feed int64) int {
		b, err := s.st.FeedBlocks(ctx, account, 54, feed)
		if err != nil {
			t.Fatal(err)
		}
		return len(b)
	}
	// Refused bodies change nothing.
	for _, tc := range []struct{ body, field, msg string }{
		{`{"property_id":54,"feed_id":7,"final":true,` + events + `}`, "events", "must be empty when final is true"},
		{`{"property_id":54,"feed_id":7,"final":"yes","events":[]}`, "final", "must be a boolean"},
	} {
		if code, out := sync(acct, tc.body); code != 400 || !strings.Contains(out, `"`+tc.field+`"`) || !strings.Contains(out, tc.msg) {
			t.Errorf("%s: %d %s, want 400 naming %s", tc.body, code, out, tc.field)
		}
	}
	if blocks(acct, 7) != 1 {
		t.Fatal("a refused body changed the feed's blocks")
	}
	const empty = `{"blocks":[],"blocks_omitted":0,"nights_blocked":0,"conflicts":[],"conflicts_omitted":0,"complete":true}`
	// The final sync (events absent, or []), twice: 200 both times.
	for _, body := range []string{`{"property_id":54,"feed_id":7,"final":true}`, `{"property_id":54,"feed_id":7,"final":true,"events":[]}`} {
		if code, out := sync(acct, body); code != 200 || out != empty {
			t.Errorf("final sync %s: %d %s", body, code, out)
		}
	}
	if blocks(acct, 7) != 0 || blocks(acct, 8) != 1 {
		t.Error("the final sync left blocks, or took another feed's")
	}
	if owners, err := s.led.Owners(ctx, acct, 54, "2027-05-01", "2027-05-31"); err != nil || len(owners) != 0 {
		t.Errorf("after the final sync the ledger holds %v (%v)", owners, err)
	}
	// Any later sync of the feed: 410, nothing created.
	for _, body := range []string{`{"property_id":54,"feed_id":7,` + events + `}`, `{"property_id":54,"feed_id":7,"events":[]}`} {
		code, out := sync(acct, body)
		if code != http.StatusGone || !strings.Contains(out, `"gone"`) || !strings.Contains(out, "feed 7") {
			t.Errorf("sync of a tombstoned feed: %d %s", code, out)
		}
	}
	if blocks(acct, 7) != 0 {
		t.Error("a sync of the tombstoned feed created blocks")
	}
	// Feed 8 of the account, and feed 7 of the other account, go on.
	for _, a := range []string{acct, other} {
		for _, feed := range []int{7, 8} {
			if a == acct && feed == 7 {
				continue
			}
			if code, out := sync(a, feedBody(feed)); code != 200 || !strings.Contains(out, `"complete":true`) || !strings.Contains(out, `"nights_blocked":4`) {
				t.Errorf("%s feed %d: %d %s", a, feed, code, out)
			}
		}
	}
	// An owner deletes an imported block of a tombstoned feed (one left behind), not one of a
	// live feed.
	left, err := s.st.FeedBlocks(ctx, other, 54, 8)
	if err != nil || len(left) != 1 {
		t.Fatalf("feed 8 of the other account: %v %v", left, err)
	}
	del := func() (int, string) {
		code, out := s.do(t, other, http.MethodPost, "/internal/a/property-blockdate", fmt.Sprintf(`{"action":"delete","block":{"block_id":%d}}`, left[0].BlockID))
		return code, string(out)
	}
	if code, out := del(); code != http.StatusConflict {
		t.Errorf("delete of a live feed's block: %d %s", code, out)
	}
	if err := s.st.BuryFeed(ctx, other, 8); err != nil {
		t.Fatal(err)
	}
	if code, out := del(); code != http.StatusOK {
		t.Errorf("delete of a tombstoned feed's block: %d %s", code, out)
	}
	if owners, err := s.led.Owners(ctx, other, 54, "2027-05-01", "2027-06-30"); err != nil || len(owners) != 4 {
		t.Errorf("after the owner's delete the ledger holds %v (%v), want feed 7's four nights", owners, err)
	}
}

// TestICalSyncAnswerBounded: the answer stays within its byte budget (integration-svc reads at
// most 8 MiB of it): conflicts first, then blocks, as many as fit; the rest are counted in
// conflicts_omitted and blocks_omitted, and nights_blocked still counts every block's nights.
func TestICalSyncAnswerBounded(t *testing.T) {
	defer func(old int) { maxSyncAnswer = old }(maxSyncAnswer)
	maxSyncAnswer = 6000
	s := newServer(t)
	acct := newAccount("icbig")
	priceable(t, s, acct, 55)
	s.book(t, acct, 55, "2027-03-01", 1, booking.Guest{FirstName: "Big", LastName: "Guest"}, 0)
	var evs []string
	for i := range 20 {
		uid := fmt.Sprintf("%03d", i) + strings.Repeat("<", 252) // escaped as \u003c: 6 bytes each
		d := time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, 2*i)
		evs = append(evs, fmt.Sprintf(`{"uid":"%s","start":"%s","end":"%s"}`, uid, d.Format(time.DateOnly), d.AddDate(0, 0, 1).Format(time.DateOnly)))
	}
	code, out := s.do(t, acct, http.MethodPost, "/internal/ical/sync", `{"property_id":55,"feed_id":9,"events":[`+strings.Join(evs, ",")+`]}`)
	var res struct {
		syncAnswer
		BlocksOmitted *int `json:"blocks_omitted"`
	}
	if code != http.StatusOK || json.Unmarshal(out, &res) != nil || res.ConflictsOmitted == nil || res.BlocksOmitted == nil {
		t.Fatalf("%d %.400s", code, out)
	}
	if len(out) > maxSyncAnswer+200 {
		t.Errorf("answer of %d bytes, budget %d", len(out), maxSyncAnswer)
	}
	if len(res.Conflicts) != 1 || *res.ConflictsOmitted != 0 {
		t.Errorf("%d conflicts listed, %d omitted; want the one", len(res.Conflicts), *res.ConflictsOmitted)
	}
	if len(res.Blocks) != 2 || len(res.Blocks)+*res.BlocksOmitted != 19 || res.NightsBlocked != 19 {
		t.Errorf("%d blocks listed + %d omitted, %d nights; want 19 blocks and nights", len(res.Blocks), *res.BlocksOmitted, res.NightsBlocked)
	}
}
