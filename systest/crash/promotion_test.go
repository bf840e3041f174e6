package crash

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/vros/vros/systest/apitest"
	"github.com/vros/vros/testkit/eventually"
)

// uses lists who holds each use of a promotion code in the ledger (use n → owner).
func uses(t *testing.T, acc account, code string, limit int) map[int]string {
	t.Helper()
	out := map[int]string{}
	for n := 1; n <= limit; n++ {
		var doc bson.M
		err := mongoDB.Database("vros_booking").Collection("nights").FindOne(context.Background(),
			bson.D{{Key: "_id", Value: fmt.Sprintf("%s:0:promotion:%s:%d", acc.AccountID, code, n)}}).Decode(&doc)
		if err == nil {
			out[n], _ = doc["owner"].(string)
		}
	}
	return out
}

// TestPromotionUseOfAStoppedCreate: two creates take the two uses of a promotion code and
// stop there, as if booking-svc died: one never retried, one with an Idempotency-Key. While
// they hold the uses the code is used up. After booking-svc restarts, the retry of the keyed
// one settles its dead attempt (its use given back) and books again with the code, the
// janitor gives back the other's use, and a new booking can take it: afterwards the uses are
// held by exactly the reserved bookings that use the code.
func TestPromotionUseOfAStoppedCreate(t *testing.T) {
	ctx := context.Background()
	acc := newAccount(t)
	pid := bookable(t, acc, "CRP")
	if r := acc.a(t, "property-promotion", obj{"action": "create", "promotion": obj{"code": "CRASH20", "name": "Crash twenty",
		"type": "percent", "amount": "20", "start_date": day(0), "usage_limit": 2}}); r.Code/100 != 2 {
		t.Fatalf("promotion: HTTP %d %s", r.Code, r.Body)
	}
	withCode := func(from int, last string) obj {
		g := guest(pid, day(from), day(from+2), last)
		g["promotionCode"] = "CRASH20"
		return g
	}
	eventually.Holds(t, "booking-svc sees the promotion", 15*time.Second, func() bool {
		r := acc.b(t, "getinfo", obj{"propertyId": pid, "numberofadults": 2, "checkin": day(100), "checkout": day(102), "promotionCode": "CRASH20"})
		return r.Code == http.StatusOK && strings.Contains(string(r.Body), `"promotion_code":"CRASH20"`)
	})

	stop := func(key string, body obj) interrupted {
		t.Helper()
		r := interrupted{step: "create:promotion", key: key, body: apitest.JSON(body), sent: time.Now()}
		faults.Arm(acc.AccountID, r.step)
		answered := make(chan string, 1)
		go func() {
			res, err := acc.direct(&http.Client{Timeout: 30 * time.Second}, "create", key, r.body)
			answered <- fmt.Sprintf("HTTP %d %s (%v)", res.Code, res.Body, err)
		}()
		select {
		case got := <-faults.Frozen:
			if got != r.step {
				t.Fatalf("stopped at %s", got)
			}
		case a := <-answered:
			t.Fatalf("create:promotion was never reached: %s", a)
		case <-time.After(10 * time.Second):
			t.Fatal("create:promotion was never reached")
		}
		return r
	}
	stop("", withCode(10, "Abandoned"))
	keyed := stop("crash-promotion-keyed", withCode(20, "Keyed"))
	if u := uses(t, acc, "CRASH20", 2); len(u) != 2 {
		t.Fatalf("the stopped creates hold %v", u)
	}
	r := acc.b(t, "create", withCode(30, "Refused"))
	var a bAnswer
	r.decode(t, &a)
	if a.Status != 4 || !strings.Contains(a.Message, "used up") {
		t.Fatalf("a third use while two are held: %s", r.Body)
	}

	faults.Kill()
	st.StopBooking()
	if err := st.StartBooking(ctx); err != nil {
		t.Fatal(err)
	}

	// The keyed create's retry settles its dead attempt and books again, with the code.
	res, _ := resolve(t, acc, keyed)
	var again struct {
		BookingID     int64  `json:"bookingId"`
		PromotionCode string `json:"promotionCode"`
	}
	res.ok(t, &again)
	if again.PromotionCode != "CRASH20" {
		t.Fatalf("the retried create: %s", res.Body)
	}
	// The janitor gives back the abandoned create's use; then one more booking gets it.
	eventually.Holds(t, "the abandoned create's use given back", janitorLease+5*time.Second, func() bool {
		return len(uses(t, acc, "CRASH20", 2)) == 1
	})
	var third struct {
		BookingID int64 `json:"bookingId"`
	}
	acc.b(t, "create", withCode(40, "Third")).ok(t, &third)

	docs := bookingsOf(t, acc)
	want := map[string]bool{}
	for id, b := range docs {
		if b["status"] == "reserved" && b["promotion_code"] == "CRASH20" {
			want[fmt.Sprintf("booking:%d", id)] = true
		}
	}
	got := uses(t, acc, "CRASH20", 2)
	if len(got) != 2 || len(want) != 2 {
		t.Fatalf("uses %v, reserved bookings with the code %v", got, want)
	}
	for _, o := range got {
		if !want[o] {
			t.Fatalf("use held by %s, not a reserved booking with the code (%v)", o, want)
		}
	}
	if !want[fmt.Sprintf("booking:%d", again.BookingID)] || !want[fmt.Sprintf("booking:%d", third.BookingID)] {
		t.Fatalf("uses %v, want the retried and the third booking", got)
	}
}
