package api

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// withCommission adds the channel's commission to a revision's body.
func withCommission(body, commission string) string {
	return strings.Replace(body, `"total":`, `"commission":`+commission+`,"total":`, 1)
}

// TestChannelReservationCommission: the commission a channel manager reports is kept on the
// booking (docs/money.md: the ledger charges it to the owner), follows each revision, and is
// refused below 0 or above the total, naming the field.
func TestChannelReservationCommission(t *testing.T) {
	s := newServer(t)
	acct := newAccount("chcom")
	priceable(t, s, acct, 7)
	ctx := context.Background()
	var id int64
	for _, step := range []struct {
		name, body, want string
	}{
		{"new with a commission", withCommission(rev{status: "new", res: "C1", rev: "c1", order: 1, in: "2027-09-01", out: "2027-09-04", total: "450"}.body(), `"67.5"`), "67.50"},
		{"modified, as a number", withCommission(rev{status: "modified", res: "C1", rev: "c2", order: 2, in: "2027-09-01", out: "2027-09-04", total: "500"}.body(), `75.004`), "75.00"},
		{"modified without one", rev{status: "modified", res: "C1", rev: "c3", order: 3, in: "2027-09-01", out: "2027-09-04", total: "500"}.body(), ""},
	} {
		code, out := s.channelDo(t, acct, step.body)
		if code != http.StatusOK || out["applied"] != true {
			t.Fatalf("%s: %d %v", step.name, code, out)
		}
		id = int64(out["booking_id"].(float64))
		b, err := s.st.Booking(ctx, acct, id)
		if err != nil || b.ChannelCommission != step.want {
			t.Fatalf("%s: commission %q (%v), want %q", step.name, b.ChannelCommission, err, step.want)
		}
	}
	for _, tc := range []struct{ name, commission string }{{"negative", `"-1"`}, {"above the total", `"450.01"`}, {"not a number", `"a lot"`}} {
		body := withCommission(rev{status: "new", res: "C2", rev: "d1", order: 1, in: "2027-09-10", out: "2027-09-12", total: "450"}.body(), tc.commission)
		code, out := s.channelDo(t, acct, body)
		e, _ := out["error"].(map[string]any)
		if code != http.StatusUnprocessableEntity || e["code"] != "invalid" || e["field"] != "commission" {
			t.Errorf("%s: %d %v, want 422 on commission", tc.name, code, out)
		}
	}
}
