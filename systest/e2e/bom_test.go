package e2e

import (
	"net/http"
	"testing"
)

// TestByteOrderMarkIgnored: a leading UTF-8 byte-order mark (as some Windows tools write
// before JSON) is ignored on both interfaces, as docs/interface-a.md says.
func TestByteOrderMarkIgnored(t *testing.T) {
	t.Parallel()
	acc := newAccount(t)
	createProperty(t, acc, "BOM1")
	const bom = "\xef\xbb\xbf"
	r := do(t, http.MethodPost, "/vros/external-booking", nil, bom+`{"key":"`+acc.Key+`","pass":"`+acc.Pass+`","action":"listcountry"}`)
	r.ok(t, nil)
	r = do(t, http.MethodPost, "/api/property-tax", acc.AHeaders(), bom+`{"internal_code":"BOM1","taxes":[]}`)
	r.status(t, http.StatusOK)
}
