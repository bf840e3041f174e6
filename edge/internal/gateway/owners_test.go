package gateway_test

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"github.com/vros/vros/edge/internal/account"
)

// TestOwnerBodyLimits: /api/owner-expense carries a receipt of up to 5 MiB as base64, so it
// takes 8 MiB; the other owner resources 256 KiB. Over a limit the answer is 413 naming it,
// before the body is parsed; within it the request reaches the service.
func TestOwnerBodyLimits(t *testing.T) {
	e := startLimitedEdge(t, 0, 0, okStub())
	_, c := e.newLimitedAccount(t)
	send := func(resource string, size int) answer {
		basic := base64.StdEncoding.EncodeToString([]byte(c[account.Basic].Identifier + ":" + c[account.Basic].Secret))
		body := `{"action":"list","pad":"` + strings.Repeat("x", size) + `"}`
		return e.send(t, "", http.MethodPost, "/api/"+resource, map[string]string{"Content-Type": "application/json",
			"Authorization": "Basic " + basic, "servicekey": c[account.ServiceKey].Identifier, "servicepass": c[account.ServiceKey].Secret}, body)
	}
	for _, tt := range []struct {
		resource string
		size     int
		code     int
		message  string
	}{
		{"owner-expense", 7 << 20, 200, ""},
		{"owner-expense", 8<<20 + 1, 413, "larger than 8388608 bytes"},
		{"owner", 200 << 10, 200, ""},
		{"owner", 300 << 10, 413, "larger than 262144 bytes"},
		{"owner-agreement", 300 << 10, 413, "larger than 262144 bytes"},
		{"owner-payout", 300 << 10, 413, "larger than 262144 bytes"},
	} {
		a := send(tt.resource, tt.size)
		if a.code != tt.code || !strings.Contains(string(a.body), tt.message) {
			t.Fatalf("%s, %d bytes: HTTP %d %.300s, want %d with %q", tt.resource, tt.size, a.code, a.body, tt.code, tt.message)
		}
	}
}
